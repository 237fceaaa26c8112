// Package theme holds the theme and asset items (docs/openapi.yaml: schema Theme,
// schema Asset) that the themes resource and the seed loader both write: the theme
// record, the shop's theme set (the guard of the 20-theme limit and of the main
// and mobile roles), asset metadata and the chunked asset contents.
//
// Layout (docs/data-model.md):
//   - theme / <id>: the theme record.
//   - themeset / themeset: the ids of every theme and who holds main and
//     mobile. Every create, delete and role change writes it conditioned on
//     the version it read, so they take turns and the limit holds.
//   - asset#<theme id> / <key>: an asset's metadata and the id of its
//     current content (its blob).
//   - assetblob#<theme id>#<blob id> / <chunk number>: the content, in
//     chunks of ChunkSize bytes. A blob is never changed once written: a
//     replacement writes a new blob and then flips the asset's pointer.
package theme

import (
	"strconv"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Roles of schema Theme and schema ThemeRole.
const (
	RoleMain        = "main"
	RoleMobile      = "mobile"
	RoleUnpublished = "unpublished"
)

// Roles lists the role values, in the order the document gives them.
var Roles = []string{RoleMain, RoleMobile, RoleUnpublished}

// MaxThemes is the limit of themes a shop has: one main and at most 19 unpublished.
const MaxThemes = 20

// MainID is the id of the theme every shop starts with (seed).
const MainID = ids.SeedMax - 1

// Partition holds the theme records.
const Partition = "theme"

// Theme is the record as answered (schema Theme).
type Theme struct {
	ID           int64      `json:"id"`
	Name         string     `json:"name"`
	Role         string     `json:"role"`
	ThemeStoreID *int64     `json:"theme_store_id"`
	Previewable  bool       `json:"previewable"`
	Processing   bool       `json:"processing"`
	ImportError  *string    `json:"import_error"`
	CreatedAt    admin.Time `json:"created_at"`
	UpdatedAt    admin.Time `json:"updated_at"`
}

// Record is the stored theme: the answer plus what is never returned.
type Record struct {
	Theme
	// Src is the zip an import downloads; RequestedRole the role it takes
	// once its files are in place.
	Src           string `json:"src,omitempty"`
	RequestedRole string `json:"requested_role,omitempty"`
}

// Key addresses a theme record.
func Key(id int64) store.Key { return store.Key{PK: Partition, SK: records.IDSK(id)} }

// Item is the record's item at version v.
func (r *Record) Item(v int64) store.Item {
	k := Key(r.ID)
	return store.Item{PK: k.PK, SK: k.SK, Version: v, Data: records.Encode(r)}
}

// Set is the shop's theme set: every theme id, in creation order, and the
// holders of the published roles (0 when none).
type Set struct {
	IDs    []int64 `json:"ids"`
	Main   int64   `json:"main"`
	Mobile int64   `json:"mobile"`
}

// SetKey addresses the theme set.
var SetKey = store.Key{PK: "themeset", SK: "themeset"}

// SetItem is the set's item at version v.
func (s *Set) Item(v int64) store.Item {
	return store.Item{PK: SetKey.PK, SK: SetKey.SK, Version: v, Data: records.Encode(s)}
}

// Holder returns the id holding role (0 for none or unpublished).
func (s *Set) Holder(role string) int64 {
	switch role {
	case RoleMain:
		return s.Main
	case RoleMobile:
		return s.Mobile
	}
	return 0
}

// SetHolder makes id the holder of role, and takes any other role id held
// away from it (a theme holds one role).
func (s *Set) SetHolder(role string, id int64) {
	if s.Main == id {
		s.Main = 0
	}
	if s.Mobile == id {
		s.Mobile = 0
	}
	switch role {
	case RoleMain:
		s.Main = id
	case RoleMobile:
		s.Mobile = id
	}
}

// AssetPartition holds a theme's asset metadata items, keyed by asset key.
func AssetPartition(themeID int64) string { return "asset#" + strconv.FormatInt(themeID, 10) }

// AssetKey addresses one asset's metadata.
func AssetKey(themeID int64, key string) store.Key {
	return store.Key{PK: AssetPartition(themeID), SK: key}
}
