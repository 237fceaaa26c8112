// Package scripttags serves /web/script_tags (docs/openapi.yaml: schema ScriptTag,
// the Script tags operations).
//
// Script tags belong to the app that created them, so the app is part of
// the partition: script_tag#app#<app id>/<id>. Another app's id is simply
// absent from the caller's partition (404), and an app's list reads only
// its own tags. GSI1 indexes each tag by app and src for the src filter;
// an entry per tag in script_tag#app#<app id>#by:updated_at orders them by
// updated_at for that range (created_at is the id's second, a key range).
// A request writes only the tag, stamped (records.Stamp); its entry and its
// app's count (count#script_tag#app#<app id>) are the change feed's
// (Derive).
package scripttags

import (
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// ScriptTag is the stored and returned record.
type ScriptTag struct {
	ID           int64      `json:"id"`
	Src          string     `json:"src"`
	Event        string     `json:"event"`
	DisplayScope string     `json:"display_scope"`
	CreatedAt    admin.Time `json:"created_at"`
	UpdatedAt    admin.Time `json:"updated_at"`
}

// Input is the writable part; pointers tell absent from given.
type Input struct {
	Src          *string `json:"src" null:"refuse"`
	Event        *string `json:"event" null:"refuse"`
	DisplayScope *string `json:"display_scope" null:"refuse"`
}

// DisplayScopes are the allowed display_scope values.
var DisplayScopes = []string{"online_store", "order_status", "all"}

const maxSrcLen = 1024

// Partition is the partition of an app's script tags; uninstalling an app
// deletes it.
func Partition(appID int64) string { return partitionPrefix + strconv.FormatInt(appID, 10) }

const partitionPrefix = "script_tag#app#"

// Family names the apps' tag partitions in the change feed's derivers
// (store.Derivers).
const Family = partitionPrefix

// appOf is the app whose partition pk is.
func appOf(pk string) (int64, error) {
	return strconv.ParseInt(strings.TrimPrefix(pk, partitionPrefix), 10, 64)
}

func key(appID, id int64) store.Key { return store.Key{PK: Partition(appID), SK: records.IDSK(id)} }

func srcIndexKey(appID int64, src string) string { return Partition(appID) + "#src#" + src }

func byUpdated(appID int64) string { return records.TimePartition(Partition(appID), "updated_at") }

// entries are the tag's index entries (records.Entry).
func (t *ScriptTag) entries(appID int64) []records.Entry {
	return []records.Entry{{Partition: byUpdated(appID), SK: records.TimeSK(t.UpdatedAt.Time, t.ID)}}
}

// Indexer rebuilds the tags' index keys and entries in a store written
// before them (records.Reindex).
var Indexer = records.Indexer{
	Name:       "script tags",
	Partitions: records.PerParent("app", Partition),
	Rewrite: func(it *store.Item) (records.Rewritten, error) {
		var t ScriptTag
		if err := records.Decode(it, &t); err != nil {
			return records.Rewritten{}, err
		}
		appID, err := appOf(it.PK)
		if err != nil {
			return records.Rewritten{}, err
		}
		return records.Rewritten{Item: t.item(appID, it.Version), Entries: t.entries(appID)}, nil
	},
}

func (t *ScriptTag) item(appID, version int64) store.Item {
	return store.Item{
		PK: Partition(appID), SK: records.IDSK(t.ID),
		GSI1PK: srcIndexKey(appID, t.Src), GSI1SK: records.IDSK(t.ID),
		Version: version,
		Data:    records.Encode(t),
	}
}

func (in *Input) apply(t *ScriptTag, create bool) error {
	var v admin.Validation
	if in.Src != nil || create {
		src := ""
		if in.Src != nil {
			src = strings.TrimSpace(*in.Src)
		}
		switch {
		case src == "":
			v.Add("src", admin.MsgBlank)
		case len(src) > maxSrcLen:
			v.Add("src", admin.TooLong(maxSrcLen))
		default:
			// The document's httpsURL; a URL valid but for its scheme is
			// told what is wrong with it.
			_, rest, _ := strings.Cut(src, "://")
			switch {
			case admin.IsHTTPSURL(src):
				t.Src = src
			case rest != "" && admin.IsHTTPSURL("https://"+rest):
				v.Add("src", admin.MsgHTTPSNeeded)
			default:
				v.Add("src", admin.MsgInvalid)
			}
		}
	}
	if in.Event != nil || create {
		switch {
		case in.Event == nil || strings.TrimSpace(*in.Event) == "":
			v.Add("event", admin.MsgBlank)
		case *in.Event != "onload":
			v.Add("event", admin.MsgNotInList)
		default:
			t.Event = *in.Event
		}
	}
	switch {
	case in.DisplayScope != nil:
		ok := false
		for _, s := range DisplayScopes {
			ok = ok || s == *in.DisplayScope
		}
		if !ok {
			v.Add("display_scope", admin.MsgNotInList)
		} else {
			t.DisplayScope = *in.DisplayScope
		}
	case create:
		t.DisplayScope = "all"
	}
	return v.Err()
}
