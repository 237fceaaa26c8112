// Package themes serves themes and their assets (docs/openapi.yaml: schema Theme,
// schema Asset, schema ThemeRole, the Themes operations, the Themes (assets)
// operations) and imports themes from zip files through the theme-import queue.
// The items are in shared/themes/theme, which the seed shares.
package themes

import (
	"net/url"
	"slices"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

const (
	wrapper      = "theme"
	plural       = "themes"
	assetWrapper = "asset"
	assetPlural  = "assets"
)

// Limits and messages of themes.
const (
	MaxName = 255
	// MaxURL bounds a src address.
	MaxURL = 2048

	MsgTooMany        = "cannot be created: a shop has at most 20 themes"
	MsgMainDelete     = "the main theme cannot be deleted"
	MsgProcessing     = "cannot be set while the theme is processing"
	MsgNotPreviewable = "cannot be set: the theme has no working files (its import failed)"
	MsgMainUnpublish  = "cannot be unpublished while the theme is main: publish another theme as main"
	MsgThemeBusy      = "the theme is still processing"
)

// Input is the theme of a create or update body.
type Input struct {
	Name *string `json:"name" null:"refuse"`
	Src  *string `json:"src" null:"refuse"`
	Role *string `json:"role" null:"refuse"`
}

// valid checks an input; create requires a name.
func (in *Input) valid(create bool, client *outbound.Client) (name, src, role string, err error) {
	var v admin.Validation
	v.RequiredText("name", in.Name, create, MaxName, &name)
	if create && in.Src != nil {
		src = strings.TrimSpace(*in.Src)
		switch {
		case src == "":
		case len(src) > MaxURL:
			v.Add("src", admin.TooLong(MaxURL))
		case !httpURL(src):
			v.Add("src", admin.MsgInvalid)
		case client.Refuses(src):
			v.Add("src", outbound.MsgRefused)
		}
	}
	if in.Role != nil {
		role = *in.Role
		if !slices.Contains(theme.Roles, role) {
			v.Add("role", admin.MsgNotInList)
		}
	}
	return name, src, role, v.Err()
}

// httpURL reports whether s is an absolute http(s) URL with a host (the
// document's httpURL).
func httpURL(s string) bool { return admin.IsHTTPURL(s) }

// AssetInput is the asset of a PUT body: the key and one source.
type AssetInput struct {
	Key        *string `json:"key" null:"refuse"`
	Value      *string `json:"value" null:"refuse"`
	Attachment *string `json:"attachment" null:"refuse"`
	Src        *string `json:"src" null:"refuse"`
	SourceKey  *string `json:"source_key" null:"refuse"`
}

// AssetAnswer is an asset as answered: metadata, its public address and,
// for a single read, its content.
type AssetAnswer struct {
	theme.Asset
	PublicURL  *string `json:"public_url"`
	Value      *string `json:"value,omitempty"`
	Attachment *string `json:"attachment,omitempty"`
}

// PublicPath is the token-less address of an assets/ file of a theme.
func PublicPath(themeID int64, key string) string {
	name := strings.TrimPrefix(key, "assets/")
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/web/themes/" + itoa(themeID) + "/assets/" + strings.Join(segs, "/")
}

func answer(rec *theme.AssetRecord, base string) AssetAnswer {
	a := AssetAnswer{Asset: rec.Asset}
	if theme.Public(rec.Key) {
		u := base + PublicPath(rec.ThemeID, rec.Key)
		a.PublicURL = &u
	}
	return a
}
