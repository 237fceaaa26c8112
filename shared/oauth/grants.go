package oauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The grants of POST /admin/oauth/access_token beside the authorization
// code's, as Shopify names them.
const (
	GrantCode          = "authorization_code"
	GrantRefresh       = "refresh_token"
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	// TokenTypeID is a session token (App Bridge's JWT) as subject_token.
	TokenTypeID = "urn:ietf:params:oauth:token-type:id_token"
	// TokenTypeOnline and TokenTypeOffline are the requested_token_type
	// values; TokenTypeOffline as subject_token_type migrates a
	// non-expiring offline token.
	TokenTypeOnline  = "urn:shopify:params:oauth:token-type:online-access-token"
	TokenTypeOffline = "urn:shopify:params:oauth:token-type:offline-access-token"
)

const (
	// AccessTTL is the life of an expiring offline token (Shopify's
	// expires_in 3600).
	AccessTTL = time.Hour
	// RefreshTTL is the life of a refresh token (Shopify's
	// refresh_token_expires_in, 90 days).
	RefreshTTL = 90 * 24 * time.Hour
	// SessionTTL is the life of a session token the runner mints (App
	// Bridge's are good for a minute).
	SessionTTL = time.Minute
	// Leeway is the clock skew a session token's exp and nbf are allowed,
	// as Shopify's libraries allow (10 s).
	Leeway = 10 * time.Second
)

// Error is an error of the refresh and token exchange grants, as Shopify
// answers them: OAuth's {"error", "error_description"}, the description
// naming the field.
type Error struct {
	Status      int    `json:"-"`
	Code        string `json:"error"`
	Description string `json:"error_description"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

func invalidRequest(field, msg string) *Error {
	return &Error{400, "invalid_request", field + " " + msg}
}

func invalidGrant(msg string) *Error {
	return &Error{400, "invalid_grant", "refresh_token " + msg}
}

func invalidSubject(msg string) *Error {
	return &Error{400, "invalid_subject_token", "subject_token " + msg}
}

func invalidClient(field, msg string) *Error {
	return &Error{401, "invalid_client", field + " " + msg}
}

// Flag is the expiring parameter read: Set for 1, Bad for a value that
// is neither 0 nor 1.
type Flag struct {
	Set, Bad bool
}

// ParseFlag reads the expiring parameter, a JSON value or a form's
// string: the string "0" or "1" (Shopify's libraries send strings), a
// number 0 or 1, or a boolean; absent is 0.
func ParseFlag(v any) Flag {
	switch v := v.(type) {
	case nil:
		return Flag{}
	case string:
		switch strings.TrimSpace(v) {
		case "", "0", "false":
			return Flag{}
		case "1", "true":
			return Flag{Set: true}
		}
	case float64:
		switch v {
		case 0:
			return Flag{}
		case 1:
			return Flag{Set: true}
		}
	case bool:
		return Flag{Set: v}
	}
	return Flag{Bad: true}
}

// Derived is a token of an expiring grant: made from the key, the app, the
// grant's nonce and generation, and kind ("access" or "refresh"), so that
// a refresh retried with the previous refresh token is answered the same
// pair while the table holds only their hashes.
func Derived(key []byte, kind string, appID int64, nonce string, gen int) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(kind + "\x00" + strconv.FormatInt(appID, 10) + "\x00" + nonce + "\x00" + strconv.Itoa(gen)))
	prefix := "shpat_"
	if kind == "refresh" {
		prefix = "shprt_"
	}
	return prefix + hex.EncodeToString(m.Sum(nil)[:16])
}

// SessionClaims are a session token's claims, as App Bridge's.
type SessionClaims struct {
	Iss  string `json:"iss"`
	Dest string `json:"dest"`
	Aud  string `json:"aud"`
	Sub  string `json:"sub"`
	Exp  int64  `json:"exp"`
	Nbf  int64  `json:"nbf"`
	Iat  int64  `json:"iat"`
	Jti  string `json:"jti"`
	Sid  string `json:"sid"`
}

// NewSessionClaims are the claims of a session token of the app whose
// client_id is clientID, for user userID of the shop at shopDomain,
// issued at now for SessionTTL.
func NewSessionClaims(shopDomain, clientID string, userID int64, now time.Time) SessionClaims {
	dest := "https://" + shopDomain
	return SessionClaims{Iss: dest + "/admin", Dest: dest, Aud: clientID, Sub: strconv.FormatInt(userID, 10),
		Exp: now.Add(SessionTTL).Unix(), Nbf: now.Unix(), Iat: now.Unix(), Jti: random(""), Sid: random("")}
}

var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// SignSession is the session token of c: an HS256 JWT signed with the
// app's secret, as App Bridge's.
func SignSession(c SessionClaims, secret string) string {
	payload, _ := json.Marshal(c)
	msg := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(payload)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(msg))
	return msg + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// VerifySession checks a session token as Shopify does before exchanging
// it: HS256 signed with the app's secret, aud the app's client_id, dest the
// shop, iss the shop's admin, within exp and nbf at now (Leeway either
// side), and every claim present. It returns the claims or an
// invalid_subject_token error saying what is wrong.
func VerifySession(token, secret, clientID, shopDomain string, now time.Time) (SessionClaims, error) {
	var c SessionClaims
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(token) > 8192 {
		return c, invalidSubject("is not a JWT")
	}
	rawHeader, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	rawPayload, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	var header struct {
		Alg string `json:"alg"`
	}
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(rawHeader, &header) != nil {
		return c, invalidSubject("is not a JWT")
	}
	if header.Alg != "HS256" {
		return c, invalidSubject("must be signed with HS256")
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, m.Sum(nil)) {
		return c, invalidSubject("is not signed with the app's secret")
	}
	if err := json.Unmarshal(rawPayload, &c); err != nil {
		return c, invalidSubject("has claims of the wrong types")
	}
	dest := "https://" + shopDomain
	switch {
	case c.Aud != clientID:
		return c, invalidSubject("has an aud that is not the app's client_id")
	case c.Dest != dest:
		return c, invalidSubject("has a dest that is not this shop (" + dest + ")")
	case c.Iss != dest+"/admin":
		return c, invalidSubject("has an iss that is not this shop's admin")
	case c.Exp == 0 || c.Nbf == 0 || c.Iat == 0 || c.Sub == "" || c.Jti == "" || c.Sid == "":
		return c, invalidSubject("lacks one of exp, nbf, iat, sub, jti, sid")
	case now.Unix() >= time.Unix(c.Exp, 0).Add(Leeway).Unix():
		return c, invalidSubject("has expired")
	case now.Add(Leeway).Unix() < c.Nbf:
		return c, invalidSubject("is not valid yet (nbf)")
	}
	return c, nil
}
