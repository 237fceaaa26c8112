// Package charges serves /admin/recurring_application_charges (docs/openapi.yaml:
// schema RecurringApplicationCharge, schema RecurringApplicationChargeStatus, the
// Billing operations) and the shop owner's confirmation page.
//
// A charge belongs to the app that created it, so the app is part of the
// partition: charge#app#<app id>/<id>, and another app's id is absent
// (404). The confirmation page has no token, only the charge id and a
// random secret in its path, so a small link item (charge_page/<id>) names
// the charge's app. One guard item per app (charge_active/<app id>) names
// its active charge; every activation and cancellation of an active charge
// is conditioned on its version, which keeps one active charge per app.
package charges

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Statuses (schema RecurringApplicationChargeStatus; "active" and "cancelled"
// where the spec says activated and cancelled without naming the value).
const (
	StatusPending   = "pending"
	StatusAccepted  = "accepted"
	StatusDeclined  = "declined"
	StatusExpired   = "expired"
	StatusActive    = "active"
	StatusCancelled = "cancelled"
)

// Statuses lists every status a charge shows.
var Statuses = []string{StatusPending, StatusAccepted, StatusDeclined, StatusExpired, StatusActive, StatusCancelled}

// ExpiresAfter is how long a charge may stay pending: after it, it reads
// as expired and the page no longer accepts it.
const ExpiresAfter = 48 * time.Hour

// Limits of the input.
const (
	maxName      = 255
	maxReturnURL = 2048
	maxTrialDays = 1000
	// MaxPrice is the largest price, in cents (10,000.00).
	MaxPrice = admin.Money(10_000_00)
)

// Charge is the stored record. Secret is the random part of the confirmation
// page's path; it is stored because schema RecurringApplicationCharge returns the
// confirmation_url for every pending charge, and never shown otherwise.
type Charge struct {
	ID          int64       `json:"id"`
	APIClientID int64       `json:"api_client_id"`
	Name        string      `json:"name"`
	Price       admin.Money `json:"price"`
	ReturnURL   string      `json:"return_url"`
	Status      string      `json:"status"`
	Test        *bool       `json:"test"`
	TrialDays   int64       `json:"trial_days"`
	TrialEndsOn *admin.Time `json:"trial_ends_on"`
	BillingOn   *admin.Time `json:"billing_on"`
	ActivatedOn *admin.Time `json:"activated_on"`
	CancelledOn *admin.Time `json:"cancelled_on"`
	CreatedAt   admin.Time  `json:"created_at"`
	UpdatedAt   admin.Time  `json:"updated_at"`
	Secret      string      `json:"secret"`
}

// View is a charge as the API returns it.
type View struct {
	ID                 int64       `json:"id"`
	APIClientID        int64       `json:"api_client_id"`
	Name               string      `json:"name"`
	Price              admin.Money `json:"price"`
	ReturnURL          string      `json:"return_url"`
	DecoratedReturnURL string      `json:"decorated_return_url"`
	ConfirmationURL    *string     `json:"confirmation_url"`
	Status             string      `json:"status"`
	Test               *bool       `json:"test"`
	TrialDays          int64       `json:"trial_days"`
	TrialEndsOn        *admin.Time `json:"trial_ends_on"`
	BillingOn          *admin.Time `json:"billing_on"`
	ActivatedOn        *admin.Time `json:"activated_on"`
	CancelledOn        *admin.Time `json:"cancelled_on"`
	CreatedAt          admin.Time  `json:"created_at"`
	UpdatedAt          admin.Time  `json:"updated_at"`
}

// StatusAt is the status the charge shows at now: a pending charge older
// than ExpiresAfter is expired (computed on read; nothing is written).
func (c *Charge) StatusAt(now time.Time) string {
	if c.Status == StatusPending && !now.Before(c.CreatedAt.Add(ExpiresAfter)) {
		return StatusExpired
	}
	return c.Status
}

// DecoratedReturnURL is return_url with charge_id=<id> as the last
// parameter of its query, in place of any charge_id it held (an app that
// reuses the URL it was sent back to must not read a stale id first); the
// other parameters are kept byte for byte, a fragment stays last.
func (c *Charge) DecoratedReturnURL() string {
	u, frag, hasFrag := strings.Cut(c.ReturnURL, "#")
	base, query, _ := strings.Cut(u, "?")
	var b strings.Builder
	b.WriteString(base)
	b.WriteByte('?')
	for p := range strings.SplitSeq(query, "&") {
		k, _, _ := strings.Cut(p, "=")
		if name, err := url.QueryUnescape(k); p == "" || err == nil && name == "charge_id" {
			continue
		}
		b.WriteString(p)
		b.WriteByte('&')
	}
	b.WriteString("charge_id=" + strconv.FormatInt(c.ID, 10))
	if hasFrag {
		b.WriteString("#" + frag)
	}
	return b.String()
}

// PagePath is the confirmation page's path.
func (c *Charge) PagePath() string {
	return "/admin/recurring_application_charges/" + strconv.FormatInt(c.ID, 10) + "/confirm/" + c.Secret
}

// View returns the charge as answered at now; base is the service's public
// base URL ("https://api.example.com", httpapi.BaseURL), for confirmation_url.
func (c *Charge) View(base string, now time.Time, loc *time.Location) View {
	v := View{
		ID: c.ID, APIClientID: c.APIClientID, Name: c.Name, Price: c.Price, ReturnURL: c.ReturnURL,
		DecoratedReturnURL: c.DecoratedReturnURL(), Status: c.StatusAt(now), Test: c.Test, TrialDays: c.TrialDays,
		TrialEndsOn: in(c.TrialEndsOn, loc), BillingOn: in(c.BillingOn, loc), ActivatedOn: in(c.ActivatedOn, loc),
		CancelledOn: in(c.CancelledOn, loc), CreatedAt: c.CreatedAt.In(loc), UpdatedAt: c.UpdatedAt.In(loc),
	}
	if v.Status == StatusPending {
		u := base + c.PagePath()
		v.ConfirmationURL = &u
	}
	return v
}

func in(t *admin.Time, loc *time.Location) *admin.Time {
	if t == nil {
		return nil
	}
	return t.In(loc).Ptr()
}

// CSRFToken is the token the page's forms carry: an HMAC of the charge id
// keyed with its secret, so it needs nothing stored and differs per charge.
func (c *Charge) CSRFToken() string {
	m := hmac.New(sha256.New, []byte(c.Secret))
	m.Write([]byte("charge-confirmation:" + strconv.FormatInt(c.ID, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// SecretMatches compares a secret from a path with the charge's in
// constant time.
func (c *Charge) SecretMatches(secret string) bool {
	return c.Secret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) == 1
}

// CSRFMatches checks a form's token in constant time.
func (c *Charge) CSRFMatches(token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(c.CSRFToken())) == 1
}

func newSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Partition is the partition of an app's charges.
func Partition(appID int64) string { return "charge#app#" + strconv.FormatInt(appID, 10) }

func key(appID, id int64) store.Key { return store.Key{PK: Partition(appID), SK: records.IDSK(id)} }

// linkKey is the item that names a charge's app, for the token-less page.
func linkKey(id int64) store.Key { return store.Key{PK: "charge_page", SK: records.IDSK(id)} }

// activeKey is the guard item naming an app's active charge.
func activeKey(appID int64) store.Key { return store.Key{PK: "charge_active", SK: records.IDSK(appID)} }

type link struct {
	AppID int64 `json:"app_id"`
}

type active struct {
	ChargeID int64 `json:"charge_id"`
}

func (c *Charge) item(version int64) store.Item {
	k := key(c.APIClientID, c.ID)
	return store.Item{PK: k.PK, SK: k.SK, Version: version, Data: records.Encode(c)}
}

// Input is the body of a create.
type Input struct {
	Name      *string               `json:"name"`
	Price     Price                 `json:"price"`
	ReturnURL *string               `json:"return_url"`
	Test      *bool                 `json:"test"`
	TrialDays admin.Optional[int64] `json:"trial_days"`
}

// Price is the price as sent: a JSON number or a numeric string, kept as
// text until validated (more than two decimals is refused, not rounded).
type Price struct {
	Set  bool
	Text string
}

func (p *Price) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	switch {
	case s == "null":
		*p = Price{}
		return nil
	case len(s) > 0 && s[0] == '"':
		if err := json.Unmarshal(b, &s); err != nil {
			return errPriceType()
		}
		s = strings.TrimSpace(s)
	case len(s) > 0 && (s[0] == '-' || s[0] >= '0' && s[0] <= '9'):
	default:
		return errPriceType()
	}
	*p = Price{Set: true, Text: s}
	return nil
}

// errPriceType is what a JSON decode of a non-amount reports, as
// admin.Money does: the HTTP layer answers 422 "must be a number".
func errPriceType() error {
	return &json.UnmarshalTypeError{Value: "price", Type: reflect.TypeFor[float64]()}
}

// Messages of the input rules beyond the contract's validation messages.
const (
	MsgPositive      = "must be greater than zero"
	MsgNotANumber    = "is not a number"
	MsgTwoDecimals   = "must have at most two decimal places"
	MsgHTTPURL       = "must be an absolute http or https URL"
	MsgTestTrueOrNil = "must be true or null"
)

// MsgMaxPrice is the message of a price over MaxPrice.
var MsgMaxPrice = "must be less than or equal to " + MaxPrice.String()

// MsgTrialDays is the message of a trial_days out of range.
var MsgTrialDays = "must be an integer between 0 and " + strconv.Itoa(maxTrialDays)

// parsePrice reads a price exactly first (admin.ParseMoney would round a
// third decimal away), then through admin.ParseMoney, the one reader of
// amounts.
func parsePrice(s string) (admin.Money, string) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.Contains(s, "/") {
		return 0, MsgNotANumber
	}
	switch {
	case r.Sign() <= 0:
		return 0, MsgPositive
	case r.Cmp(big.NewRat(int64(MaxPrice), 100)) > 0:
		return 0, MsgMaxPrice
	case !new(big.Rat).Mul(r, big.NewRat(100, 1)).IsInt():
		return 0, MsgTwoDecimals
	}
	m, err := admin.ParseMoney(s)
	if err != nil {
		return 0, MsgNotANumber
	}
	return m, ""
}

// validReturnURL reports whether s is an absolute http(s) URL with a host
// (the document's httpURL).
func validReturnURL(s string) bool { return admin.IsHTTPURL(s) }

// origin is the scheme and host of a valid return URL, for the page's
// form-action.
func origin(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// newCharge validates the input into a pending charge of app.
func (in *Input) newCharge(appID int64, now admin.Time) (Charge, error) {
	c := Charge{APIClientID: appID, Status: StatusPending, CreatedAt: now, UpdatedAt: now, Secret: newSecret()}
	var v admin.Validation
	v.RequiredText("name", in.Name, true, maxName, &c.Name)
	if !in.Price.Set || in.Price.Text == "" {
		v.Add("price", admin.MsgBlank)
	} else if m, msg := parsePrice(in.Price.Text); msg != "" {
		v.Add("price", msg)
	} else {
		c.Price = m
	}
	u := ""
	if in.ReturnURL != nil {
		u = strings.TrimSpace(*in.ReturnURL)
	}
	switch {
	case u == "":
		v.Add("return_url", admin.MsgBlank)
	case len(u) > maxReturnURL:
		v.Add("return_url", admin.TooLong(maxReturnURL))
	case !validReturnURL(u):
		v.Add("return_url", MsgHTTPURL)
	default:
		c.ReturnURL = u
	}
	if in.Test != nil {
		if !*in.Test {
			v.Add("test", MsgTestTrueOrNil)
		} else {
			t := true
			c.Test = &t
		}
	}
	if in.TrialDays.Set && !in.TrialDays.Null {
		if d := in.TrialDays.Value; d < 0 || d > maxTrialDays {
			v.Add("trial_days", MsgTrialDays)
		} else {
			c.TrialDays = d
		}
	}
	return c, v.Err()
}
