package oauth_test

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/oauth"
)

// logged is what the package's tests logged, at every level: the process's
// logger writes here (and, from level info, to stderr) from TestMain on.
var logged = &lockedBuffer{}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !bytes.Contains(p, []byte("level=DEBUG")) {
		os.Stderr.Write(p) // as the default logger would
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(logged, &slog.HandlerOptions{Level: slog.LevelDebug})))
	os.Exit(m.Run())
}

// No log line holds a token, a refresh token, a code or a session token,
// whatever the grant answers (refused replays, hostile session tokens, and
// the store failing under the requests).
func TestNothingLoggedHoldsAToken(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		code := codeOf(t, e, ask("read_content"))
		tok := post(e, grantBody(map[string]any{"code": code, "expiring": "1"})).Expect(t, 200).JSON(t)
		secrets := []string{code, tok["access_token"].(string), tok["refresh_token"].(string)}
		next := refresh(e, tok["refresh_token"].(string)).Expect(t, 200).JSON(t)
		secrets = append(secrets, next["access_token"].(string), next["refresh_token"].(string))
		e.DoAs(next["access_token"].(string), "GET", "/web/pages.json", nil).Expect(t, 200)
		refresh(e, tok["refresh_token"].(string)).Expect(t, 400)
		st := session(nil, "demo-shared-secret")
		secrets = append(secrets, st)
		tokenExchange(e, st, oauth.TokenTypeOnline, nil).Expect(t, 400)
		e.InjectFaults(0.5)
		for range 10 {
			refresh(e, next["refresh_token"].(string))
			tokenExchange(e, session(nil, secret), oauth.TokenTypeOffline, map[string]any{"expiring": "1"})
			e.DoAs(next["access_token"].(string), "GET", "/admin/oauth/access_scopes.json", nil)
		}
		out := logged.String()
		if !strings.Contains(out, "/admin/oauth/access_token") {
			t.Fatal("the requests were not logged: the check would see nothing")
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("a log line holds %s…", s[:6])
			}
		}
	}, groups...)
}
