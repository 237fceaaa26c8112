// Package api is the composition root: it lists the resource groups (one
// Lambda function each), opens the configured store and builds the handler
// a function or the local runner serves.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/storeadmin/adminapi/shared/addresses"
	"github.com/storeadmin/adminapi/shared/admingraphql"
	"github.com/storeadmin/adminapi/shared/apipermissions"
	"github.com/storeadmin/adminapi/shared/articles"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/charges"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/collects"
	"github.com/storeadmin/adminapi/shared/comments"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/countries"
	"github.com/storeadmin/adminapi/shared/countries/country"
	"github.com/storeadmin/adminapi/shared/customcollections"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/faults"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/idempotency"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/oauth"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/pages"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/queue/storequeue"
	"github.com/storeadmin/adminapi/shared/ratelimit"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/redirects"
	"github.com/storeadmin/adminapi/shared/savedsearches"
	"github.com/storeadmin/adminapi/shared/scripttags"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/boltstore"
	"github.com/storeadmin/adminapi/shared/store/dynamostore"
	"github.com/storeadmin/adminapi/shared/themes"
	"github.com/storeadmin/adminapi/shared/transactions"
	"github.com/storeadmin/adminapi/shared/variants"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// Group is a resource group: the routes one Lambda function serves. Name is
// the function's directory under functions/ and its name in template.yaml.
// Heads are the second segments of its routes' paths (the "redirects" of
// /web/redirects/{id}.json), separated by spaces, which Lazy finds a
// request's groups by without building them (TestGroupHeads keeps them
// those of Routes). A string, not a slice: the groups stay data the linker
// sees whole, so a function drops every group it does not name (with a
// slice here each group's binary grew from 12.6 to 19.2 MB).
type Group struct {
	Name   string
	Heads  string
	Routes func(*platform.Deps) []httpapi.Route
}

// The groups, one per Lambda function.
var (
	Redirects           = Group{"redirects", "redirects", redirects.Routes}
	ScriptTags          = Group{"script-tags", "script_tags", scripttags.Routes}
	Events              = Group{"events", "events orders products", events.Routes}
	Pages               = Group{"pages", "pages", pages.Routes}
	Blogs               = Group{"blogs", "articles blogs comments", blogRoutes}
	Webhooks            = Group{"webhooks", "api_permissions webhooks", webhookRoutes}
	Collections         = Group{"collections", "collects custom_collections smart_collections", collectionRoutes}
	Variants            = Group{"variants", "products variants", variants.Routes}
	FulfillmentServices = Group{"fulfillment-services", "fulfillment_services", fulfillmentservices.Routes}
	Billing             = Group{"billing", "recurring_application_charges", charges.Routes}
	Transactions        = Group{"transactions", "orders", transactions.Routes}
	Themes              = Group{"themes", "themes", themes.Routes}
	Countries           = Group{"countries", "countries", countries.Routes}
	Metafields          = Group{"metafields", "blogs custom_collections customers metafields orders pages products smart_collections variants", metafieldRoutes}
	Customers           = Group{"customers", "customer_saved_searches customers", customerRoutes}
	OAuth               = Group{"oauth", "oauth", oauth.Routes}
	GraphQL             = Group{"graphql", "graphql", graphqlRoutes}
)

// PathGroups are the groups the shopify-paths function serves at
// Shopify's greedy paths: every group but GraphQL, whose function API
// Gateway routes both its paths to, so that shopify-paths links no GraphQL
// engine (a literal of its own: a slice built from Groups would link every
// group into every function).
var PathGroups = []Group{
	Redirects, ScriptTags, Events, Pages, Blogs, Webhooks, Collections, Variants, FulfillmentServices,
	Billing, Transactions, Themes, Countries, Metafields, Customers, OAuth,
}

// Groups lists every group; the local runner serves them all on one port.
var Groups = []Group{
	Redirects, ScriptTags, Events, Pages, Blogs, Webhooks, Collections, Variants, FulfillmentServices,
	Billing,
	Transactions,
	Themes,
	Countries,
	Metafields,
	Customers,
	OAuth,
	GraphQL,
}

// collectionRoutes are the routes of the collections group: custom and
// smart collections, and collects.
func collectionRoutes(d *platform.Deps) []httpapi.Route {
	routes := append(customcollections.Routes(d), smartcollections.Routes(d)...)
	return append(routes, collects.Routes(d)...)
}

