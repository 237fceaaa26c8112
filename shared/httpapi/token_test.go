package httpapi

import (
	"net/http"
	"testing"
)

func TestRequestToken(t *testing.T) {
	svc, shop := TokenHeader, ShopifyTokenHeader
	for _, c := range []struct {
		header http.Header
		token  string
		ok     bool
	}{
		{http.Header{}, "", false},
		{http.Header{svc: {"a"}}, "a", true},
		{http.Header{shop: {"a"}}, "a", true},
		{http.Header{svc: {"a"}, shop: {"a"}}, "a", true},
		{http.Header{svc: {"a"}, shop: {"b"}}, "", false},
		{http.Header{svc: {"a", "a"}}, "", false},
		{http.Header{shop: {"a", "b"}}, "", false},
		{http.Header{svc: {""}}, "", false},
		{http.Header{svc: {"a"}, shop: {""}}, "", false},
	} {
		if token, ok := RequestToken(c.header); token != c.token || ok != c.ok {
			t.Errorf("%v: %q %v, want %q %v", c.header, token, ok, c.token, c.ok)
		}
	}
}
