package charges

import (
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
)

func TestParsePrice(t *testing.T) {
	for in, want := range map[string]string{
		"10": "10.00", "10.5": "10.50", "0.01": "0.01", "1e2": "100.00", "10000": "10000.00", "10000.00": "10000.00",
		"0": MsgPositive, "-1": MsgPositive, "-0": MsgPositive, "10000.01": MsgMaxPrice, "1e300": MsgMaxPrice,
		"1.005": MsgTwoDecimals, "0.001": MsgTwoDecimals, "abc": MsgNotANumber, "1/2": MsgNotANumber, "NaN": MsgNotANumber, "": MsgNotANumber,
	} {
		m, msg := parsePrice(in)
		got := msg
		if msg == "" {
			got = m.String()
		}
		if got != want {
			t.Errorf("parsePrice(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecoratedReturnURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example.com":                                   "https://a.example.com?charge_id=7",
		"https://a.example.com/b?x=1&y=a%20b":                     "https://a.example.com/b?x=1&y=a%20b&charge_id=7",
		"https://a.example.com/b?":                                "https://a.example.com/b?charge_id=7",
		"https://a.example.com/b#frag":                            "https://a.example.com/b?charge_id=7#frag",
		"https://a.example.com/b?x=1#f":                           "https://a.example.com/b?x=1&charge_id=7#f",
		"https://a.example.com/b?charge_id=3&x=1&charge%5Fid=4#f": "https://a.example.com/b?x=1&charge_id=7#f",
		"https://a.example.com/b?x=1&charge_id=3":                 "https://a.example.com/b?x=1&charge_id=7",
	} {
		c := Charge{ID: 7, ReturnURL: in}
		if got := c.DecoratedReturnURL(); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

func TestPendingChargeExpiresAfterTwoDays(t *testing.T) {
	created := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	c := Charge{Status: StatusPending, CreatedAt: admin.Time{Time: created}}
	if s := c.StatusAt(created.Add(ExpiresAfter - time.Second)); s != StatusPending {
		t.Errorf("just before 48 h: %s", s)
	}
	if s := c.StatusAt(created.Add(ExpiresAfter)); s != StatusExpired {
		t.Errorf("at 48 h: %s", s)
	}
	c.Status = StatusAccepted
	if s := c.StatusAt(created.Add(10 * ExpiresAfter)); s != StatusAccepted {
		t.Errorf("an accepted charge expired: %s", s)
	}
	if v := c.View("https://x", created.Add(ExpiresAfter), time.UTC); v.ConfirmationURL != nil {
		t.Errorf("confirmation_url of an accepted charge: %v", *v.ConfirmationURL)
	}
}

func TestSecretAndToken(t *testing.T) {
	c := Charge{ID: 1, Secret: newSecret()}
	d := Charge{ID: 2, Secret: c.Secret}
	if len(c.Secret) != 43 || !c.SecretMatches(c.Secret) || c.SecretMatches(c.Secret[1:]) || (&Charge{}).SecretMatches("") {
		t.Errorf("secret %q", c.Secret)
	}
	if !c.CSRFMatches(c.CSRFToken()) || c.CSRFMatches(d.CSRFToken()) || c.CSRFMatches("") {
		t.Error("form token")
	}
}
