// Package scripttags serves /web/script_tags (spec §2.13, §4.13).
//
// Script tags belong to the app that created them, so the app is part of
// the partition: script_tag#app#<app id>/<id>. Another app's id is simply
// absent from the caller's partition (404), and an app's list reads only
// its own tags. GSI1 indexes each tag by app and src for the src filter.
package scripttags

import (
	"net/url"
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
	Src          *string `json:"src"`
	Event        *string `json:"event"`
	DisplayScope *string `json:"display_scope"`
}

// DisplayScopes are the allowed display_scope values.
var DisplayScopes = []string{"online_store", "order_status", "all"}

const maxSrcLen = 1024

// Partition is the partition of an app's script tags; uninstalling an app
// deletes it.
func Partition(appID int64) string { return "script_tag#app#" + strconv.FormatInt(appID, 10) }

func key(appID, id int64) store.Key { return store.Key{PK: Partition(appID), SK: records.IDSK(id)} }

func srcIndexKey(appID int64, src string) string { return Partition(appID) + "#src#" + src }

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
			u, err := url.Parse(src)
			switch {
			case err != nil || u.Host == "" || strings.ContainsAny(src, " \t\r\n<>\""):
				if err == nil && u.Scheme != "" && u.Scheme != "https" {
					v.Add("src", admin.MsgHTTPSNeeded)
				} else {
					v.Add("src", admin.MsgInvalid)
				}
			case u.Scheme != "https":
				v.Add("src", admin.MsgHTTPSNeeded)
			default:
				t.Src = src
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
