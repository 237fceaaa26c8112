package config

import "testing"

func TestParseBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.example.com":       "https://api.example.com",
		"https://api.example.com/":      "https://api.example.com",
		"http://127.0.0.1:8080":         "http://127.0.0.1:8080",
		"https://[2001:db8::1]:8443":    "https://[2001:db8::1]:8443",
		"https://xn--bcher-kva.example": "https://xn--bcher-kva.example",
	} {
		if got, err := ParseBaseURL(in); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "api.example.com", "//api.example.com", "https://", "https://api.example.com/v1",
		"https://api.example.com?x=1", "https://api.example.com/?", "https://api.example.com#f", "https://u:p@api.example.com",
		"ftp://api.example.com", "https://bücher.example", "https://a%2Fb.example", "https://api.example.com:x", "javascript:alert(1)"} {
		if got, err := ParseBaseURL(in); err == nil {
			t.Errorf("%q accepted as %q", in, got)
		}
	}
}