// webhookRoutes are the routes of the webhooks group: webhooks, their
// delivery log, and app uninstall (which fires app/uninstalled).
func webhookRoutes(d *platform.Deps) []httpapi.Route {
	routes := append(webhooks.Routes(d), delivery.Routes(d)...)
	return append(routes, apipermissions.Routes(d)...)
}

// customerRoutes are the routes of the customers group: a customer's addresses
// (the Customers (addresses) operations) and the customer saved searches (the
// Customers (saved searches) operations).
func customerRoutes(d *platform.Deps) []httpapi.Route {
	return append(addresses.Routes(d), savedsearches.Routes(d)...)
}

// blogRoutes are the routes of the blogs group: articles and their comments.
func blogRoutes(d *platform.Deps) []httpapi.Route {
	return append(articles.Routes(d), comments.Routes(d)...)
}

// metafieldRoutes are the routes of the metafields group: the Metafields
// operations on both roots and the nested paths of every owner. Each owner's
// existence is checked through the owner package's own read (the owners import
// metafields for their inputs, so it cannot import them); the seeded customers and
// orders through their partitions in shared/parents.
func metafieldRoutes(d *platform.Deps) []httpapi.Route {
	return metafields.Routes(d, metafieldLookups(d))
}

// graphqlRoutes are the GraphQL Admin API's: its metafields find their
// owners as the REST metafields do.
func graphqlRoutes(d *platform.Deps) []httpapi.Route {
	return admingraphql.Routes(d, metafieldLookups(d))
}

// metafieldLookups check each owner resource's record exists, through the
// owner's own read.
func metafieldLookups(d *platform.Deps) map[string]metafields.Lookup {
	none := func(err error) (int64, error) { return 0, err }
	seeded := func(partition string) metafields.Lookup {
		return func(ctx context.Context, id int64) (int64, error) {
			var raw map[string]any
			return exists(records.Get(ctx, d.Store, store.Key{PK: partition, SK: records.IDSK(id)}, &raw))
		}
	}
	return map[string]metafields.Lookup{
		metafields.OwnerProduct: func(ctx context.Context, id int64) (int64, error) {
			_, err := catalog.GetProduct(ctx, d.Store, id)
			return none(err)
		},
		metafields.OwnerVariant: func(ctx context.Context, id int64) (int64, error) {
			_, err := variants.NewService(d).Get(ctx, 0, id)
			return none(err)
		},
		metafields.OwnerPage: func(ctx context.Context, id int64) (int64, error) {
			_, err := pages.NewService(d).Get(ctx, id)
			return none(err)
		},
		metafields.OwnerArticle: func(ctx context.Context, id int64) (int64, error) {
			a, err := articles.Lookup(ctx, d.Store, id)
			if err != nil {
				return 0, err
			}
			return a.BlogID, nil
		},
		metafields.OwnerBlog: func(ctx context.Context, id int64) (int64, error) {
			_, err := articles.LookupBlog(ctx, d.Store, id)
			return none(err)
		},
		metafields.OwnerCustomCollection: func(ctx context.Context, id int64) (int64, error) {
			_, err := customcollections.NewService(d).Get(ctx, id)
			return none(err)
		},
		metafields.OwnerSmartCollection: func(ctx context.Context, id int64) (int64, error) {
			_, err := smartcollections.Lookup(ctx, d.Store, id)
			return none(err)
		},
		metafields.OwnerCustomer: seeded(parents.CustomerPartition),
		metafields.OwnerOrder:    seeded(parents.OrderPartition),
	}
}

// exists turns a records.Get into a metafields.Lookup answer.
func exists(_ store.Item, err error) (int64, error) { return 0, err }

// Deps are what the composition root builds once per process: the
// dependencies every resource group is made of, and the call limiter that
// only the HTTP layer uses (so that platform.Deps, which every resource
// reaches, does not carry it).
type Deps struct {
	*platform.Deps
	// Limiter paces each app's calls; nil when RATE_LIMIT=off.
	Limiter ratelimit.Limiter
	// TokenTTL is how long the router keeps a token's app before reading
	// it again (config.Config.TokenTTL): auth.TokenTTL in Lambda, 0 (every
	// call reads it) in the local runner and tests.
	TokenTTL time.Duration
}

