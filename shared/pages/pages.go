// Package pages serves /web/pages (docs/openapi.yaml: schema Page, the Pages
// operations).
//
// Items: page/<id>; its handle is claimed by handle#page/<handle>; its metafields
// are metafield items owned by ("page", id). Its count, event and index
// entries follow from its changes on the change feed (Derive). Each page is
// listed again by its index entries (records.Entry, Ref entries: the page's
// key, not a copy, so that a body's update rewrites none of them and a
// filtered page reads its pages as an unfiltered one does): page#title=<title>
// and page#published=<true|false> in id order, both counted, and
// page#by:updated_at and page#by:published_at (published pages only) in the order
// of that time, so that every filter of the Pages operations reads only its
// matches. A page's created_at is the second its id was assigned, so a created_at
// range is a range of ids.
package pages

import (
	"context"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Page is the stored and returned record.
type Page struct {
	ID             int64      `json:"id"`
	ShopID         int64      `json:"shop_id"`
	Title          string     `json:"title"`
	Handle         string     `json:"handle"`
	BodyHTML       string     `json:"body_html"`
	Author         string     `json:"author"`
	PublishedAt    admin.Time `json:"published_at"`
	TemplateSuffix *string    `json:"template_suffix"`
	CreatedAt      admin.Time `json:"created_at"`
	UpdatedAt      admin.Time `json:"updated_at"`
}

// Input is the writable part; pointers tell absent from given.
type Input struct {
	Title          *string                `json:"title" null:"refuse"`
	Handle         *string                `json:"handle" null:"refuse"`
	BodyHTML       *string                `json:"body_html" null:"refuse"`
	Author         *string                `json:"author" null:"refuse"`
	TemplateSuffix admin.Optional[string] `json:"template_suffix"`
	Published      *bool                  `json:"published" null:"refuse"`
	Metafields     []metafields.Input     `json:"metafields" null:"refuse"`
}

const (
	// Partition holds the pages.
	Partition = "page"
	partition = Partition
	// HandleNamespace is the namespace of page handles.
	HandleNamespace = "page"
	maxTitle        = 255
)

func key(id int64) store.Key { return store.Key{PK: partition, SK: records.IDSK(id)} }

func (p *Page) item(version int64) store.Item {
	return store.Item{PK: partition, SK: records.IDSK(p.ID), Version: version, Data: records.Encode(p)}
}

// Index entry partitions.
var (
	byUpdated   = records.TimePartition(partition, "updated_at")
	byPublished = records.TimePartition(partition, "published_at")
)

func titlePartition(title string) string { return records.ExactPartition(partition, "title", title) }

func statePartition(published bool) string {
	return records.ExactPartition(partition, "published", strconv.FormatBool(published))
}

// entries are the page's index entries (see the package comment).
func (p *Page) entries() []records.Entry {
	sk := records.IDSK(p.ID)
	published := !p.PublishedAt.IsZero()
	es := []records.Entry{
		{Partition: titlePartition(p.Title), SK: sk, Counted: true, Ref: true},
		{Partition: statePartition(published), SK: sk, Counted: true, Ref: true},
		{Partition: byUpdated, SK: records.TimeSK(p.UpdatedAt.Time, p.ID), Ref: true},
	}
	if published {
		es = append(es, records.Entry{Partition: byPublished, SK: records.TimeSK(p.PublishedAt.Time, p.ID), Ref: true})
	}
	return es
}

// Indexer rebuilds the pages' entries in a store written before them
// (records.Reindex).
var Indexer = records.Indexer{
	Name:       "pages",
	Partitions: records.OnePartition(partition),
	Rewrite: func(it *store.Item) (records.Rewritten, error) {
		var p Page
		err := records.Decode(it, &p)
		return records.Rewritten{Item: *it, Entries: p.entries(), Counted: []records.Counted{{Counter: partition, Query: store.Query{PK: partition}}}}, err
	},
}

// Derive is the change feed's work for a change to a page
// (store.Deriver): its index entries and count, and its event (a delete's
// from its tomb).
func Derive(ctx context.Context, st store.Store, c store.Change) ([]store.Op, error) {
	old, next, err := records.DecodeChange[Page](c)
	if err != nil {
		return nil, err
	}
	var ops []store.Op
	switch {
	case old == nil:
		ops = append(records.IndexOps(c.New, nil, next.entries()), records.CountOp(partition, 1))
	case next == nil:
		ops = append(records.IndexOps(nil, old.entries(), nil), records.CountOp(partition, -1), store.CleanUpOp(c))
		if c.Tomb == nil { // removed by no request
			return ops, nil
		}
		evs, err := events.OfChange(ctx, st, c.Tomb, old.subject(), events.Destroy, "")
		return append(ops, evs...), err
	default:
		ops = records.IndexOps(c.New, old.entries(), next.entries())
	}
	verb := events.Create
	if old != nil {
		verb = events.UpdateVerb(publishing.Between(old.PublishedAt, next.PublishedAt))
	}
	evs, err := events.OfChange(ctx, st, c.New, next.subject(), verb, "")
	return append(ops, evs...), err
}

// CleanUp removes a removed page's metafields (store.CleanUp).
func CleanUp(ctx context.Context, st store.Store, owner *store.Item) error {
	id, err := records.ParseIDSK(owner.SK)
	if err != nil {
		return err
	}
	ops, err := metafields.DeleteOwnerOps(ctx, st, metafields.OwnerPage, id)
	if err != nil {
		return err
	}
	return records.TransactBatches(ctx, st, ops)
}

// subject is the page as the events log names it.
func (p *Page) subject() events.Subject {
	return events.Subject{Type: events.Page, ID: p.ID, Path: "/pages/" + p.Handle, Label: p.Title}
}

// apply validates in and merges it into p (all but publishing and handle
// claims, which need the store).
func (in *Input) apply(p *Page, create bool) error {
	var v admin.Validation
	v.RequiredText("title", in.Title, create, maxTitle, &p.Title)
	if in.Handle != nil && !handles.Valid(*in.Handle) {
		v.Add("handle", admin.MsgInvalid)
	}
	if in.BodyHTML != nil {
		p.BodyHTML = *in.BodyHTML
		if len(records.Encode(p)) > records.MaxData {
			v.Add("body_html", "is too long (the page may take at most 350 KB stored)")
		}
	}
	if in.Author != nil {
		p.Author = strings.TrimSpace(*in.Author)
	}
	admin.SetText(&p.TemplateSuffix, in.TemplateSuffix)
	metafields.ValidateInputs(&v, in.Metafields)
	return v.Err()
}
