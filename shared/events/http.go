package events

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Count(ctx context.Context, created dates.Range) (int, error)
	Get(ctx context.Context, id int64) (Event, error)
	List(ctx context.Context, f Filter, since *int64, w records.Window) ([]Event, records.Span, error)
	OfSubject(ctx context.Context, subjectType string, id int64, since *int64, w records.Window) ([]Event, records.Span, error)
}

type handler struct{ operations }

// Routes returns the events log endpoints (the Events operations). Events need no
// scope: every installed app may read the shop's log.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeNone
	return []httpapi.Route{
		{Method: "GET", Path: "/com/events.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/events/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/events/{id}.json", Scope: s, Handler: h.get},
		{Method: "GET", Path: "/com/orders/{id}/events.json", Scope: s, Handler: h.subjectList(Order)},
		{Method: "GET", Path: "/com/products/{id}/events.json", Scope: s, Handler: h.subjectList(Product)},
	}
}

const wrapper, plural = "event", "events"

func parseDates(q url.Values, shop *admin.Shop) (dates.Range, error) {
	r, err := dates.ParseRange(q, "created_at", shop.Location())
	r.Inclusive = true // events: at-or-after, at-or-before (docs/spec-gaps.md)
	return r, err
}

func parseFilter(q url.Values, shop *admin.Shop) (Filter, error) {
	f := Filter{Verb: q.Get("verb")}
	var err error
	if f.Created, err = parseDates(q, shop); err != nil {
		return f, err
	}
	if s := q.Get("filter"); s != "" {
		want := map[string]bool{}
		for _, name := range strings.Split(s, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !slices.Contains(SubjectTypes, name) {
				return f, admin.BadParam("filter", "must be a comma-separated list of "+strings.Join(SubjectTypes, ", "))
			}
			want[name] = true
		}
		for _, t := range SubjectTypes {
			if want[t] {
				f.Types = append(f.Types, t)
			}
		}
	}
	return f, nil
}

// present completes an event for output: timestamps in the shop's zone
// (loc), arguments always an array.
func present(ev *Event, loc *time.Location) {
	ev.CreatedAt = ev.CreatedAt.In(loc)
	if ev.Arguments == nil {
		ev.Arguments = []string{}
	}
}

func writeList(w http.ResponseWriter, r *http.Request, evs []Event, p httpapi.Page, span records.Span) error {
	loc := admin.ShopFrom(r.Context()).Location() // loaded once: LoadLocation parses the zone
	for i := range evs {
		present(&evs[i], loc)
	}
	return httpapi.WritePaged(w, r, plural, evs, p, span)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(r.Context()))
	if err != nil {
		return err
	}
	evs, span, err := h.List(r.Context(), f, p.Since(), p.Window())
	if err != nil {
		return err
	}
	return writeList(w, r, evs, p, span)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	created, err := parseDates(r.URL.Query(), admin.ShopFrom(r.Context()))
	if err != nil {
		return err
	}
	n, err := h.Count(r.Context(), created)
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	ev, err := h.Get(r.Context(), id)
	if err != nil {
		return err
	}
	present(&ev, admin.ShopFrom(r.Context()).Location())
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &ev, httpapi.ParseFields(r.URL.Query()))
}

// subjectList serves the events of one order or product, newest first; an
// unknown subject is 404.
func (h handler) subjectList(subjectType string) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := httpapi.ParseID(r, "id")
		if err != nil {
			return err
		}
		p, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		evs, span, err := h.OfSubject(r.Context(), subjectType, id, p.Since(), p.Window())
		if err != nil {
			return err
		}
		return writeList(w, r, evs, p, span)
	}
}
