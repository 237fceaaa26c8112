package main

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/storeadmin/adminapi/shared/outbound"
)

// control guards every /_local route. They take no token (a test suite
// calls them with curl), so three checks keep anyone but the developer's
// own code from driving them:
//   - Host names the runner's own listener: a page on attacker.example
//     whose name resolves to 127.0.0.1 (DNS rebinding) sends its own Host;
//   - no Origin: a browser's cross-site fetch or form carries one;
//   - no outbound.MarkerHeader: the service's one outbound client puts it
//     on every request it sends, each redirect hop included, so a webhook
//     address, a trigger, a receiver's redirect or a provider callback
//     cannot make the runner call its own controls. The check is on the
//     request, not on its address, so no spelling of loopback, of the
//     port or of the path gets around it.
func control(port int, next http.Handler) http.Handler {
	p := strconv.Itoa(port)
	hosts := []string{"127.0.0.1:" + p, "localhost:" + p, "[::1]:" + p}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !containsFold(hosts, r.Host):
			localError(w, http.StatusMisdirectedRequest, `"local control endpoints answer only on the runner's own address (Host: 127.0.0.1:`+p+`)"`)
		case r.Header.Get("Origin") != "":
			localError(w, http.StatusForbidden, `"local control endpoints do not accept browser requests"`)
		case r.Header[outbound.MarkerHeader] != nil:
			localError(w, http.StatusForbidden, `"local control endpoints do not accept the service's own outbound requests"`)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func containsFold(list []string, s string) bool {
	for _, e := range list {
		if strings.EqualFold(e, s) {
			return true
		}
	}
	return false
}

// listenerPort is the TCP port ln listens on.
func listenerPort(ln net.Listener) int {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

// gate makes a reset look atomic to the API's clients: every API request
// holds it shared, a reset holds it alone, so a request sees the shop
// before the reset or after it (a seeded token is never missing), never
// the emptied store in between.
type gate struct{ mu sync.RWMutex }

func (g *gate) shared(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.RLock()
		defer g.mu.RUnlock()
		next.ServeHTTP(w, r)
	})
}

func (g *gate) exclusive(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// localError writes {"errors": <errs>} with status.
func localError(w http.ResponseWriter, status int, errs string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(`{"errors":` + errs + "}\n"))
}
