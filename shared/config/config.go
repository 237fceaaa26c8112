// Package config reads every environment variable the service uses, in one
// place. docs/configuration.md's table lists the same variables.
package config

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/clock"
)

// Config is the process configuration.
type Config struct {
	// Clock is the service's time (no variable: the local runner sets its
	// movable clock here); nil is the machine's, as in AWS.
	Clock clock.Clock
	// RateLimit (RATE_LIMIT on/off) is where app call buckets live: "shared"
	// (the table, every Lambda instance) in Lambda, "memory" in the local
	// runner, or "off".
	RateLimit string
	// TokenTTL (no variable) is how long a process keeps a token's app
	// before reading it again: auth.TokenTTL in Lambda, where other
	// instances write the table, so that a call costs no token read; 0 in
	// the local runner, which reads it on every call (a revocation holds
	// at once).
	TokenTTL time.Duration
	// LocalFeed (CHANGE_FEED=local, the default outside Lambda) derives a
	// change's work in the process, right after its commit (store.Feed);
	// CHANGE_FEED=stream (the default in Lambda) leaves it to the table's
	// stream and the change-feed function.
	LocalFeed bool
	Port      int    // PORT: local runner listen port (127.0.0.1)
	DataDir   string // DATA_DIR: embedded store directory
	Store     string // STORE: "embedded" (default for the runner) or "dynamodb"
	TableName string // TABLE_NAME: the DynamoDB table
	Endpoint  string // AWS_ENDPOINT_URL: DynamoDB endpoint override (emulators)
	SeedFile  string // SEED_FILE: seed loaded by the local runner at start
	LogLevel  slog.Level
	// AllowPrivateDestinations (ALLOW_PRIVATE_DESTINATIONS=1) lets outbound
	// requests reach loopback and private addresses: on by default in the
	// local runner, off in Lambda.
	AllowPrivateDestinations bool
	// QueueURL (DELIVERY_QUEUE_URL) is the SQS delivery queue; without it
	// deliveries queue in the store (the local runner's in-process pipeline).
	QueueURL string
	// ThemeImportQueueURL (THEME_IMPORT_QUEUE_URL) is the SQS queue of
	// theme zip imports; without it they queue in the store.
	ThemeImportQueueURL string
	// SQSEndpoint (AWS_ENDPOINT_URL_SQS) overrides the SQS endpoint (emulators).
	SQSEndpoint string
	// RetryBase (WEBHOOK_RETRY_BASE_DELAY) is the first retry delay of a
	// failed webhook delivery; later ones double.
	RetryBase time.Duration
	// MetricsNamespace (METRICS_NAMESPACE) is the CloudWatch namespace of
	// the metrics the functions log (shared/metrics); "" is its default.
	MetricsNamespace string
	// PollInterval (POLL_INTERVAL) is how often the local runner asks the
	// fulfillment services for stock and tracking numbers (AWS uses the
	// template's schedules).
	PollInterval time.Duration
	// FaultRate (FAULT_RATE, 0..1, default 0) is the fraction of store and
	// queue calls the local runner fails as DynamoDB and SQS do on a bad
	// minute (shared/faults), for testing a client's retries; refused in
	// Lambda.
	FaultRate float64
	// PublicBaseURL (PUBLIC_BASE_URL) is where clients reach the service,
	// "https://api.example.com": the base of every absolute URL it answers
	// (paging links, confirmation_url, public_url), which never comes from
	// a request's Host. The local runner defaults it to its own address;
	// in Lambda it is the template's PublicBaseUrl, and empty there means
	// the domain API Gateway received the request on.
	PublicBaseURL string
	// OwnerSecretHash (OWNER_SECRET_HASH) is the hash of the secret the
	// app authorization page asks the shop's owner for
	// (auth.HashOwnerSecret); without it outside Lambda, LocalOwner: the
	// runner's user is the owner. In Lambda without it, no app can be
	// granted new scopes.
	OwnerSecretHash string
	LocalOwner      bool
	// OAuthTokenKey (OAUTH_TOKEN_KEY, 32 random characters or more) makes the offline
	// tokens OAuth issues (shared/oauth); the template gives the OAuth
	// function one from Secrets Manager. Without it, a key in the store.
	OAuthTokenKey []byte
	// PointsMax and PointsRate (GRAPHQL_POINTS, "max/rate", such as
	// "60/10") size each app's GraphQL cost bucket; 0: Shopify's standard
	// plan (ratelimit.DefaultPoints). For tests of a client's pacing.
	PointsMax, PointsRate float64
}

