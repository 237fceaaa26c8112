// Package redirects serves /web/redirects (docs/openapi.yaml: schema Redirect, the
// Redirects operations).
//
// Items: the redirect at redirect/<id>, its unique path guarded by
// redirect#path/<path>, indexed by target in GSI1 for the target filter.
package redirects

import (
	"net/url"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Redirect is the stored and returned record.
type Redirect struct {
	ID     int64  `json:"id"`
	Path   string `json:"path"`
	Target string `json:"target"`
}

// Input is the writable part; pointers tell absent from empty.
type Input struct {
	Path   *string `json:"path" null:"refuse"`
	Target *string `json:"target" null:"refuse"`
}

const (
	// Partition holds the redirects.
	Partition      = "redirect"
	partition      = Partition
	pathPartition  = "redirect#path"
	targetIndexKey = "redirect#target#"
	// maxLen keeps a path within DynamoDB's 1 KiB sort-key limit.
	maxLen = 1024
)

func key(id int64) store.Key { return store.Key{PK: partition, SK: records.IDSK(id)} }

func pathKey(path string) store.Key { return store.Key{PK: pathPartition, SK: path} }

func (r *Redirect) item(version int64) store.Item {
	return store.Item{
		PK: partition, SK: records.IDSK(r.ID),
		GSI1PK: targetIndexKey + r.Target, GSI1SK: records.IDSK(r.ID),
		Version: version,
		Data:    records.Encode(r),
	}
}

// pathGuard claims a path for a redirect id.
func pathGuard(path string, id int64) store.Op {
	return store.Put(store.Item{PK: pathPartition, SK: path, Version: 1, Data: records.Encode(guard{ID: id})}, store.IfAbsent, 0)
}

type guard struct {
	ID int64 `json:"id"`
}

// apply validates in and merges it into r; create requires both fields.
func (in *Input) apply(r *Redirect, create bool) error {
	var v admin.Validation
	if in.Path != nil || create {
		p := ""
		if in.Path != nil {
			p = NormalizePath(*in.Path)
		}
		switch {
		case p == "":
			v.Add("path", admin.MsgBlank)
		case len(p) > maxLen:
			v.Add("path", admin.TooLong(maxLen))
		default:
			r.Path = p
		}
	}
	if in.Target != nil || create {
		t := ""
		if in.Target != nil {
			t = strings.TrimSpace(*in.Target)
		}
		switch {
		case t == "":
			v.Add("target", admin.MsgBlank)
		case len(t) > maxLen:
			v.Add("target", admin.TooLong(maxLen))
		case !validTarget(t):
			v.Add("target", admin.MsgURIInvalid)
		default:
			r.Target = t
		}
	}
	return v.Err()
}

// NormalizePath reduces a full URL to its path and query, and makes a bare
// path absolute: redirect paths are always stored as absolute paths
// without a domain.
func NormalizePath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if u, err := url.Parse(p); err == nil && u.Scheme != "" && u.Host != "" {
		p = u.EscapedPath()
		if u.RawQuery != "" {
			p += "?" + u.RawQuery
		}
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// validTarget: an absolute http(s) URL with a host, or an absolute path
// (not "//"), in URI characters, as the document's redirectTarget says.
func validTarget(t string) bool { return admin.IsRedirectTarget(t) }

// Indexer recounts the redirects from their records (records.Reindex): a
// redirect has no entries, only its count, which the change feed keeps.
var Indexer = records.Indexer{
	Name:       "redirects",
	Partitions: records.OnePartition(partition),
	Rewrite: func(it *store.Item) (records.Rewritten, error) {
		return records.Rewritten{Item: *it, Counted: []records.Counted{{Counter: partition, Query: store.Query{PK: partition}}}}, nil
	},
}
