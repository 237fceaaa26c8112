package admingraphql

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/ratelimit"
	"github.com/storeadmin/adminapi/shared/store"
)

// Executor runs the calling app's GraphQL requests against the schema,
// metered by its cost bucket.
type Executor struct {
	Schema *graphql.Schema
	// Points is the apps' cost buckets; nil lets every query through.
	Points platform.Points
	// svc is the operations each request's loader reads through.
	svc Service
}

// NewExecutor is the executor over d.
func NewExecutor(d *platform.Deps, owners map[string]metafields.Lookup) *Executor {
	svc := NewService(d)
	svc.Metafields = metafields.Service{Deps: d, Lookups: owners}
	s := Schema(svc)
	s.MapError = mapError
	return &Executor{Schema: s, Points: d.Points, svc: svc}
}

// Answer is a GraphQL answer: data (absent when the request never ran),
// errors, and the cost extension.
type Answer struct {
	Ran    bool
	Data   any
	Errors []*graphql.Error
	Cost   *Cost
}

// Cost is Shopify's extensions.cost.
type Cost struct {
	Requested int      `json:"requestedQueryCost"`
	Actual    *int     `json:"actualQueryCost"`
	Throttle  Throttle `json:"throttleStatus"`
}

// Throttle is the bucket after the request.
type Throttle struct {
	Max       float64 `json:"maximumAvailable"`
	Available float64 `json:"currentlyAvailable"`
	Rate      float64 `json:"restoreRate"`
}

// MarshalJSON writes the answer as Shopify does: data only when the
// request ran (null when its root was), errors only when there are some.
func (a Answer) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if a.Ran {
		m["data"] = a.Data
	}
	if len(a.Errors) > 0 {
		m["errors"] = a.Errors
	}
	if a.Cost != nil {
		m["extensions"] = map[string]any{"cost": a.Cost}
	}
	return json.Marshal(m)
}

// Execute prepares req, holds its requested cost in the app's bucket
// while it runs (THROTTLED when the bucket holds less, MAX_COST_EXCEEDED
// above the single query's maximum), runs it and gives back what it did
// not use. The error is one the whole answer is (the store unavailable:
// a 503 the client retries); every other failure is in the answer.
func (x *Executor) Execute(ctx context.Context, req *graphql.Request) (Answer, error) {
	p, errs := x.Schema.Prepare(req)
	if errs != nil {
		return Answer{Errors: errs}, nil
	}
	app := admin.AppFrom(ctx)
	cost := &Cost{Requested: p.Cost}
	// Unmetered (RATE_LIMIT=off), the answer shows a full bucket of the
	// default plan, as clients expect the figures.
	cost.Throttle = Throttle{Max: ratelimit.DefaultPoints.Max, Rate: ratelimit.DefaultPoints.Rate, Available: ratelimit.DefaultPoints.Max}
	if x.Points != nil {
		cost.Throttle = Throttle{Max: x.Points.Max(), Rate: x.Points.Rate(), Available: x.Points.Max()}
	}
	if p.Cost > graphql.MaxCost {
		e := graphql.Errorf("MAX_COST_EXCEEDED", "Query cost is %s, which exceeds the single query max cost limit (%d).",
			thousands(p.Cost), graphql.MaxCost)
		e.Extensions["cost"], e.Extensions["maxCost"] = p.Cost, graphql.MaxCost
		return Answer{Errors: []*graphql.Error{e}, Cost: cost}, nil
	}
	if x.Points != nil {
		avail, ok, err := x.Points.Spend(ctx, app.ID, float64(p.Cost))
		if err != nil {
			return Answer{}, err
		}
		cost.Throttle.Available = avail
		if !ok {
			e := graphql.Errorf("THROTTLED", "Throttled")
			e.Extensions["documentation"] = "https://shopify.dev/api/usage/rate-limits"
			return Answer{Errors: []*graphql.Error{e}, Cost: cost}, nil
		}
	}
	// the request's own roots, with its loader
	l := newLoader(x.svc)
	res := p.RunOn(ctx, query{x.svc, l}, mutation{x.svc, l})
	for _, e := range res.Errors {
		if errors.Is(e.Cause, store.ErrUnavailable) || errors.Is(e.Cause, queue.ErrUnavailable) {
			return Answer{}, e.Cause
		}
	}
	actual := res.Actual
	cost.Actual = &actual
	if unused := p.Cost - actual; unused > 0 && x.Points != nil {
		avail, err := x.Points.Refund(ctx, app.ID, float64(unused))
		if err == nil {
			cost.Throttle.Available = avail
		}
	}
	return Answer{Ran: true, Data: res.Data, Errors: res.Errors, Cost: cost}, nil
}

// thousands writes n as Shopify's message does: 1,502.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// mapError gives an operation's error its GraphQL answer: a scope the app
// lacks is ACCESS_DENIED, a bad argument BAD_REQUEST, with the REST
// message.
func mapError(err error) error {
	var ae *admin.Error
	if !errors.As(err, &ae) {
		return nil
	}
	code := map[string]string{admin.EFORBIDDEN: "ACCESS_DENIED", admin.EINVALID: "BAD_REQUEST", admin.EBADREQUEST: "BAD_REQUEST",
		admin.ENOTFOUND: "NOT_FOUND", admin.ETOOMANY: "THROTTLED"}[ae.Code]
	if code == "" {
		return nil
	}
	return graphql.Errorf(code, "%s", ae.Error())
}
