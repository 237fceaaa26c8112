package redirects

import (
	"context"
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the redirect endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	s := admin.ScopeContent
	return []httpapi.Route{
		{Method: "GET", Path: "/web/redirects.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/web/redirects/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/web/redirects/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/web/redirects.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/web/redirects/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/web/redirects/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "redirect", "redirects"

// filter is the path and target filters of list and count.
type filter struct{ path, target string }

func parseFilter(q url.Values) filter {
	f := filter{target: q.Get("target")}
	if p := q.Get("path"); p != "" {
		f.path = NormalizePath(p)
	}
	return f
}

// byPath finds the redirect of a path through its guard: two GetItems.
func (h handler) byPath(ctx context.Context, path string) (*Redirect, error) {
	var g guard
	if _, err := records.Get(ctx, h.Store, pathKey(path), &g); err != nil {
		return nil, err
	}
	var r Redirect
	if _, err := records.Get(ctx, h.Store, key(g.ID), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f := parseFilter(r.URL.Query())
	var out []Redirect
	if f.path != "" {
		rd, err := h.byPath(r.Context(), f.path)
		switch {
		case admin.ErrorCode(err) == admin.ENOTFOUND:
		case err != nil:
			return err
		case rd.ID > p.SinceID && (f.target == "" || rd.Target == f.target) && p.Page == 1:
			out = append(out, *rd)
		}
		return httpapi.WriteList(w, plural, out, p.Fields)
	}
	items, err := records.List(r.Context(), h.Store, f.query(p.SinceID), nil, p.Offset(), p.Limit)
	if err != nil {
		return err
	}
	if out, err = records.DecodeAll[Redirect](items); err != nil {
		return err
	}
	return httpapi.WriteList(w, plural, out, p.Fields)
}

// query is the partition a list reads: all redirects, or those of a target.
func (f filter) query(sinceID int64) store.Query {
	q := store.Query{PK: partition}
	if f.target != "" {
		q = store.Query{Index: store.GSI1, PK: targetIndexKey + f.target}
	}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	return q
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	f := parseFilter(r.URL.Query())
	ctx := r.Context()
	switch {
	case f.path != "":
		rd, err := h.byPath(ctx, f.path)
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return httpapi.WriteCount(w, 0)
		}
		if err != nil {
			return err
		}
		if f.target != "" && rd.Target != f.target {
			return httpapi.WriteCount(w, 0)
		}
		return httpapi.WriteCount(w, 1)
	case f.target != "":
		n, err := h.Store.Count(ctx, f.query(0))
		if err != nil {
			return err
		}
		return httpapi.WriteCount(w, n)
	}
	n, err := records.Count(ctx, h.Store, partition)
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
	var rd Redirect
	if _, err := records.Get(r.Context(), h.Store, key(id), &rd); err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &rd, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	var rd Redirect
	if err := in.apply(&rd, true); err != nil {
		return err
	}
	_, err := records.Create(r.Context(), h.Store, h.IDs, func(id int64) ([]store.Op, error) {
		rd.ID = id
		return []store.Op{
			store.Put(rd.item(1), store.IfAbsent, 0),
			pathGuard(rd.Path, id),
			records.CountOp(partition, 1),
		}, nil
	})
	if store.FailedOp(err) == 1 {
		return admin.Invalid("path", admin.MsgTaken)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &rd, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	var rd Redirect
	err = records.Update(r.Context(), h.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		if err := records.Decode(it, &rd); err != nil {
			return nil, err
		}
		oldPath := rd.Path
		if err := in.apply(&rd, false); err != nil {
			return nil, err
		}
		ops := []store.Op{records.PutNext(rd.item(it.Version))}
		if rd.Path != oldPath {
			ops = append(ops, pathGuard(rd.Path, id), store.Delete(pathKey(oldPath), store.Always, 0))
		}
		return ops, nil
	})
	if store.FailedOp(err) == 1 {
		return admin.Invalid("path", admin.MsgTaken)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &rd, nil)
}

func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	err = records.Update(r.Context(), h.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		var rd Redirect
		if err := records.Decode(it, &rd); err != nil {
			return nil, err
		}
		return []store.Op{
			store.Delete(it.Key(), store.IfVersion, it.Version),
			store.Delete(pathKey(rd.Path), store.Always, 0),
			records.CountOp(partition, -1),
		}, nil
	})
	if err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
