package webhooks

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the webhook endpoints. Webhooks need no scope: every app
// manages its own.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	s := admin.ScopeNone
	return []httpapi.Route{
		{Method: "GET", Path: "/admin/webhooks.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/admin/webhooks/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/admin/webhooks/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/admin/webhooks.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/admin/webhooks/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/admin/webhooks/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "webhook", "webhooks"

// filter holds the list and count filters: address narrows the app's
// webhooks through GSI2; topic and the date ranges are checked on each
// record read.
type filter struct {
	address, topic   string
	created, updated dates.Range
}

func parseFilter(q url.Values, shop *admin.Shop) (filter, error) {
	f := filter{address: strings.TrimSpace(q.Get("address")), topic: strings.TrimSpace(q.Get("topic"))}
	var err error
	if f.created, err = dates.ParseRange(q, "created_at", shop.Location()); err != nil {
		return f, err
	}
	f.updated, err = dates.ParseRange(q, "updated_at", shop.Location())
	return f, err
}

func (f *filter) query(appID, sinceID int64) store.Query {
	q := store.Query{PK: Partition(appID)}
	if f.address != "" {
		q = store.Query{Index: store.GSI2, PK: addressIndexKey(appID, f.address)}
	}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	return q
}

func (f *filter) matcher() records.Matcher {
	if f.topic == "" && f.created.Empty() && f.updated.Empty() {
		return nil
	}
	return func(it *store.Item) (bool, error) {
		w, err := decode(it)
		if err != nil {
			return false, err
		}
		return (f.topic == "" || w.Topic == f.topic) &&
			f.created.Contains(w.CreatedAt.Time) && f.updated.Contains(w.UpdatedAt.Time), nil
	}
}

// present moves the timestamps into the shop's zone for output.
func present(w *Webhook, shop *admin.Shop) {
	loc := shop.Location()
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.In(loc), w.UpdatedAt.In(loc)
	w.normalize()
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	items, err := records.List(ctx, h.Store, f.query(app.ID, p.SinceID), f.matcher(), p.Offset(), p.Limit)
	if err != nil {
		return err
	}
	out := make([]Webhook, len(items))
	for i := range items {
		if out[i], err = decode(&items[i]); err != nil {
			return err
		}
		present(&out[i], shop)
	}
	return httpapi.WriteList(w, plural, out, p.Fields)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	f, err := parseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	var n int
	if f.address == "" && f.matcher() == nil {
		n, err = records.Count(ctx, h.Store, Partition(app.ID))
	} else {
		n, err = records.CountMatching(ctx, h.Store, f.query(app.ID, 0), f.matcher())
	}
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	wh, err := Lookup(ctx, h.Store, admin.AppFrom(ctx).ID, id)
	if err != nil {
		return err
	}
	present(wh, admin.ShopFrom(ctx))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, wh, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	wh := Webhook{AppID: app.ID}
	if err := in.apply(&wh, true, h.Outbound.Refuses); err != nil {
		return err
	}
	wh.CreatedAt = admin.Now()
	wh.UpdatedAt = wh.CreatedAt
	var err error
	if wh.Subscribed, err = tick(ctx, h.Store, wh.Topic); err != nil {
		return err
	}
	_, err = records.Create(ctx, h.Store, h.IDs, func(id int64) ([]store.Op, error) {
		wh.ID = id
		return []store.Op{
			store.Put(wh.item(1), store.IfAbsent, 0),
			wh.guardOp(),
			records.CountOp(Partition(app.ID), 1),
		}, nil
	})
	if store.FailedOp(err) == 1 {
		return admin.Invalid("address", MsgAddressTaken)
	}
	if err != nil {
		return err
	}
	present(&wh, admin.ShopFrom(ctx))
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &wh, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	var wh Webhook
	err = records.Update(ctx, h.Store, key(app.ID, id), func(it *store.Item) ([]store.Op, error) {
		var err error
		if wh, err = decode(it); err != nil {
			return nil, err
		}
		oldGuard, oldTopic := guardKey(wh.AppID, wh.Topic, wh.Address), wh.Topic
		if err := in.apply(&wh, false, h.Outbound.Refuses); err != nil {
			return nil, err
		}
		if wh.Topic != oldTopic { // a new subscription: changes of the new topic from now on
			if wh.Subscribed, err = tick(ctx, h.Store, wh.Topic); err != nil {
				return nil, err
			}
		}
		wh.UpdatedAt = admin.Now()
		ops := []store.Op{records.PutNext(wh.item(it.Version))}
		if guardKey(wh.AppID, wh.Topic, wh.Address) != oldGuard {
			ops = append(ops, wh.guardOp(), store.Delete(oldGuard, store.Always, 0))
		}
		return ops, nil
	})
	if store.FailedOp(err) == 1 {
		return admin.Invalid("address", MsgAddressTaken)
	}
	if err != nil {
		return err
	}
	present(&wh, admin.ShopFrom(ctx))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &wh, nil)
}

func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	if err := Remove(ctx, h.Store, app.ID, id); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
