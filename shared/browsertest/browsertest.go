// Package browsertest starts Debian's chromium for browser tests (the
// charge confirmation page, an app's install through Shopify's library).
package browsertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path is Debian's chromium (infra/test.sh installs it).
const Path = "/usr/bin/chromium"

// Start starts headless chromium for t with a fresh profile, opts added to
// the usual ones; it ends, and its profile is removed (at best: chromium's
// helpers may still be closing files), when t does. Its context gives up
// after 90 s.
func Start(t testing.TB, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	profile, err := os.MkdirTemp("", "chromium-profile-")
	if err != nil {
		t.Fatal(err)
	}
	all := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		// A cold chromium can take its time to say where it listens (the
		// default wait of 20 s was once too short in make test).
		chromedp.WSURLReadTimeout(90 * time.Second),
	}, opts...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), all...)
	bctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc(); os.RemoveAll(profile) })
	return ctx
}
