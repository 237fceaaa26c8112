package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/store"
)

func redirect(path string) map[string]any {
	return map[string]any{"redirect": map[string]any{"path": path, "target": "/pages/new"}}
}

// redirectsAt counts the redirects from path.
func redirectsAt(t *testing.T, e *apitest.Env, path string) int {
	t.Helper()
	return len(e.Do("GET", "/web/redirects.json?path="+path, nil).Expect(t, 200).List(t, "redirects"))
}

func TestIdempotencyKeyReplaysTheFirstAnswer(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		first := e.DoKeyed("key-1", "POST", "/web/redirects.json", redirect("/keyed")).Expect(t, 201)
		if first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatal("a first answer is marked replayed")
		}
		again := e.DoKeyed("key-1", "POST", "/web/redirects.json", redirect("/keyed")).Expect(t, 201)
		if !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" ||
			again.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
			t.Fatalf("repeat answered %s %q\n%s, want the first answer replayed\n%s", again.Header.Get("Idempotent-Replayed"), again.Header.Get("Content-Type"), again.Body, first.Body)
		}
		if n := redirectsAt(t, e, "/keyed"); n != 1 {
			t.Fatalf("%d redirects after a repeated create, want 1", n)
		}

		// The same key for another request is refused, naming the header.
		e.DoKeyed("key-1", "POST", "/web/redirects.json", redirect("/other")).Expect(t, 422)
		if got := string(e.DoKeyed("key-1", "PUT", "/web/redirects/1.json", redirect("/x")).Body); got != `{"errors":{"Idempotency-Key":["was already used for a different request"]}}`+"\n" {
			t.Fatalf("another request under the key: %s", got)
		}

		// A refusal is an answer too: kept and replayed.
		bad := e.DoKeyed("key-2", "POST", "/web/redirects.json", redirect("")).Expect(t, 422)
		if r := e.DoKeyed("key-2", "POST", "/web/redirects.json", redirect("")).Expect(t, 422); !bytes.Equal(r.Body, bad.Body) || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("a kept 422 answered %s", r.Body)
		}

		// Keys are per app: another app's same key is its own.
		e.SetApp(77, "other-app-token-0123456789abcdef", "write_content", "read_content")
		e.DoWith(http.Header{"X-Service-Access-Token": {"other-app-token-0123456789abcdef"}, "Idempotency-Key": {"key-1"}},
			"POST", "/web/redirects.json", redirect("/theirs")).Expect(t, 201)

		// A delete is done once; its repeat replays the 200.
		id := int64(first.Object(t, "redirect")["id"].(float64))
		path := fmt.Sprintf("/web/redirects/%d.json", id)
		e.DoKeyed("key-3", "DELETE", path, nil).Expect(t, 200)
		if r := e.DoKeyed("key-3", "DELETE", path, nil).Expect(t, 200); r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatal("a repeated delete was not replayed")
		}
		e.Do("DELETE", path, nil).Expect(t, 404) // without the key, as before
	}, api.Redirects)
}

func TestIdempotencyKeyIsChecked(t *testing.T) {
	e := apitest.New(t, apitest.OpenEmbedded(t), api.Redirects)
	for name, header := range map[string][]string{
		"too long": {strings.Repeat("k", 256)},
		"twice":    {"a", "b"},
		"control":  {"a\x01b"},
	} {
		res := e.DoWith(http.Header{"X-Service-Access-Token": {apitest.DemoToken}, "Idempotency-Key": header},
			"POST", "/web/redirects.json", redirect("/checked"))
		if res.Status != 400 || !strings.Contains(string(res.Body), `"Idempotency-Key"`) {
			t.Errorf("%s: %d %s, want 400 naming Idempotency-Key", name, res.Status, res.Body)
		}
	}
	e.DoKeyed(strings.Repeat("k", 255), "POST", "/web/redirects.json", redirect("/checked")).Expect(t, 201)
	if n := redirectsAt(t, e, "/checked"); n != 1 {
		t.Fatalf("%d redirects, want 1", n)
	}
}