// FromEnv reads the configuration; defaults suit the local runner, and
// Lambda functions (which always set TABLE_NAME) use DynamoDB.
func FromEnv() (Config, error) {
	c := Config{
		Port:      8080,
		DataDir:   env("DATA_DIR", "./.data"),
		TableName: os.Getenv("TABLE_NAME"),
		Endpoint:  os.Getenv("AWS_ENDPOINT_URL"),
		SeedFile:  os.Getenv("SEED_FILE"),

		MetricsNamespace: os.Getenv("METRICS_NAMESPACE"),
	}
	if s := os.Getenv("PORT"); s != "" {
		p, err := strconv.Atoi(s)
		if err != nil || p < 0 || p > 65535 {
			return c, fmt.Errorf("config: PORT %q is not a port number", s)
		}
		c.Port = p
	}
	c.Store = env("STORE", "embedded")
	inLambda := os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != ""
	if inLambda {
		c.Store = "dynamodb"
	}
	switch v := os.Getenv("ALLOW_PRIVATE_DESTINATIONS"); v {
	case "":
		c.AllowPrivateDestinations = !inLambda
	case "1", "true":
		c.AllowPrivateDestinations = true
	case "0", "false":
	default:
		return c, fmt.Errorf("config: ALLOW_PRIVATE_DESTINATIONS must be 1 or 0, not %q", v)
	}
	switch c.Store {
	case "embedded":
	case "dynamodb":
		if c.TableName == "" {
			return c, fmt.Errorf("config: STORE=dynamodb needs TABLE_NAME")
		}
	default:
		return c, fmt.Errorf("config: STORE must be embedded or dynamodb, not %q", c.Store)
	}
	c.QueueURL = os.Getenv("DELIVERY_QUEUE_URL")
	c.ThemeImportQueueURL = os.Getenv("THEME_IMPORT_QUEUE_URL")
	c.SQSEndpoint = os.Getenv("AWS_ENDPOINT_URL_SQS")
	c.RetryBase = 10 * time.Second
	if s := os.Getenv("WEBHOOK_RETRY_BASE_DELAY"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("config: WEBHOOK_RETRY_BASE_DELAY %q is not a positive duration such as 10s", s)
		}
		c.RetryBase = d
	}
	c.PollInterval = time.Hour
	if s := os.Getenv("POLL_INTERVAL"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("config: POLL_INTERVAL %q is not a positive duration such as 1h", s)
		}
		c.PollInterval = d
	}
	if s := os.Getenv("FAULT_RATE"); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || !(r >= 0 && r <= 1) {
			return c, fmt.Errorf("config: FAULT_RATE %q is not a fraction from 0 to 1 such as 0.1", s)
		}
		if inLambda && r > 0 {
			return c, fmt.Errorf("config: FAULT_RATE is for the local runner only, never a Lambda function")
		}
		c.FaultRate = r
	}
	if inLambda {
		c.TokenTTL = auth.TokenTTL
	}
	switch v := env("RATE_LIMIT", "on"); v {
	case "on":
		c.RateLimit = "memory"
		if inLambda {
			c.RateLimit = "shared"
		}
	case "off":
		c.RateLimit = "off"
	default:
		return c, fmt.Errorf("config: RATE_LIMIT must be on or off, not %q", v)
	}
	feed := "local"
	if inLambda {
		feed = "stream"
	}
	switch v := env("CHANGE_FEED", feed); v {
	case "local", "stream":
		c.LocalFeed = v == "local"
	default:
		return c, fmt.Errorf("config: CHANGE_FEED must be local or stream, not %q", v)
	}
	if s := os.Getenv("PUBLIC_BASE_URL"); s != "" {
		b, err := ParseBaseURL(s)
		if err != nil {
			return c, fmt.Errorf("config: PUBLIC_BASE_URL: %w", err)
		}
		c.PublicBaseURL = b
	}
	if c.OwnerSecretHash = os.Getenv("OWNER_SECRET_HASH"); c.OwnerSecretHash != "" {
		if err := auth.CheckOwnerHash(c.OwnerSecretHash); err != nil {
			return c, fmt.Errorf("config: OWNER_SECRET_HASH: %w", err)
		}
	}
	c.LocalOwner = c.OwnerSecretHash == "" && !inLambda
	if s := os.Getenv("OAUTH_TOKEN_KEY"); s != "" {
		if len(s) < 32 {
			return c, fmt.Errorf("config: OAUTH_TOKEN_KEY must have at least 32 random characters")
		}
		c.OAuthTokenKey = []byte(s)
	}
	if v := os.Getenv("GRAPHQL_POINTS"); v != "" {
		maxS, rateS, _ := strings.Cut(v, "/")
		m, err1 := strconv.ParseFloat(maxS, 64)
		r, err2 := strconv.ParseFloat(rateS, 64)
		if err1 != nil || err2 != nil || !(m >= 1 && m <= 1e6) || !(r > 0 && r <= 1e6) {
			return c, fmt.Errorf("config: GRAPHQL_POINTS %q is not max/rate, such as 2000/100", v)
		}
		c.PointsMax, c.PointsRate = m, r
	}
	if err := c.LogLevel.UnmarshalText([]byte(env("LOG_LEVEL", "info"))); err != nil {
		return c, fmt.Errorf("config: LOG_LEVEL: %w", err)
	}
	return c, nil
}

// ParseBaseURL checks a public base URL, an http or https origin with at
// most a trailing slash ("https://api.example.com/"), and returns it
// without the slash. Only ASCII host names and addresses are taken, so
// that it can be written into a header as it is.
func ParseBaseURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" ||
		u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("%q is not an http or https URL of a host alone, such as https://api.example.com", s)
	}
	for i := 0; i < len(u.Host); i++ {
		c := u.Host[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".-:[]", c) >= 0) {
			return "", fmt.Errorf("%q: the host must be written in ASCII (an IDN as xn--)", s)
		}
	}
	return u.Scheme + "://" + u.Host, nil
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
