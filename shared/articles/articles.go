// Package articles serves the articles of blogs (docs/openapi.yaml: schema
// Article, the Articles operations).
//
// Items:
//   - article/<id>, GSI1 blog#<blog id>#article/<id>: a blog's articles in id
//     (so creation) order; lists read that one partition.
//   - handle#article#<blog id>/<handle>: the handle guard, unique per blog.
//   - count#blog#<blog id>#article: the blog's sharded article count (the
//     change feed's, as the next two).
//   - articleauthor/<author>, Nums n: how many articles the author has.
//   - articletag#<blog id>/<tag>, Nums n: how many of the blog's articles
//     carry the tag.
//   - file#<file id>: the chunks of an attached image (shared/images).
//
// Metafields are owned by ("article", id). Every change writes the record
// (stamped, records.Stamp; a delete its tomb, records.Remove), its guard,
// image chunks and metafields in one transaction; its counts, counters,
// entries and Article event are the change feed's (Derive).
package articles

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Article is the returned record (schema Article).
type Article struct {
	ID             int64         `json:"id"`
	BlogID         int64         `json:"blog_id"`
	Title          string        `json:"title"`
	Handle         string        `json:"handle"`
	Author         string        `json:"author"`
	UserID         *int64        `json:"user_id"`
	BodyHTML       string        `json:"body_html"`
	SummaryHTML    *string       `json:"summary_html"`
	Tags           string        `json:"tags"`
	Image          *images.Image `json:"image,omitempty"`
	PublishedAt    admin.Time    `json:"published_at"`
	TemplateSuffix *string       `json:"template_suffix"`
	CreatedAt      admin.Time    `json:"created_at"`
	UpdatedAt      admin.Time    `json:"updated_at"`
}

// record is the stored form: the article plus the id of its attached image
// file, so that replacing the image or deleting the article removes the chunks.
type record struct {
	Article
	ImageFile int64 `json:"image_file_id,omitempty"`
}

// Blog is the part of a seeded blog articles need.
type Blog struct {
	ID     int64  `json:"id"`
	Title  string `json:"title"`
	Handle string `json:"handle"`
}

const (
	// Partition holds every article by id.
	Partition       = "article"
	authorPartition = "articleauthor"
	maxAuthor       = 255
	maxTag          = 255
	maxTags         = 40
	maxBody         = 256 << 10
	maxSummary      = 64 << 10
)

// Key is the item key of an article.
func Key(id int64) store.Key { return store.Key{PK: Partition, SK: records.IDSK(id)} }

// BlogIndex is the GSI1 partition of a blog's articles (sort key IDSK(id)),
// also the partition name of the blog's article count.
func BlogIndex(blogID int64) string { return "blog#" + strconv.FormatInt(blogID, 10) + "#article" }

// HandleNamespace is the namespace of a blog's article handles.
func HandleNamespace(blogID int64) string { return "article#" + strconv.FormatInt(blogID, 10) }

func tagPartition(blogID int64) string { return "articletag#" + strconv.FormatInt(blogID, 10) }

func blogKey(id int64) store.Key { return store.Key{PK: parents.BlogPartition, SK: records.IDSK(id)} }

// StatePartition is the GSI2 partition of a blog's published (or
// unpublished) articles, also the name of its counter: published_status
// reads and counts only its own.
func StatePartition(blogID int64, published bool) string {
	return records.ExactPartition(BlogIndex(blogID), "published", strconv.FormatBool(published))
}

func (r *record) item(version int64) store.Item {
	return store.Item{
		PK: Partition, SK: records.IDSK(r.ID),
		GSI1PK: BlogIndex(r.BlogID), GSI1SK: records.IDSK(r.ID),
		GSI2PK: StatePartition(r.BlogID, !r.PublishedAt.IsZero()), GSI2SK: records.IDSK(r.ID),
		Version: version, Data: records.Encode(r),
	}
}

// Lookup reads an article by id; admin.NotFound when there is none.
func Lookup(ctx context.Context, st store.Store, id int64) (*Article, error) {
	var r record
	if _, err := records.Get(ctx, st, Key(id), &r); err != nil {
		return nil, err
	}
	return &r.Article, nil
}