// identity is the router's: the token cache of one process.
func (d *Deps) identity() *auth.Identity {
	return auth.NewCachingIdentity(d.Store, d.Clock, d.TokenTTL)
}

// Handler serves the given groups under the HTTP conventions.
func Handler(d *Deps, groups ...Group) *httpapi.Router {
	return handler(d, d.identity(), idempotency.NewKeeper(d.Store, d.Clock), groups)
}

func handler(d *Deps, id *auth.Identity, keys *idempotency.Keeper, groups []Group) *httpapi.Router {
	lists, n := make([][]httpapi.Route, len(groups)), 0
	for i, g := range groups {
		lists[i] = g.Routes(d.Deps)
		n += len(lists[i])
	}
	routes := make([]httpapi.Route, 0, n) // one copy of the groups' routes
	for _, l := range lists {
		routes = append(routes, l...)
	}
	rt := httpapi.NewRouter(id, d.Limiter, d.Clock, routes)
	rt.Base = baseURL(d.BaseURL)
	rt.Keys = keys
	rt.Metrics = d.Metrics
	return rt
}

// Lazy serves the groups as Handler does, but builds the groups a request
// may need only on the first request for one of their Heads: the word
// after /admin/api/{version}/ or /admin/ in Shopify's forms, else the
// path's second segment. The shopify-paths function holds every group;
// building them all at once was a third of a millisecond of its cold
// start. The routers share one Identity and one Keeper.
func Lazy(d *Deps, groups ...Group) http.Handler {
	id, keys := d.identity(), idempotency.NewKeeper(d.Store, d.Clock)
	byHead := map[string][]Group{}
	for _, g := range groups {
		for _, h := range strings.Fields(g.Heads) {
			byHead[h] = append(byHead[h], g)
		}
	}
	l := lazy{routers: make(map[string]func() *httpapi.Router, len(byHead)),
		none: sync.OnceValue(func() *httpapi.Router { return handler(d, id, keys, nil) })}
	for h, gs := range byHead {
		l.routers[h] = sync.OnceValue(func() *httpapi.Router { return handler(d, id, keys, gs) })
	}
	return l
}

type lazy struct {
	routers map[string]func() *httpapi.Router
	none    func() *httpapi.Router // answers a path no group serves, as Handler's router does
}

func (l lazy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt := l.routers[head(r.URL.Path)]
	if rt == nil {
		rt = l.none
	}
	rt().ServeHTTP(w, r)
}

// head is the word a path's group is found by: "redirects" of
// /admin/api/2024-01/redirects/1.json, /admin/redirects.json and
// /web/redirects/count.json.
func head(path string) string {
	rest, ok := strings.CutPrefix(path, "/admin/api/")
	if ok {
		_, rest, _ = strings.Cut(rest, "/") // the version
	} else {
		_, rest, _ = strings.Cut(strings.TrimPrefix(path, "/"), "/") // the root
	}
	word, _, _ := strings.Cut(rest, "/")
	return strings.TrimSuffix(word, ".json")
}

// baseURL gives the base of the absolute URLs a request is answered with:
// the configured one, else (in Lambda, where the template cannot hand a
// function its own API's URL without a dependency cycle) https and the
// domain API Gateway received the request on, from the event's request
// context, never from a header: the $default stage's URL or a custom
// domain of the API. Without either the URLs are relative.
func baseURL(configured string) func(*http.Request) string {
	if configured != "" {
		return func(*http.Request) string { return configured }
	}
	return func(r *http.Request) string {
		gw, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
		if !ok || gw.DomainName == "" {
			return ""
		}
		base, err := config.ParseBaseURL("https://" + gw.DomainName)
		if err != nil {
			return ""
		}
		return base
	}
}

// SetupLogging makes the process's default logger the service's: JSON on
// stderr at LOG_LEVEL, with the Lambda request id of the invocation. Each
// main calls it once, at start-up, before Open; nothing else writes the
// default logger.
func SetupLogging(cfg config.Config) {
	slog.SetDefault(slog.New(lambdaRequestIDs{slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})}))
}

