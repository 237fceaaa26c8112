package outbound_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/outbound"
)

func TestRefusesPrivateDestinations(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hi")) }))
	defer srv.Close()
	c := outbound.New(false)
	// Loopback by address, and by a name that resolves to it.
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		_, err := c.Get(context.Background(), u, 1<<10)
		if !errors.Is(err, outbound.ErrRefused) {
			t.Fatalf("%s: %v, want refused", u, err)
		}
		if got := outbound.Reason(err); got != "could not be downloaded: destination refused" {
			t.Fatalf("reason %q", got)
		}
	}
	for _, u := range []string{"file:///etc/passwd", "gopher://x", "ftp://example.com/a"} {
		if _, err := c.Get(context.Background(), u, 1<<10); !errors.Is(err, outbound.ErrRefused) {
			t.Fatalf("%s: %v", u, err)
		}
	}
	// Allowed when configured.
	body, err := outbound.New(true).Get(context.Background(), srv.URL, 1<<10)
	if err != nil || string(body) != "hi" {
		t.Fatalf("allowPrivate: %q %v", body, err)
	}
}

func TestRedirectToPrivateAddressIsRefused(t *testing.T) {
	// The public-looking first hop cannot be tested without a public host;
	// instead check the dial guard on each address class directly.
	for addr, public := range map[string]bool{
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "0.0.0.0": false, "::1": false, "fe80::1": false, "fd00::1": false,
		"::ffff:127.0.0.1": false, "100.64.0.1": false, "93.184.216.34": true, "2606:4700::1111": true,
		"::7f00:1": false, "2002:c0a8:101::1": false, "64:ff9b::a00:1": false, "64:ff9b:1::a00:1": false,
		"fec0::1": false, "192.0.2.1": false, "198.51.100.7": false, "203.0.113.9": false, "2001:db8::1": false,
		"3fff::1": false, "198.18.0.1": false, "2001:2::1": false, "2001:0:4136:e378::1": false, "100::1": false,
		"8.8.8.8": true, "2a00:1450:4001::200e": true,
	} {
		if got := outbound.Public(netip.MustParseAddr(addr)); got != public {
			t.Errorf("Public(%s) = %v", addr, got)
		}
	}
}

func TestSizeCapAndRedirectLimit(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 5000)) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/missing", http.NotFound)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := outbound.New(true)
	if _, err := c.Get(context.Background(), srv.URL+"/big", 1000); !errors.Is(err, outbound.ErrTooLarge) {
		t.Fatalf("size cap: %v", err)
	}
	if _, err := c.Get(context.Background(), srv.URL+"/loop", 1000); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("redirect loop: %v", err)
	}
	if _, err := c.Get(context.Background(), srv.URL+"/missing", 1000); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("404: %v", err)
	}
}

func TestSlowServerCostsAtMostTheTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s timeout")
	}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, err := outbound.New(true).Get(context.Background(), srv.URL, 1000)
	if err == nil || time.Since(start) > outbound.TotalTimeout+2*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	if got := outbound.Reason(err); got != "could not be downloaded: timed out" {
		t.Fatalf("reason %q", got)
	}
}

func TestRefusesNamesEveryLiteralItWouldNotDial(t *testing.T) {
	strict, lax := outbound.New(false), outbound.New(true)
	for u, refused := range map[string]bool{
		"https://[2002:c0a8:101::1]/hook": true, "http://10.0.0.1:8080/x": true, "https://localhost/x": true,
		"https://api.localhost./x": true, "http://[::1]/": true, "https://example.com/hook": false,
		"https://93.184.216.34/hook": false, "not a url at all": false,
	} {
		if got := strict.Refuses(u); got != refused {
			t.Errorf("Refuses(%s) = %v", u, got)
		}
		if lax.Refuses(u) {
			t.Errorf("with private destinations allowed, Refuses(%s)", u)
		}
	}
}
