// Package platform carries the dependencies every resource group is built
// from. Resource packages take a *Deps and return their routes, so a new
// resource needs no change here unless it needs a new kind of dependency.
package platform

import (
	"context"

	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/store"
)

// Deps are created once per process (once per Lambda container).
type Deps struct {
	Store store.Store
	// Clock is the service's time: the machine's in AWS, one the local
	// runner can move forward, one tests step. NewService copies it into
	// each service that dates, expires or decides by time; jobs and plain
	// functions take it as a parameter; IDs read it too. Never the context.
	Clock clock.Clock
	IDs   *ids.Generator
	// Outbound makes every request to an address a user gave.
	Outbound *outbound.Client
	// Queue carries webhook deliveries (SQS in AWS, the store locally).
	Queue queue.Queue
	// ThemeImports carries theme zip imports to the theme-import function
	// (SQS in AWS, the store locally).
	ThemeImports queue.Queue
	// BaseURL is the service's public address (PUBLIC_BASE_URL,
	// "https://api.example.com"), the base of every absolute URL the
	// service answers; "" in Lambda means the domain API Gateway received
	// the request on (see api.Handler).
	BaseURL string
	// ProductChanged, when set, is called after a product's variants changed
	// (smart collection membership follows them); the composition root
	// wires it, so that resource packages need not import each other.
	ProductChanged func(ctx context.Context, productID int64) error
	// Metrics writes the metric lines (deliveries, polls, imports, 429s).
	Metrics *metrics.Recorder
	// Derivers are the change feed's work by partition (index entries,
	// counts, events, notifications that follow from a change).
	Derivers store.Derivers
	// CleanUps are the removed owners' clean-ups (their metafields,
	// collects, files), which the change feed runs after a removal.
	CleanUps store.CleanUps
	// Feed, when set, derives that work in this process right after each
	// commit (the local runner, tests); nil where the table's stream does
	// (Lambda). Store writes through it.
	Feed *store.Fed
	// Owner is how the authorization page knows the shop's owner approves
	// an app's scopes (shared/oauth).
	Owner Owner
	// TokenKey (OAUTH_TOKEN_KEY) makes the offline tokens OAuth issues, so
	// that a re-authorization answers the same token while the table keeps
	// only its hash; nil: a key kept in the store (the local runner).
	TokenKey []byte
	// Points meters each app's GraphQL query cost, apart from its REST
	// calls (shared/ratelimit); nil lets every query through.
	Points Points
}

// Points is a bucket of GraphQL cost points per app.
type Points interface {
	// Spend takes cost points of the app's bucket, or none when it holds
	// fewer, and answers what it holds after.
	Spend(ctx context.Context, appID int64, cost float64) (available float64, ok bool, err error)
	// Refund gives back points a query held and did not use.
	Refund(ctx context.Context, appID int64, points float64) (available float64, err error)
	// Max and Rate are the bucket's size and its restore rate a second.
	Max() float64
	Rate() float64
}

// Owner says who may approve an app's scopes on the authorization page.
type Owner struct {
	// SecretHash (OWNER_SECRET_HASH) is the hash of the secret the page
	// asks for (auth.HashOwnerSecret).
	SecretHash string
	// Local, without SecretHash, takes whoever uses the page as the owner:
	// the local runner's user. Neither: every approval is refused.
	Local bool
}