// LookupBlog reads a seeded blog by id; admin.NotFound when there is none.
func LookupBlog(ctx context.Context, st store.Store, id int64) (*Blog, error) {
	var b Blog
	if _, err := records.Get(ctx, st, blogKey(id), &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// Subject is the article as the events log names it (its storefront path is
// /blogs/<blog handle>/<article handle>). Comment events reuse it with the
// comment's id as ID.
func (a *Article) Subject(blog *Blog) events.Subject {
	return events.Subject{Type: events.Article, ID: a.ID, Path: "/blogs/" + blog.Handle + "/" + a.Handle, Label: a.Title}
}

// Filter is the list and count filters of the Articles operations: a handle, a
// tag, an author and the publishing filters.
type Filter struct {
	Handle, Tag, Author string
	publishing.Filter
}

func (f *Filter) matches(a *Article) bool {
	return (f.Handle == "" || a.Handle == f.Handle) && (f.Author == "" || a.Author == f.Author) &&
		(f.Tag == "" || slices.Contains(a.TagList(), f.Tag)) &&
		f.Filter.Matches(a.CreatedAt, a.UpdatedAt, a.PublishedAt)
}

func (f *Filter) empty() bool {
	return f.Handle == "" && f.Tag == "" && f.Author == "" && f.Filter.Empty()
}

// matcher checks f on an article item after sinceID.
func (f *Filter) matcher(sinceID int64) records.Matcher {
	return func(it *store.Item) (bool, error) {
		var a Article
		if err := records.Decode(it, &a); err != nil {
			return false, err
		}
		return a.ID > sinceID && f.matches(&a), nil
	}
}

// source is what a list or count of f (without handle) reads in the blog,
// the most selective the filters allow (records.Plan): a tag's or an
// author's entries, an updated_at or published_at range (in that time's
// order), the published state's articles (GSI2), else the blog's (GSI1);
// since_id and created_at (the id's second) bound the id-ordered ones by
// key. Every source but the blog's and the state's holds Ref entries
// (refs). match is nil when the keys answer f whole.
func (f *Filter) source(blogID, sinceID int64) (q store.Query, match records.Matcher, refs bool) {
	blog := BlogIndex(blogID)
	p := records.Plan{All: store.Query{Index: store.GSI1, PK: blog}, Created: f.Created, SinceID: sinceID}
	for _, e := range []struct{ field, value string }{{"tag", f.Tag}, {"author", f.Author}} {
		if e.value != "" {
			k := records.Exact(blog, e.field, e.value)
			k.Ref = true
			p.Keyed = append(p.Keyed, k)
		}
	}
	f.Filter.Keyed(&p, blog, true, func(published bool) store.Query {
		return store.Query{Index: store.GSI2, PK: StatePartition(blogID, published)}
	})
	q, exact := p.Source()
	q.Desc = sinceID == 0 // newest first, ascending from a since_id
	if !exact {
		match = f.matcher(sinceID)
	}
	return q, match, p.Refs()
}

// entries are the article's index entries in its blog: Ref entries (an
// article shares its transaction with its image's chunks) by tag, author,
// updated_at and published_at.
func (r *record) entries() []records.Entry {
	blog, sk := BlogIndex(r.BlogID), records.IDSK(r.ID)
	es := []records.Entry{
		{Partition: records.ExactPartition(blog, "author", r.Author), SK: sk, Ref: true},
		{Partition: records.TimePartition(blog, "updated_at"), SK: records.TimeSK(r.UpdatedAt.Time, r.ID), Ref: true},
	}
	if !r.PublishedAt.IsZero() {
		es = append(es, records.Entry{Partition: records.TimePartition(blog, "published_at"), SK: records.TimeSK(r.PublishedAt.Time, r.ID), Ref: true})
	}
	for _, t := range r.TagList() {
		es = append(es, records.Entry{Partition: records.ExactPartition(blog, "tag", t), SK: sk, Ref: true})
	}
	return es
}

// Indexer rebuilds the articles' index keys and entries in a store
// written before them (records.Reindex).
var Indexer = records.Indexer{
	Name:       "articles",
	Partitions: records.OnePartition(Partition),
	Rewrite: func(it *store.Item) (records.Rewritten, error) {
		var r record
		if err := records.Decode(it, &r); err != nil {
			return records.Rewritten{}, err
		}
		next := r.item(it.Version)
		next.Nums, next.ExpiresAt, next.Data = it.Nums, it.ExpiresAt, it.Data
		return records.Rewritten{Item: next, Entries: r.entries()}, nil
	},
}

// TagsQuery is how the tags read orders and cuts its list: Popular sorts
// by how many articles use each tag; Limit (0: none) caps the list.
type TagsQuery struct {
	Popular bool
	Limit   int
}

// TagList returns the article's tags (stored normalized: sorted, ", "-joined).
func (a *Article) TagList() []string { return splitTags(a.Tags) }

func splitTags(s string) []string {
	var out []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// normalizeTags trims the tags, drops empty and repeated ones and sorts them.
func normalizeTags(s string) []string {
	tags := splitTags(s)
	sortNames(tags)
	return slices.Compact(tags)
}

// sortNames sorts alphabetically: case-insensitively, then byte order.
func sortNames(s []string) {
	slices.SortFunc(s, func(a, b string) int {
		if c := cmp.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
}

// Input is the body of an article create or update.
type Input struct {
	Title          *string                `json:"title" null:"refuse"`
	Handle         *string                `json:"handle" null:"refuse"`
	Author         *string                `json:"author" null:"refuse"`
	BodyHTML       *string                `json:"body_html" null:"refuse"`
	SummaryHTML    *string                `json:"summary_html"`
	Tags           *string                `json:"tags" null:"refuse"`
	TemplateSuffix admin.Optional[string] `json:"template_suffix"`
	Published      *bool                  `json:"published" null:"refuse"`
	PublishedAt    json.RawMessage        `json:"published_at"`
	Image          json.RawMessage        `json:"image"`
	Metafields     []metafields.Input     `json:"metafields" null:"refuse"`
}

// publish is what the input says about the published state, for publishing.Apply.
type publish struct {
	published *bool
	at        *admin.Time
}

// apply validates in and merges it into a (all but publishing, image and
// handle claims, which need the store or the network).
func (in *Input) apply(a *Article, create bool, loc *time.Location) (publish, images.Change, error) {
	var v admin.Validation
	v.Title(in.Title, create, &a.Title)
	handles.Check(&v, in.Handle)
	if in.Author != nil {
		switch s := strings.TrimSpace(*in.Author); {
		case s == "" && !create:
			v.Add("author", admin.MsgBlank)
		case utf8.RuneCountInString(s) > maxAuthor:
			v.Add("author", admin.TooLong(maxAuthor))
		case s != "":
			a.Author = s
		}
	}
	if in.BodyHTML != nil {
		if len(*in.BodyHTML) > maxBody {
			v.Add("body_html", admin.TooMany(maxBody>>10, "KB"))
		}
		a.BodyHTML = *in.BodyHTML
	}
	if in.SummaryHTML != nil {
		switch {
		case len(*in.SummaryHTML) > maxSummary:
			v.Add("summary_html", admin.TooMany(maxSummary>>10, "KB"))
		case strings.TrimSpace(*in.SummaryHTML) == "":
			a.SummaryHTML = nil
		default:
			s := *in.SummaryHTML
			a.SummaryHTML = &s
		}
	}
	if in.Tags != nil {
		tags := normalizeTags(*in.Tags)
		for _, t := range tags {
			if utf8.RuneCountInString(t) > maxTag {
				v.Add("tags", "contains a tag that is too long (maximum is 255 characters)")
				break
			}
		}
		if len(tags) > maxTags {
			v.Add("tags", admin.TooMany(maxTags, "tags"))
		}
		a.Tags = strings.Join(tags, ", ")
	}
	admin.SetText(&a.TemplateSuffix, in.TemplateSuffix)
	pub := publish{published: in.Published}
	if raw := strings.TrimSpace(string(in.PublishedAt)); raw != "" {
		var s string
		switch {
		case raw == "null":
			// A null published_at hides the article, unless `published` says otherwise.
			if pub.published == nil {
				hide := false
				pub.published = &hide
			}
		case json.Unmarshal([]byte(raw), &s) == nil:
			if t, ok := ParsePublishedAt(s, loc); ok {
				at := admin.Time{Time: t.UTC().Truncate(time.Second)}
				pub.at = &at
			} else {
				v.Add("published_at", admin.MsgInvalid)
			}
		default:
			v.Add("published_at", admin.MsgInvalid)
		}
	}
	img := images.ParseChange(in.Image, &v)
	metafields.ValidateInputs(&v, in.Metafields)
	return pub, img, v.Err()
}

// textLayouts are the date-time texts published_at accepts beside ISO 8601,
// such as `Thu Mar 24 15:45:47 UTC 2011`.
var textLayouts = []string{time.UnixDate, time.RubyDate, time.RFC1123, time.RFC1123Z, time.RFC850, time.RFC822, time.RFC822Z, time.ANSIC}

// ParsePublishedAt reads a published_at input: ISO 8601, a date or date and
// time without offset (in the shop's zone, loc), or a date-time text. A zone
// abbreviation must be UTC, GMT or one of the shop's zone; any other would
// silently be read as UTC, so it is refused.
func ParsePublishedAt(s string, loc *time.Location) (time.Time, bool) {
	if t, ok := dates.Parse(s, loc); ok {
		return t, !t.IsZero()
	}
	s = strings.Join(strings.Fields(s), " ")
	for _, layout := range textLayouts {
		t, err := time.ParseInLocation(layout, s, loc)
		if err != nil {
			continue
		}
		if name, off := t.Zone(); off == 0 && name != "" && name != "UTC" && name != "GMT" && t.Location() != loc {
			continue // an unknown abbreviation (or a numeric zone read as one)
		}
		return t, !t.IsZero() && admin.InRange(t, loc)
	}
	return time.Time{}, false
}

// counterOps adjust the author and tag counters from old to next (nil for
// a create or a delete). Counters at zero stay behind and are skipped when read.
func counterOps(old, next *Article) []store.Op {
	var ops []store.Op
	oldAuthor, nextAuthor := "", ""
	var oldTags, nextTags []string
	blogID := int64(0)
	if old != nil {
		oldAuthor, oldTags, blogID = old.Author, old.TagList(), old.BlogID
	}
	if next != nil {
		nextAuthor, nextTags, blogID = next.Author, next.TagList(), next.BlogID
	}
	add := func(k store.Key, d int64) store.Op { return store.Add(k, store.Always, map[string]int64{"n": d}) }
	if oldAuthor != nextAuthor {
		if oldAuthor != "" {
			ops = append(ops, add(store.Key{PK: authorPartition, SK: oldAuthor}, -1))
		}
		if nextAuthor != "" {
			ops = append(ops, add(store.Key{PK: authorPartition, SK: nextAuthor}, 1))
		}
	}
	for _, t := range oldTags {
		if !slices.Contains(nextTags, t) {
			ops = append(ops, add(store.Key{PK: tagPartition(blogID), SK: t}, -1))
		}
	}
	for _, t := range nextTags {
		if !slices.Contains(oldTags, t) {
			ops = append(ops, add(store.Key{PK: tagPartition(blogID), SK: t}, 1))
		}
	}
	// The published-state counters (StatePartition).
	switch {
	case old == nil && next != nil:
		ops = append(ops, records.CountOp(StatePartition(blogID, !next.PublishedAt.IsZero()), 1))
	case next == nil && old != nil:
		ops = append(ops, records.CountOp(StatePartition(blogID, !old.PublishedAt.IsZero()), -1))
	case old != nil && old.PublishedAt.IsZero() != next.PublishedAt.IsZero():
		ops = append(ops, records.CountOp(StatePartition(blogID, !old.PublishedAt.IsZero()), -1),
			records.CountOp(StatePartition(blogID, !next.PublishedAt.IsZero()), 1))
	}
	return ops
}

var (
	errTooManyChanges = admin.Invalid("base", "too many changes for one request: send fewer tags or metafields at a time")
	errTooLarge       = admin.Invalid("body_html", "is too long (the article may take at most 350 KB stored)")
)

// names reads a counter partition: the names whose count is positive, with counts.
func names(ctx context.Context, st store.Store, partition string) ([]string, map[string]int64, error) {
	var out []string
	counts := map[string]int64{}
	err := records.Each(ctx, st, store.Query{PK: partition}, func(it *store.Item) error {
		if n := it.Nums["n"]; n > 0 {
			out = append(out, it.SK)
			counts[it.SK] = n
		}
		return nil
	})
	return out, counts, err
}

// The names an article's change stamps (records.StampNames): its blog's
// handle, which its event's path shows.
const nameBlogHandle = "blog_handle"

func stampedNames(blog *Blog) map[string]string {
	return map[string]string{nameBlogHandle: blog.Handle}
}

// stamp marks a request's write of an article as its change
// (records.Stamp), with the blog as its event shows it.
func stamp(ctx context.Context, it *store.Item, change int64, blog *Blog) {
	records.Stamp(ctx, it, change)
	records.StampNames(it, stampedNames(blog))
}

// derived are the writes the change feed derives from a change of an
// article, its event aside: the blog's count, the published-state, author
// and tag counters and the index entries. old and next are the article
// before and after (nil when absent), it its item as written (nil when
// deleted).
func derived(old, next *record, it *store.Item) []store.Op {
	var ops []store.Op
	var before, after *Article
	var was, is []records.Entry
	if old != nil {
		before, was = &old.Article, old.entries()
	}
	if next != nil {
		after, is = &next.Article, next.entries()
	}
	switch {
	case old == nil:
		ops = append(ops, records.CountOp(BlogIndex(next.BlogID), 1))
	case next == nil:
		ops = append(ops, records.CountOp(BlogIndex(old.BlogID), -1))
	}
	ops = append(ops, counterOps(before, after)...)
	return append(ops, records.IndexOps(it, was, is)...)
}

// eventItems are the items an event's publication in the log writes (the
// event, its count, its verb entry, the log's head); feedMarker the change
// feed's marker, which shares the derived transaction.
const eventItems, feedMarker = 4, 1

// fits says whether a request's ops (with extra more the caller adds) and
// what the change feed derives from its change (derived, its event and
// marker) each fit one transaction, and, as they were one transaction
// before the feed derived them, together too, so that a request refused
// then still is.
func fits(ops []store.Op, extra int, old, next *record, it *store.Item) bool {
	d := derived(old, next, it)
	return records.Fits(append(slices.Clip(ops), d...), extra+1) && len(d)+eventItems+feedMarker <= store.MaxTransactItems
}

// Derive is the change feed's work for a change to an article
// (store.Deriver): its blog's counts, its author and tag counters, its
// index entries and its Article event (a delete's from its tomb), naming
// the blog as the request read it.
func Derive(ctx context.Context, st store.Store, c store.Change) ([]store.Op, error) {
	old, next, err := records.DecodeChange[record](c)
	if err != nil {
		return nil, err
	}
	ops := derived(old, next, c.New)
	verb, rec, it := events.Create, next, c.New
	switch {
	case next == nil:
		ops = append(ops, store.CleanUpOp(c)) // its comments, image and metafields (CleanUp)
		if c.Tomb == nil {                    // removed by no request
			return ops, nil
		}
		verb, rec, it = events.Destroy, old, c.Tomb
	case old != nil:
		verb = events.UpdateVerb(publishing.Between(old.PublishedAt, next.PublishedAt))
	}
	blog, err := blogOf(ctx, st, it, rec.BlogID)
	if err != nil {
		return nil, err
	}
	evs, err := events.OfChange(ctx, st, it, rec.Subject(blog), verb, "")
	return append(ops, evs...), err
}

// blogOf is the blog as the change's request read it (its stamped names;
// for a change stamped before they were, as read now).
func blogOf(ctx context.Context, st store.Store, it *store.Item, id int64) (*Blog, error) {
	facts, _, err := records.FactsOf(it)
	if err != nil {
		return nil, err
	}
	if handle, ok := facts.Names[nameBlogHandle]; ok {
		return &Blog{ID: id, Handle: handle}, nil
	}
	b, err := LookupBlog(ctx, st, id)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return &Blog{ID: id}, nil
	}
	return b, err
}
