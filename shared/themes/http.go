package themes

import (
	"context"
	"net/http"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Asset(ctx context.Context, themeID int64, key string, base string) (AssetAnswer, error)
	Assets(ctx context.Context, themeID int64, base string) ([]AssetAnswer, error)
	Create(ctx context.Context, in *Input) (theme.Theme, error)
	Delete(ctx context.Context, id int64) (theme.Theme, error)
	DeleteAsset(ctx context.Context, themeID int64, key string) error
	Get(ctx context.Context, id int64) (theme.Theme, error)
	List(ctx context.Context) ([]theme.Theme, error)
	PublicFile(ctx context.Context, themeID int64, name string) (theme.AssetRecord, []byte, error)
	PutAsset(ctx context.Context, themeID int64, in *AssetInput, base string) (AssetAnswer, error)
	Update(ctx context.Context, id int64, in *Input) (theme.Theme, error)
}

type handler struct{ operations }

// MaxAssetBody is the body limit of an asset PUT: a Base64 attachment of a
// MaxAssetSize asset and its JSON.
const MaxAssetBody = theme.MaxAssetSize*4/3 + 1<<20

// Routes returns the theme and asset endpoints, and the public route of
// the themes' assets/ files.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeThemes
	return []httpapi.Route{
		{Method: "GET", Path: "/web/themes.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/web/themes/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/web/themes.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/web/themes/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/web/themes/{id}.json", Scope: s, Handler: h.delete},
		{Method: "GET", Path: "/web/themes/{theme_id}/assets.json", Scope: s, Handler: h.assets},
		{Method: "PUT", Path: "/web/themes/{theme_id}/assets.json", Scope: s, Handler: h.putAsset, MaxBody: MaxAssetBody},
		{Method: "DELETE", Path: "/web/themes/{theme_id}/assets.json", Scope: s, Handler: h.deleteAsset},
		{Method: "GET", Path: "/web/themes/{theme_id}/assets/{name...}", Public: true, Handler: h.file},
	}
}

func present(t *theme.Theme, loc *time.Location) {
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.In(loc), t.UpdatedAt.In(loc)
}

func presentAsset(a *AssetAnswer, loc *time.Location) {
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.In(loc), a.UpdatedAt.In(loc)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	ts, err := h.List(r.Context())
	if err != nil {
		return err
	}
	loc := admin.ShopFrom(r.Context()).Location()
	for i := range ts {
		present(&ts[i], loc)
	}
	return httpapi.WriteList(w, plural, ts, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	t, err := h.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &t, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	t, err := h.Create(r.Context(), &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusCreated, &t, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	t, err := h.Update(r.Context(), id, &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &t, nil)
}

// delete answers the deleted theme itself, not wrapped (the Themes operations).
func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	t, err := h.Delete(r.Context(), id)
	if err != nil {
		return err
	}
	present(&t, admin.ShopFrom(r.Context()).Location())
	httpapi.WriteJSON(w, http.StatusOK, &t)
	return nil
}

func (h handler) write(w http.ResponseWriter, r *http.Request, status int, t *theme.Theme, fields httpapi.Fields) error {
	present(t, admin.ShopFrom(r.Context()).Location())
	return httpapi.WriteOne(w, status, wrapper, t, fields)
}

// assets is the list, or with asset[key] the single read.
func (h handler) assets(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "theme_id")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	fields := httpapi.ParseFields(q)
	loc := admin.ShopFrom(r.Context()).Location()
	if q.Has("asset[key]") {
		a, err := h.Asset(r.Context(), id, q.Get("asset[key]"), httpapi.BaseURL(r))
		if err != nil {
			return err
		}
		presentAsset(&a, loc)
		return httpapi.WriteOne(w, http.StatusOK, assetWrapper, &a, fields)
	}
	as, err := h.Assets(r.Context(), id, httpapi.BaseURL(r))
	if err != nil {
		return err
	}
	for i := range as {
		presentAsset(&as[i], loc)
	}
	return httpapi.WriteList(w, assetPlural, as, fields)
}

func (h handler) putAsset(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "theme_id")
	if err != nil {
		return err
	}
	var in AssetInput
	if err := httpapi.Decode(r, assetWrapper, &in); err != nil {
		return err
	}
	a, err := h.PutAsset(r.Context(), id, &in, httpapi.BaseURL(r))
	if err != nil {
		return err
	}
	presentAsset(&a, admin.ShopFrom(r.Context()).Location())
	return httpapi.WriteOne(w, http.StatusOK, assetWrapper, &a, nil)
}

func (h handler) deleteAsset(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "theme_id")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if !q.Has("asset[key]") {
		return admin.BadParam("asset[key]", "is required")
	}
	if err := h.DeleteAsset(r.Context(), id, q.Get("asset[key]")); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}

// file serves an assets/ file without a token.
func (h handler) file(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "theme_id")
	if err != nil {
		return err
	}
	rec, content, err := h.PublicFile(r.Context(), id, r.PathValue("name"))
	if err != nil {
		return err
	}
	return httpapi.WriteFile(w, r, rec.ContentType, rec.Checksum, content)
}
