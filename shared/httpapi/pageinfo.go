package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/records"
)

// page_info cursors, as the original API's clients page: every list answers
// a Link header with rel="next" and rel="previous" URLs whose page_info
// stands for the list's filters and the sort key to continue from. A
// page_info is signed with the shop's cursor key and bound to the route
// and the app, so a client can neither forge one nor replay it on another
// list; its content is not secret, only opaque.

const pageInfoParam = "page_info"

// pageInfo is what a page_info carries.
type pageInfo struct {
	Path  string `json:"p"` // the request path, .json included
	App   int64  `json:"a"`
	Query string `json:"q"` // the list's filters, encoded
	Key   string `json:"k"`
	Back  bool   `json:"b,omitempty"`
}

// maxPageInfo bounds what the router decodes (a page_info of a list with
// every filter at its longest is far smaller).
const maxPageInfo = 8 << 10

// cursorCtxKey carries the cursor of the request's verified page_info, which
// ParsePage hands to the operation.
type cursorCtxKey struct{}

// identityCtxKey carries the router's Identity to WritePaged, which signs
// the Link header's cursors with the shop's key: a dependency, not request
// data, but handlers get only (w, r) and the router is built after them;
// passing it explicitly would change every list handler's WritePaged call
// and give handlers a field beside their operations.
type identityCtxKey struct{}

// pagingParams are the parameters a page_info replaces or keeps: everything
// else is a filter, carried inside it.
var pagingParams = map[string]bool{"limit": true, "page": true, "fields": true, pageInfoParam: true}

func (p *pageInfo) sign(key []byte) string {
	body, _ := json.Marshal(p)
	enc := base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(mac(key, enc))
}

func mac(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("page_info\x00"))
	m.Write([]byte(s))
	return m.Sum(nil)[:18]
}

// expandPageInfo turns a request carrying page_info back into the request
// it continues: the filters it stands for replace the query (limit and
// fields kept), and its cursor goes in the context for ParsePage. Any other
// parameter beside page_info is 400 naming it.
func expandPageInfo(ctx context.Context, r *http.Request, id Identity) (*http.Request, error) {
	if raw := r.URL.RawQuery; !strings.Contains(raw, pageInfoParam) && !strings.Contains(raw, "%") {
		return r, nil // most GETs: no parse
	}
	q := r.URL.Query()
	raw := q.Get(pageInfoParam)
	if raw == "" {
		if _, ok := q[pageInfoParam]; ok {
			return r, admin.BadParam(pageInfoParam, "is invalid")
		}
		return r, nil
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !pagingParams[name] || name == "page" {
			return r, admin.BadParam(name, "cannot be combined with page_info: only limit and fields may be")
		}
	}
	key, err := id.CursorKey(ctx)
	if err != nil {
		return r, err
	}
	invalid := admin.BadParam(pageInfoParam, "is invalid: use the page_info of a Link header of this list, unchanged")
	enc, sig, ok := strings.Cut(raw, ".")
	if !ok || len(raw) > maxPageInfo {
		return r, invalid
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(key, enc)) {
		return r, invalid
	}
	body, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return r, invalid
	}
	var p pageInfo
	app := admin.AppFrom(ctx)
	if json.Unmarshal(body, &p) != nil || p.Path != r.URL.Path+".json" || app == nil || p.App != app.ID {
		return r, invalid
	}
	filters, err := url.ParseQuery(p.Query)
	if err != nil {
		return r, invalid
	}
	for _, name := range []string{"limit", "fields"} {
		if v, ok := q[name]; ok {
			filters[name] = v
		}
	}
	r2 := r.WithContext(context.WithValue(ctx, cursorCtxKey{}, records.Cursor{Key: p.Key, Back: p.Back}))
	u := *r.URL
	u.RawQuery = filters.Encode()
	r2.URL = &u
	return r2, nil
}

// cursorFrom returns the cursor of an expanded page_info.
func cursorFrom(r *http.Request) (records.Cursor, bool) {
	c, ok := r.Context().Value(cursorCtxKey{}).(records.Cursor)
	return c, ok
}

// WritePaged writes a page of a list, as WriteList does, with the Link
// header leading to the pages before and after it (none where span says
// there is none).
func WritePaged[T any](w http.ResponseWriter, r *http.Request, wrapper string, items []T, p Page, span records.Span) error {
	if span.Before || span.After {
		link, err := links(r, p, span)
		if err != nil {
			return err
		}
		if link != "" {
			w.Header().Set("Link", link)
		}
	}
	return WriteList(w, wrapper, items, p.Fields)
}

func links(r *http.Request, p Page, span records.Span) (string, error) {
	ctx := r.Context()
	id, _ := ctx.Value(identityCtxKey{}).(Identity)
	app := admin.AppFrom(ctx)
	if id == nil || app == nil {
		return "", nil
	}
	key, err := id.CursorKey(ctx)
	if err != nil {
		return "", err
	}
	q := r.URL.Query()
	for name := range pagingParams {
		delete(q, name)
	}
	path := r.URL.Path + ".json"
	base := BaseURL(r) + shownPath(ctx, path) + "?limit=" + strconv.Itoa(p.Limit)
	if v := r.URL.Query().Get("fields"); v != "" {
		base += "&fields=" + url.QueryEscape(v)
	}
	base += "&" + pageInfoParam + "="
	info := pageInfo{Path: path, App: app.ID, Query: q.Encode()}
	var parts []string
	if span.Before {
		info.Key, info.Back = span.First, true
		parts = append(parts, "<"+base+info.sign(key)+`>; rel="previous"`)
	}
	if span.After {
		info.Key, info.Back = span.Last, false
		parts = append(parts, "<"+base+info.sign(key)+`>; rel="next"`)
	}
	return strings.Join(parts, ", "), nil
}