// SQS opens the SQS queue at url, at the endpoint: sqssend.Open for a
// function that only sends, sqsqueue.Open (the SQS client) for one that
// consumes the queue. Only the functions template.yaml gives a queue URL
// pass one to OpenWith: the SQS packages would cost every other
// function's cold start (their init, and the binary's size) for nothing.
type SQS func(endpoint, url string) queue.Queue

// Open is OpenWith without SQS: a queue URL in cfg is refused.
func Open(ctx context.Context, cfg config.Config) (*Deps, error) { return OpenWith(ctx, cfg, nil) }

// OpenWith sets up metrics, opens the configured store and queues (SQS
// through sqs), builds the deps (NewDeps) and picks the configured rate
// limiter.
func OpenWith(ctx context.Context, cfg config.Config, sqs SQS) (*Deps, error) {
	if sqs == nil && cfg.ThemeImportQueueURL != "" {
		return nil, errNoSQS("THEME_IMPORT_QUEUE_URL")
	}
	if sqs == nil && cfg.QueueURL != "" {
		return nil, errNoSQS("DELIVERY_QUEUE_URL")
	}
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	q, err := OpenQueue(cfg, st, sqs)
	if err != nil {
		return nil, err
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.System{}
	}
	if sq, ok := q.(*storequeue.Queue); ok {
		sq.UseClock(clk.Now) // a retry the clock's advance made due is delivered at once
	}
	if l, ok := st.(store.Local); ok {
		l.UseClock(clk.Now) // logs, dead letters and notifications expire by the service's time
	}
	d := &Deps{Deps: NewDeps(st, q, outbound.New(cfg.AllowPrivateDestinations), clk)}
	if !cfg.LocalFeed {
		UseStore(d.Deps, st, false) // the table's stream derives (functions/change-feed)
	}
	d.Metrics = metrics.New(os.Stderr, cfg.MetricsNamespace)
	d.TokenTTL = cfg.TokenTTL
	d.BaseURL = cfg.PublicBaseURL
	d.Owner = platform.Owner{SecretHash: cfg.OwnerSecretHash, Local: cfg.LocalOwner}
	d.TokenKey = cfg.OAuthTokenKey
	if cfg.ThemeImportQueueURL != "" {
		d.ThemeImports = sqs(cfg.SQSEndpoint, cfg.ThemeImportQueueURL)
	}
	points := ratelimit.DefaultPoints
	if cfg.PointsMax > 0 {
		points = ratelimit.PointsPlan{Max: cfg.PointsMax, Rate: cfg.PointsRate}
	}
	switch cfg.RateLimit {
	case "shared":
		d.Limiter = ratelimit.NewShared(st, clk.Now)
		d.Points = &ratelimit.SharedPoints{Store: st, Now: clk.Now, Plan: points}
	case "memory":
		d.Limiter = &ratelimit.Memory{Now: clk.Now}
		d.Points = &ratelimit.MemoryPoints{Now: clk.Now, Plan: points}
	}
	return d, nil
}

// NewDeps builds the dependencies every resource group is made of, with the
// hooks between groups wired (smart collection membership follows variant
// changes). Open and the test harness both build them here, so that a hook
// added once is in both.
func NewDeps(st store.Store, q queue.Queue, out *outbound.Client, clk clock.Clock) *platform.Deps {
	imports := storequeue.New(st, ThemeImportQueue)
	imports.UseClock(clk.Now)
	d := &platform.Deps{Clock: clk, IDs: ids.NewClock(clk.Now), Outbound: out, Queue: q, ThemeImports: imports,
		Metrics: metrics.New(os.Stderr, ""), Derivers: Derivers(), CleanUps: CleanUps(), Owner: platform.Owner{Local: true}}
	UseStore(d, st, true)
	d.ProductChanged = smartcollections.ProductChanged(d)
	return d
}

