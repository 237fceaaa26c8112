package scripttags

import (
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the script tag endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	s := admin.ScopeScriptTags
	return []httpapi.Route{
		{Method: "GET", Path: "/web/script_tags.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/web/script_tags/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/web/script_tags/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/web/script_tags.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/web/script_tags/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/web/script_tags/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "script_tag", "script_tags"

// filter holds the list filters; src narrows the partition through GSI1,
// the date ranges are checked on each record read.
type filter struct {
	src              string
	created, updated dates.Range
}

func parseFilter(q url.Values, shop *admin.Shop) (filter, error) {
	f := filter{src: q.Get("src")}
	var err error
	if f.created, err = dates.ParseRange(q, "created_at", shop.Location()); err != nil {
		return f, err
	}
	f.updated, err = dates.ParseRange(q, "updated_at", shop.Location())
	return f, err
}

func (f *filter) query(appID, sinceID int64) store.Query {
	q := store.Query{PK: Partition(appID)}
	if f.src != "" {
		q = store.Query{Index: store.GSI1, PK: srcIndexKey(appID, f.src)}
	}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	return q
}

func (f *filter) matcher() records.Matcher {
	if f.created.Empty() && f.updated.Empty() {
		return nil
	}
	return func(it *store.Item) (bool, error) {
		var t ScriptTag
		if err := records.Decode(it, &t); err != nil {
			return false, err
		}
		return f.created.Contains(t.CreatedAt.Time) && f.updated.Contains(t.UpdatedAt.Time), nil
	}
}

// present moves the timestamps into the shop's zone for output.
func present(t *ScriptTag, shop *admin.Shop) {
	loc := shop.Location()
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.In(loc), t.UpdatedAt.In(loc)
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
	tags, err := records.DecodeAll[ScriptTag](items)
	if err != nil {
		return err
	}
	for i := range tags {
		present(&tags[i], shop)
	}
	return httpapi.WriteList(w, plural, tags, p.Fields)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	f, err := parseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	var n int
	if f.src == "" && f.matcher() == nil {
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
	var t ScriptTag
	if _, err := records.Get(ctx, h.Store, key(admin.AppFrom(ctx).ID, id), &t); err != nil {
		return err
	}
	present(&t, admin.ShopFrom(ctx))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &t, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	var t ScriptTag
	if err := in.apply(&t, true); err != nil {
		return err
	}
	t.CreatedAt = admin.Now()
	t.UpdatedAt = t.CreatedAt
	_, err := records.Create(ctx, h.Store, h.IDs, func(id int64) ([]store.Op, error) {
		t.ID = id
		return []store.Op{
			store.Put(t.item(app.ID, 1), store.IfAbsent, 0),
			records.CountOp(Partition(app.ID), 1),
		}, nil
	})
	if err != nil {
		return err
	}
	present(&t, admin.ShopFrom(ctx))
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &t, nil)
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
	var t ScriptTag
	err = records.Update(ctx, h.Store, key(app.ID, id), func(it *store.Item) ([]store.Op, error) {
		if err := records.Decode(it, &t); err != nil {
			return nil, err
		}
		if err := in.apply(&t, false); err != nil {
			return nil, err
		}
		t.UpdatedAt = admin.Now()
		return []store.Op{records.PutNext(t.item(app.ID, it.Version))}, nil
	})
	if err != nil {
		return err
	}
	present(&t, admin.ShopFrom(ctx))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &t, nil)
}

func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	// One round trip: the delete only succeeds if the caller's tag exists.
	err = records.Transact(ctx, h.Store,
		store.Delete(key(app.ID, id), store.IfPresent, 0),
		records.CountOp(Partition(app.ID), -1))
	if store.FailedOp(err) == 0 {
		return admin.NotFound
	}
	if err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
