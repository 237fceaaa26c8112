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
