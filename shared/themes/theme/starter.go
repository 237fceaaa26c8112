package theme

import (
	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/store"
)

// Starter is the minimal working set of files every shop's main theme
// starts with (and a theme created without a zip): a layout, the index and
// product templates, the settings and a stylesheet.
var Starter = []struct{ Key, Value string }{
	{MainLayout, `<!doctype html>
<html>
  <head>
    <title>{{ page_title }}</title>
    {{ 'theme.css' | asset_url | stylesheet_tag }}
    {{ content_for_header }}
  </head>
  <body>
    {{ content_for_layout }}
  </body>
</html>
`},
	{"templates/index.liquid", `<h1>{{ shop.name }}</h1>
{% for product in collections.frontpage.products %}
  <a href="{{ product.url }}">{{ product.title }}</a>
{% endfor %}
`},
	{"templates/product.liquid", `<h1>{{ product.title }}</h1>
<div>{{ product.description }}</div>
<p>{{ product.price | money }}</p>
`},
	{"config/settings_data.json", `{"current":"Default","presets":{"Default":{}}}
`},
	{"assets/theme.css", `body { font-family: sans-serif; margin: 0 auto; max-width: 60rem; }
`},
}

// StarterOps are the writes of the starter files of a new theme (one
// transaction with the theme: each file is one small chunk).
func StarterOps(themeID int64, now admin.Time) []store.Op {
	var ops []store.Op
	for _, f := range Starter {
		rec := NewRecord(themeID, f.Key, []byte(f.Value), now)
		ops = append(ops, CreateOps(&rec, []byte(f.Value))...)
	}
	return ops
}

// MainOps are the writes of the theme every shop starts with: the main
// theme, the theme set naming it, and its starter files. The seed writes
// them once, with a marker, as it does the frontpage collection.
func MainOps(now admin.Time) []store.Op {
	r := Record{Theme: Theme{ID: MainID, Name: "Default", Role: RoleMain, Previewable: true, CreatedAt: now, UpdatedAt: now}}
	set := Set{IDs: []int64{MainID}, Main: MainID}
	ops := []store.Op{store.Put(r.Item(1), store.IfAbsent, 0), store.Put(set.Item(1), store.IfAbsent, 0)}
	return append(ops, StarterOps(MainID, now)...)
}
