package config

import (
	"strings"
	"testing"
)

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

// FAULT_RATE is a fraction, and never taken by a Lambda function.
func TestFaultRate(t *testing.T) {
	for _, c := range []struct {
		value, lambda string
		want          float64
		ok            bool
	}{
		{"0.1", "", 0.1, true},
		{"1", "", 1, true},
		{"0", "fn", 0, true},
		{"0.1", "fn", 0, false},
		{"1.5", "", 0, false},
		{"-0.1", "", 0, false},
		{"NaN", "", 0, false},
		{"lots", "", 0, false},
	} {
		t.Setenv("FAULT_RATE", c.value)
		t.Setenv("AWS_LAMBDA_FUNCTION_NAME", c.lambda)
		if c.lambda != "" {
			t.Setenv("TABLE_NAME", "t")
		}
		cfg, err := FromEnv()
		if (err == nil) != c.ok || c.ok && cfg.FaultRate != c.want {
			t.Errorf("FAULT_RATE=%s in Lambda %q: %v, %v", c.value, c.lambda, cfg.FaultRate, err)
		}
	}
}

// Who approves app scopes: the runner's user locally, the owner's secret
// where a hash is configured, nobody in Lambda without one; a malformed
// hash or a short token key stops start-up.
func TestOwnerAndTokenKey(t *testing.T) {
	const hash = "pbkdf2-sha256$1000$MDEyMzQ1Njc4OWFiY2RlZg$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"
	for _, c := range []struct {
		hash, lambda, key string
		local, ok         bool
	}{
		{"", "", "", true, true},
		{hash, "", "", false, true},
		{"", "fn", "", false, true},
		{hash, "fn", strings.Repeat("k", 32), false, true},
		{"pbkdf2-sha256$x", "", "", false, false},
		{"", "", "short", false, false},
	} {
		t.Setenv("OWNER_SECRET_HASH", c.hash)
		t.Setenv("OAUTH_TOKEN_KEY", c.key)
		t.Setenv("AWS_LAMBDA_FUNCTION_NAME", c.lambda)
		t.Setenv("TABLE_NAME", "t")
		cfg, err := FromEnv()
		if (err == nil) != c.ok || c.ok && (cfg.LocalOwner != c.local || cfg.OwnerSecretHash != c.hash || string(cfg.OAuthTokenKey) != c.key) {
			t.Errorf("%+v: %+v, %v", c, cfg, err)
		}
	}
}

// GRAPHQL_POINTS sizes the GraphQL bucket; anything but max/rate stops
// start-up.
func TestGraphQLPoints(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
	for v, want := range map[string][2]float64{"": {0, 0}, "60/10": {60, 10}, "2000/100": {2000, 100}} {
		t.Setenv("GRAPHQL_POINTS", v)
		if cfg, err := FromEnv(); err != nil || cfg.PointsMax != want[0] || cfg.PointsRate != want[1] {
			t.Errorf("GRAPHQL_POINTS=%q: %v %v, %v", v, cfg.PointsMax, cfg.PointsRate, err)
		}
	}
	for _, v := range []string{"60", "0/10", "60/0", "a/b", "60/-1"} {
		t.Setenv("GRAPHQL_POINTS", v)
		if _, err := FromEnv(); err == nil {
			t.Errorf("GRAPHQL_POINTS=%q accepted", v)
		}
	}
}