// Derivers are the change feed's work, by the partition of the records
// whose changes it follows from (docs/architecture.md, the change feed).
func Derivers() store.Derivers {
	return store.Derivers{
		redirects.Partition:        redirects.Derive,
		pages.Partition:            pages.Derive,
		collection.Partition:       customcollections.Derive,
		comments.Partition:         comments.Derive,
		articles.Partition:         articles.Derive,
		smartcollections.Partition: smartcollections.Derive,
		savedsearches.Partition:    savedsearches.Derive,
		country.Partition:          countries.Derive,
		collects.Partition:         collects.Derive,
		scripttags.Family:          scripttags.Derive, // script_tag#app#<app id>
		webhooks.Family:            webhooks.Derive,   // webhook#app#<app id>
		metafields.Partition:       metafields.Derive,
		// The events requests stage with their changes (events.Ops),
		// published in the log in id order.
		events.StagedPartition: events.Publish,
	}
}

// CleanUps are the clean-ups of removed owners, by the partition of the
// owners (store.CleanUps): what belonged to a record is removed after it,
// from the change feed.
func CleanUps() store.CleanUps {
	return store.CleanUps{
		pages.Partition:            pages.CleanUp,
		collection.Partition:       customcollections.CleanUp,
		articles.Partition:         articles.CleanUp,
		smartcollections.Partition: smartcollections.CleanUp,
	}
}

// OnPark counts a change parked (store.Fed, store.Derivers.ApplyOrPark) in
// the ChangesParked metric, which the ChangesParkedAlarm watches.
func OnPark(d *platform.Deps) func(ctx context.Context, record store.Key) {
	return func(ctx context.Context, record store.Key) { d.Metrics.ChangeParked(ctx, record.PK) }
}

// UseStore makes st d's store as requests and jobs use it: a moment's
// unavailability retried within the call (store.Retrying); with a local
// feed, each commit's derived work done right after it (store.Feed); and
// the transactions of a request made with an Idempotency-Key counted on
// its claim (idempotency.Wrap).
func UseStore(d *platform.Deps, st store.Store, localFeed bool) {
	inner := store.Retrying(st)
	d.Feed = nil
	if localFeed {
		d.Feed = store.Feed(st, d.Derivers) // Retrying within
		d.Feed.OnPark = OnPark(d)
		d.Feed.CleanUps = d.CleanUps
		inner = d.Feed
	}
	d.Store = idempotency.Wrap(inner)
}

// InjectFaults makes the injector fail a fraction of d's store and queue
// calls once it is started: the local runner's FAULT_RATE, and tests.
// Never the Lambda functions.
func InjectFaults(d *platform.Deps, in *faults.Injector) {
	UseStore(d, in.Store(store.Innermost(d.Store)), d.Feed != nil)
	d.Queue = in.Queue(d.Queue)
	d.ThemeImports = in.Queue(d.ThemeImports)
}

// DeliveryQueue names the store-kept delivery queue.
const DeliveryQueue = "deliveries"

// ThemeImportQueue names the store-kept theme import queue, used unless
// THEME_IMPORT_QUEUE_URL names an SQS queue.
const ThemeImportQueue = "theme-imports"

// OpenQueue opens the SQS delivery queue (through sqs) when
// DELIVERY_QUEUE_URL is set, else the queue kept in the store itself.
func OpenQueue(cfg config.Config, st store.Store, sqs SQS) (queue.Queue, error) {
	if cfg.QueueURL == "" {
		return storequeue.New(st, DeliveryQueue), nil
	}
	if sqs == nil {
		return nil, errNoSQS("DELIVERY_QUEUE_URL")
	}
	return sqs(cfg.SQSEndpoint, cfg.QueueURL), nil
}

func errNoSQS(name string) error {
	return fmt.Errorf("api: %s is set, but this program opens no SQS queue (api.OpenWith with sqssend.Open or sqsqueue.Open)", name)
}

// Dispatcher builds the webhook dispatcher over the deps.
func Dispatcher(d *platform.Deps, cfg config.Config) *delivery.Dispatcher {
	return &delivery.Dispatcher{Store: d.Store, Client: d.Outbound, IDs: d.IDs, Clock: d.Clock, RetryBase: cfg.RetryBase, Metrics: d.Metrics}
}

// OpenStore opens the embedded store or DynamoDB, as configured.
func OpenStore(ctx context.Context, cfg config.Config) (store.Store, error) {
	if cfg.Store == "dynamodb" {
		client, err := dynamostore.NewClient(ctx, cfg.Endpoint)
		if err != nil {
			return nil, err
		}
		return dynamostore.New(client, cfg.TableName), nil
	}
	return boltstore.Open(cfg.DataDir)
}
