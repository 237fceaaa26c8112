// Package outbound is the one HTTP client for every request the service
// makes to addresses its users give it: image, theme and asset downloads,
// webhook deliveries, fulfillment provider callbacks. It bounds time and
// size and refuses private destinations, checked on the address actually
// dialled (so DNS answers and redirects cannot sneak past the check).
package outbound

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Limits of every outbound request.
const (
	ConnectTimeout = 2 * time.Second
	TotalTimeout   = 10 * time.Second
	MaxRedirects   = 3
	// IdleConnsPerHost connections to one host are kept open for reuse:
	// as many as webhook deliveries have in flight to one receiver, so a
	// busy receiver is sent to over warm connections.
	IdleConnsPerHost = 8
)

// MarkerHeader is on every request the client sends, each redirect hop
// included. The local runner refuses any request carrying it on its
// control routes: whatever an app makes the service fetch (a webhook
// address, a receiver's redirect, a provider callback, a zip), and however
// that address spells loopback or the path, the request says where it
// came from, so the runner never calls its own controls.
const MarkerHeader = "X-Service-Outbound"

// ErrRefused is wrapped by errors for destinations the client will not reach.
var ErrRefused = errors.New("destination refused")

// ErrTooLarge is wrapped when a response exceeds its size cap.
var ErrTooLarge = errors.New("response too large")

// Client is safe for concurrent use; create one per process.
type Client struct {
	http         *http.Client
	allowPrivate bool
}

// New returns a client. allowPrivate (ALLOW_PRIVATE_DESTINATIONS=1) lets it
// reach loopback and private networks, for the local runner and tests.
func New(allowPrivate bool) *Client {
	c := &Client{allowPrivate: allowPrivate}
	dialer := &net.Dialer{Timeout: ConnectTimeout, Control: c.control}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would hide the destination from the check
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   ConnectTimeout * 2,
		ResponseHeaderTimeout: TotalTimeout,
		MaxIdleConnsPerHost:   IdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	c.http = &http.Client{
		Transport: transport,
		Timeout:   TotalTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return fmt.Errorf("more than %d redirects", MaxRedirects)
			}
			req.Header.Set(MarkerHeader, "1")
			return checkScheme(req.URL)
		},
	}
	return c
}

// control runs after DNS resolution, on the address about to be dialled.
func (c *Client) control(network, address string, _ syscall.RawConn) error {
	if c.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable address %q", ErrRefused, address)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("%w: %s is not a public address", ErrRefused, ap.Addr())
	}
	return nil
}

// Public reports whether an address is routable on the internet: not
// loopback, private, link-local, unspecified, multicast or otherwise reserved.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// reserved are the ranges beyond the netip predicates that no request may
// reach: special-purpose IPv4 (RFC 6890), IPv6 transition prefixes that
// embed an IPv4 address (so could reach a private one through a relay or a
// NAT64), and the documentation and benchmarking ranges.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),  // TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated)
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001::/32"),      // Teredo
	netip.MustParsePrefix("2001:2::/48"),    // benchmarking
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("2002::/16"),      // 6to4
	netip.MustParsePrefix("3fff::/20"),      // documentation
	netip.MustParsePrefix("fc00::/7"),       // unique local
	netip.MustParsePrefix("fec0::/10"),      // site-local (deprecated)
}

// MsgRefused is the 422 message of an address the client will not reach.
const MsgRefused = "must not be a private or reserved address"

// Refuses reports whether the client would refuse rawURL whatever DNS says:
// its host is an IP literal outside the public ranges, or a localhost name
// (RFC 6761), and private destinations are not allowed. Resources check
// addresses with it when they are given, so that a user hears at once
// rather than through days of failed deliveries.
func (c *Client) Refuses(rawURL string) bool {
	if c == nil || c.allowPrivate {
		return false
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false // the resource's own validation explains it
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && !Public(a)
}

func checkScheme(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q", ErrRefused, u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("%w: no host", ErrRefused)
	}
	return nil
}

// Do sends req and reads at most maxBytes of the response body. The
// response's Body is already read and closed; the body is returned.
func (c *Client) Do(req *http.Request, maxBytes int64) (*http.Response, []byte, error) {
	if err := checkScheme(req.URL); err != nil {
		return nil, nil, err
	}
	req.Header.Set(MarkerHeader, "1")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	if res.ContentLength > maxBytes {
		return res, nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, res.ContentLength, maxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBytes+1))
	if err != nil {
		return res, nil, err
	}
	if int64(len(body)) > maxBytes {
		return res, nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, maxBytes)
	}
	return res, body, nil
}

// Request is a request to an address a user gave: the webhook deliveries
// and the fulfillment providers' callbacks build these, not net/http
// requests, so that the one client is the only code that speaks HTTP out.
type Request struct {
	Method, URL string
	// Header holds name and value pairs, names as they go on the wire.
	Header [][2]string
	Body   []byte
}

// ErrInvalidRequest: the request cannot be made (a malformed URL).
var ErrInvalidRequest = errors.New("invalid request")

// Send makes r within ctx and reads at most maxBytes of the answer. The
// status is the answer's even when err reports its body too large (a big
// answer is still an answer); 0 when none came.
func (c *Client) Send(ctx context.Context, r Request, maxBytes int64) (status int, body []byte, err error) {
	var rd io.Reader
	if r.Body != nil {
		rd = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	for _, h := range r.Header {
		req.Header[h[0]] = []string{h[1]}
	}
	res, body, err := c.Do(req, maxBytes)
	if res != nil {
		status = res.StatusCode
	}
	return status, body, err
}

// Get downloads rawURL, which must answer 2xx within the limits.
func (c *Client) Get(ctx context.Context, rawURL string, maxBytes int64) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("invalid URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	res, body, err := c.Do(req, maxBytes)
	if err != nil {
		return nil, err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, fmt.Errorf("the server answered %d", res.StatusCode)
	}
	return body, nil
}

// Reason is a short, client-safe explanation of a failed fetch.
func Reason(err error) string {
	var ue *url.Error
	switch {
	case errors.Is(err, ErrRefused):
		return "could not be downloaded: destination refused"
	case errors.Is(err, ErrTooLarge):
		return "could not be downloaded: file too large"
	case errors.As(err, &ue) && ue.Timeout():
		return "could not be downloaded: timed out"
	case errors.Is(err, context.DeadlineExceeded):
		return "could not be downloaded: timed out"
	}
	if ue != nil {
		if errors.Is(ue.Err, ErrRefused) {
			return "could not be downloaded: destination refused"
		}
		return "could not be downloaded: connection failed"
	}
	return "could not be downloaded: " + err.Error()
}