// Concurrent requests under one key: one does the change, the others get
// its answer or 409 while it runs; never a second change.
func TestIdempotencyKeyUnderConcurrentRepeats(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var wg sync.WaitGroup
		var fresh, replayed, inProgress atomic.Int32
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.DoKeyed("race", "POST", "/web/redirects.json", redirect("/raced"))
				switch {
				case r.Status == 201 && r.Header.Get("Idempotent-Replayed") == "":
					fresh.Add(1)
				case r.Status == 201:
					replayed.Add(1)
				case r.Status == 409:
					inProgress.Add(1)
				default:
					t.Errorf("%d %s", r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		if fresh.Load() != 1 || redirectsAt(t, e, "/raced") != 1 {
			t.Fatalf("%d fresh answers (%d replayed, %d in progress), %d redirects; want one of each",
				fresh.Load(), replayed.Load(), inProgress.Load(), redirectsAt(t, e, "/raced"))
		}
	}, api.Redirects)
}

// A store that cannot answer is 503 with Retry-After and a JSON error,
// never 500, for reads and writes, with a key or without.
func TestUnavailableStoreAnswers503(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		in := e.InjectFaults(1)
		in.Start()
		for _, r := range []*apitest.Response{
			e.Do("GET", "/web/redirects.json", nil),
			e.Do("POST", "/web/redirects.json", redirect("/down")),
			e.DoKeyed("down", "POST", "/web/redirects.json", redirect("/down")),
		} {
			if r.Status != 503 || r.Header.Get("Retry-After") != "1" ||
				string(r.Body) != `{"errors":"Service Unavailable: the shop's storage is busy; retry the request"}`+"\n" {
				t.Fatalf("%d Retry-After %q %s, want 503", r.Status, r.Header.Get("Retry-After"), r.Body)
			}
		}
		in.Stop()
		// Whatever committed before its timeout, the keyed retry is done once.
		e.DoKeyed("down", "POST", "/web/redirects.json", redirect("/down"))
		if n := redirectsAt(t, e, "/down"); n > 1 {
			t.Fatalf("%d redirects", n)
		}
	}, api.Redirects)
}

// timeoutAfterCommit commits the first transaction that carries a change
// (more than one op) and then answers as a write that timed out: whether
// it was applied is unknown to the caller.
type timeoutAfterCommit struct {
	store.Store
	done atomic.Bool
}

func (s *timeoutAfterCommit) Transact(ctx context.Context, ops ...store.Op) error {
	if err := s.Store.Transact(ctx, ops...); err != nil || len(ops) < 2 || s.done.Swap(true) {
		return err
	}
	return store.Unavailable("timeout", true, errors.New("scripted"))
}

// A change that committed but timed out is resolved in its request (tried
// again under its request token, which the store applies once): the
// request answers what happened, 201 with the record, and a keyed retry
// replays that answer; nothing is done twice, with a key or without.
func TestCommittedChangeIsResolved(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, key := range []string{"once", ""} {
			path := "/once" + key
			e.Change(func(d *platform.Deps) {
				api.UseStore(d, &timeoutAfterCommit{Store: store.Innermost(d.Store)}, d.Feed != nil)
			})
			send := func() *apitest.Response {
				if key == "" {
					return e.Do("POST", "/web/redirects.json", redirect(path))
				}
				return e.DoKeyed(key, "POST", "/web/redirects.json", redirect(path))
			}
			first := send().Expect(t, 201)
			if n := redirectsAt(t, e, path); n != 1 {
				t.Fatalf("key %q: %d redirects, want the one committed", key, n)
			}
			if key == "" {
				continue
			}
			again := send().Expect(t, 201)
			if string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("retry answered %s (replayed %q), want %s replayed", again.Body, again.Header.Get("Idempotent-Replayed"), first.Body)
			}
		}
	}, api.Redirects)
}
