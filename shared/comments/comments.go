// Package comments serves /web/comments (docs/openapi.yaml: schema Comment, schema
// CommentStatus, the Comments operations).
//
// Items: comment/<id>, indexed by GSI1 article#<article id>#comment and GSI2
// blog#<blog id>#comment so that the article_id and blog_id filters read only
// their own comments; each of the three partitions has a sharded counter. Index
// entries (records.Entry, copies the change feed writes) list each
// comment again under comment#status=<status> and, unless published,
// comment#published=false, both counted: the status and published_status filters
// read only their matches and count in O(1); and under comment#by:updated_at and
// comment#by:published_at, ordered by those times for their ranges. created_at is
// the id's second, so its ranges are id ranges. A request commits the comment
// only (stamped, records.Stamp); its counters, entries and a create's Comment
// event are the change feed's (Derive). The moderation actions (schema
// CommentStatus) are optimistic updates of the comment.
package comments

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/textile"
)

// Comment is the stored and returned record.
type Comment struct {
	ID          int64      `json:"id"`
	ArticleID   int64      `json:"article_id"`
	BlogID      int64      `json:"blog_id"`
	Author      string     `json:"author"`
	Email       string     `json:"email"`
	Body        string     `json:"body"`
	BodyHTML    string     `json:"body_html"`
	IP          string     `json:"ip"`
	UserAgent   *string    `json:"user_agent"`
	Status      string     `json:"status"`
	PublishedAt admin.Time `json:"published_at"`
	CreatedAt   admin.Time `json:"created_at"`
	UpdatedAt   admin.Time `json:"updated_at"`
}

// Statuses of schema CommentStatus.
const (
	StatusPending    = "pending"
	StatusUnapproved = "unapproved"
	StatusPublished  = "published"
	StatusSpam       = "spam"
	StatusRemoved    = "removed"
)

// Input is the body of a comment create or update.
type Input struct {
	Body      *string `json:"body" null:"refuse"`
	Author    *string `json:"author" null:"refuse"`
	Email     *string `json:"email" null:"refuse"`
	IP        *string `json:"ip"`
	UserAgent *string `json:"user_agent"`
	BlogID    *int64  `json:"blog_id"`
	ArticleID *int64  `json:"article_id"`
	// PublishedAt is raw so that null and malformed values are 422s naming it.
	PublishedAt json.RawMessage `json:"published_at"`
}

// Client is what the request itself says of its sender: the address and
// user agent a create records when the body gives none.
type Client struct {
	IP, UserAgent string
}

// Filter is the list and count filters of the Comments operations.
type Filter struct {
	ArticleID, BlogID             int64
	Created, Updated, PublishedAt dates.Range
	Published                     publishing.Status
	Status                        string // one of Statuses, or "" for any
}

// Statuses are the values of the status filter.
var Statuses = []string{StatusPending, StatusPublished, StatusUnapproved, StatusSpam, StatusRemoved}

// source is the query a list or count of f reads, the most selective the
// filters allow (records.Plan): an article's or a blog's comments through
// their index, a status's entries, an updated_at or published_at range (in
// that time's order), the published state's entries (published_status=
// published is status published), else every comment. match checks what
// the keys leave unchecked; nil when they answer f exactly.
func (f *Filter) source(sinceID int64) (store.Query, records.Matcher) {
	p := records.Plan{All: store.Query{PK: partition}, Created: f.Created, SinceID: sinceID}
	if f.ArticleID > 0 {
		p.Keyed = append(p.Keyed, records.Keyed{Query: store.Query{Index: store.GSI1, PK: ArticlePartition(f.ArticleID)}})
	}
	if f.BlogID > 0 {
		p.Keyed = append(p.Keyed, records.Keyed{Query: store.Query{Index: store.GSI2, PK: BlogPartition(f.BlogID)}})
	}
	if f.Status != "" {
		k := records.Keyed{Query: store.Query{PK: statusPartition(f.Status)}}
		if f.Published != publishing.Any && (f.Status == StatusPublished) == (f.Published == publishing.OnlyPublished) {
			k.Answers = 2 // the status says the published state too
		}
		p.Keyed = append(p.Keyed, k)
	}
	if !f.Updated.Empty() {
		p.Keyed = append(p.Keyed, records.Timed(partition, "updated_at", f.Updated))
	}
	if !f.PublishedAt.Empty() {
		p.Keyed = append(p.Keyed, records.Timed(partition, "published_at", f.PublishedAt))
	}
	switch f.Published {
	case publishing.OnlyPublished:
		p.Keyed = append(p.Keyed, records.Keyed{Query: store.Query{PK: statusPartition(StatusPublished)}})
	case publishing.OnlyUnpublished:
		p.Keyed = append(p.Keyed, records.Keyed{Query: store.Query{PK: unpublishedPartition}})
	}
	return p.Read(func(it *store.Item) (bool, error) {
		var c Comment
		if err := records.Decode(it, &c); err != nil {
			return false, err
		}
		return c.ID > sinceID && (f.ArticleID == 0 || c.ArticleID == f.ArticleID) && (f.BlogID == 0 || c.BlogID == f.BlogID) && f.matches(&c), nil
	})
}

func (f *Filter) matches(c *Comment) bool {
	switch f.Published {
	case publishing.OnlyPublished:
		if c.Status != StatusPublished {
			return false
		}
	case publishing.OnlyUnpublished:
		if c.Status == StatusPublished {
			return false
		}
	}
	return (f.Status == "" || c.Status == f.Status) && f.Created.Contains(c.CreatedAt.Time) &&
		f.Updated.Contains(c.UpdatedAt.Time) && f.PublishedAt.Contains(c.PublishedAt.Time)
}

const (
	partition = "comment"
	// articlePartition is where shared/articles keeps articles.
	articlePartition = "article"
	maxAuthor        = 255
	maxBody          = 20000 // characters; the rendered HTML must fit a DynamoDB item too
	maxUserAgent     = 1000
	maxExcerpt       = 100
)

func Key(id int64) store.Key { return store.Key{PK: partition, SK: records.IDSK(id)} }

// ArticlePartition is the GSI1 partition of an article's comments.
func ArticlePartition(articleID int64) string {
	return parents.ChildPartition(articlePartition, articleID, partition)
}

// BlogPartition is the GSI2 partition of a blog's comments.
func BlogPartition(blogID int64) string {
	return parents.ChildPartition(parents.BlogPartition, blogID, partition)
}

func (c *Comment) item(version int64) store.Item {
	sk := records.IDSK(c.ID)
	return store.Item{
		PK: partition, SK: sk,
		GSI1PK: ArticlePartition(c.ArticleID), GSI1SK: sk,
		GSI2PK: BlogPartition(c.BlogID), GSI2SK: sk,
		Version: version, Data: records.Encode(c),
	}
}

// Index entry partitions: a status's comments, and the unpublished ones
// (every status but published), both counted; every comment by updated_at
// and by published_at.
var (
	unpublishedPartition = records.ExactPartition(partition, "published", "false")
	byUpdated            = records.TimePartition(partition, "updated_at")
	byPublished          = records.TimePartition(partition, "published_at")
)

func statusPartition(status string) string {
	return records.ExactPartition(partition, "status", status)
}

// entries are the comment's index entries.
func (c *Comment) entries() []records.Entry {
	sk := records.IDSK(c.ID)
	es := []records.Entry{
		{Partition: statusPartition(c.Status), SK: sk, Counted: true},
		{Partition: byUpdated, SK: records.TimeSK(c.UpdatedAt.Time, c.ID)},
	}
	if !c.PublishedAt.IsZero() {
		es = append(es, records.Entry{Partition: byPublished, SK: records.TimeSK(c.PublishedAt.Time, c.ID)})
	}
	if c.Status != StatusPublished {
		es = append(es, records.Entry{Partition: unpublishedPartition, SK: sk, Counted: true})
	}
	return es
}

// Rewrite is the write replacing a comment read at version by next,
// stamped as a change (change: a fresh id, records.Stamp), so that the
// change feed moves its index entries (Derive). Every change of a stored
// comment goes through it (tests and tools that set states the API does
// not produce included), so entries never lag.
func Rewrite(ctx context.Context, next *Comment, version, change int64) []store.Op {
	it := next.item(version + 1)
	records.Stamp(ctx, &it, change)
	return []store.Op{store.Put(it, store.IfVersion, version)}
}

// Indexer rebuilds the comments' index keys and entries in a store written
// before them (records.Reindex).
var Indexer = records.Indexer{
	Name:       "comments",
	Partitions: records.OnePartition(partition),
	Rewrite: func(it *store.Item) (records.Rewritten, error) {
		var c Comment
		if err := records.Decode(it, &c); err != nil {
			return records.Rewritten{}, err
		}
		next := c.item(it.Version)
		next.Nums, next.ExpiresAt, next.Data = it.Nums, it.ExpiresAt, it.Data
		return records.Rewritten{Item: next, Entries: c.entries()}, nil
	},
}

// countOps adjust the counters of the comment's three partitions.
func (c *Comment) countOps(delta int64) []store.Op {
	return []store.Op{
		records.CountOp(partition, delta),
		records.CountOp(ArticlePartition(c.ArticleID), delta),
		records.CountOp(BlogPartition(c.BlogID), delta),
	}
}

// excerpt is the start of the body shown in the event message.
func excerpt(body string) string { return truncate(strings.TrimSpace(body), maxExcerpt) }

// articleRef and blogRef are the fields of the article and blog items
// (written by shared/articles and the seed) that a comment needs.
type articleRef struct {
	ID     int64  `json:"id"`
	BlogID int64  `json:"blog_id"`
	Title  string `json:"title"`
	Handle string `json:"handle"`
}

type blogRef struct {
	ID     int64  `json:"id"`
	Title  string `json:"title"`
	Handle string `json:"handle"`
}

func articleKey(id int64) store.Key { return store.Key{PK: articlePartition, SK: records.IDSK(id)} }

func blogKey(id int64) store.Key { return store.Key{PK: parents.BlogPartition, SK: records.IDSK(id)} }

// subject is the comment as the events log names it: the article's link
// with the comment's id.
func subject(id int64, b *blogRef, a *articleRef) events.Subject {
	return events.Subject{Type: events.Comment, ID: id, Path: "/blogs/" + b.Handle + "/" + a.Handle, Label: a.Title}
}

// names are what a comment's create stamps of its article for its event
// (createdSubject).
func names(b *blogRef, a *articleRef) map[string]string {
	s := subject(0, b, a)
	return map[string]string{nameLabel: s.Label, namePath: s.Path}
}

// apply validates the fields create and update share and merges them into
// c. loc reads a published_at without offset; published_at itself is
// applied by the caller (only update accepts it).
func (in *Input) apply(v *admin.Validation, c *Comment, create bool, loc *time.Location) (publishedAt admin.Time, publish bool) {
	if in.Author != nil || create {
		a := strings.TrimSpace(deref(in.Author))
		switch {
		case a == "":
			v.Add("author", admin.MsgBlank)
		case utf8.RuneCountInString(a) > maxAuthor:
			v.Add("author", admin.TooLong(maxAuthor))
		default:
			c.Author = a
		}
	}
	if in.Body != nil || create {
		b := deref(in.Body)
		switch {
		case strings.TrimSpace(b) == "":
			v.Add("body", admin.MsgBlank)
		case utf8.RuneCountInString(b) > maxBody:
			v.Add("body", admin.TooLong(maxBody))
		default:
			c.Body, c.BodyHTML = b, textile.Render(b)
		}
	}
	if in.Email != nil || create {
		e := strings.TrimSpace(deref(in.Email))
		if !validEmail(e) {
			v.Add("email", admin.MsgInvalid)
		} else {
			c.Email = e
		}
	}
	if !create && len(in.PublishedAt) > 0 {
		var s string
		if err := json.Unmarshal(in.PublishedAt, &s); err != nil || in.PublishedAt[0] != '"' {
			v.Add("published_at", admin.MsgInvalid)
		} else if t, ok := dates.Parse(s, loc); !ok {
			v.Add("published_at", admin.MsgInvalid)
		} else {
			return admin.Time{Time: t.UTC().Truncate(time.Second)}, true
		}
	}
	return admin.Time{}, false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// validEmail accepts a plain address local@domain (the document's email
// pattern) of at most 254 characters.
func validEmail(e string) bool { return len(e) <= 254 && admin.IsEmail(e) }

// truncate cuts s to at most n characters.
func truncate(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// action is a moderation transition of schema CommentStatus.
type action struct {
	name string
	from []string // nil: any state
	to   string
	desc string // the states of from, for the error message
}

// actionNamed returns the moderation action of a route; every route names
// one of actions.
func actionNamed(name string) *action {
	for i := range actions {
		if actions[i].name == name {
			return &actions[i]
		}
	}
	panic("comments: no action " + name)
}

var actions = []action{
	{name: "approve", from: []string{StatusPending, StatusUnapproved}, to: StatusPublished, desc: "pending or unapproved"},
	{name: "spam", to: StatusSpam},
	{name: "not_spam", from: []string{StatusSpam}, to: StatusPublished, desc: "spam"},
	{name: "remove", to: StatusRemoved},
	{name: "restore", from: []string{StatusRemoved}, to: StatusPublished, desc: "removed"},
}

func (a *action) allowed(status string) bool {
	if a.from == nil {
		return true
	}
	for _, s := range a.from {
		if s == status {
			return true
		}
	}
	return false
}

// apply moves c to the action's state; changed is false when it is there
// already (spam of a spam comment, remove of a removed one).
func (a *action) apply(c *Comment, now admin.Time) (changed bool, err error) {
	if !a.allowed(c.Status) {
		return false, admin.Invalid("status", "is "+c.Status+": "+a.name+" applies only to "+a.desc+" comments")
	}
	if c.Status == a.to {
		return false, nil
	}
	c.Status, c.UpdatedAt = a.to, now
	if a.to == StatusPublished && c.PublishedAt.IsZero() {
		c.PublishedAt = now
	}
	return true, nil
}

// DeleteOfArticleOps returns the writes deleting every comment of an
// article, for when the article is deleted: one Query of its index
// partition. Articles commit their own deletion first and these after it
// (records.TransactBatches); each removal's counts and entries are the
// change feed's (Derive).
func DeleteOfArticleOps(ctx context.Context, st store.Store, articleID int64) ([]store.Op, error) {
	items, err := records.List(ctx, st, store.Query{Index: store.GSI1, PK: ArticlePartition(articleID)}, nil, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	var ops []store.Op
	for i := range items {
		ops = append(ops, store.Delete(items[i].Key(), store.Always, 0))
	}
	return ops, nil
}

// Partition holds the comments.
const Partition = partition

// Derive is the change feed's work for a change to a comment
// (store.Deriver): its three counters and index entries and, for a create,
// its Comment event, naming the article as the request read it
// (records.Facts' Names; for a comment stamped before they were, as read
// now).
func Derive(ctx context.Context, st store.Store, c store.Change) ([]store.Op, error) {
	old, next, err := records.DecodeChange[Comment](c)
	if err != nil {
		return nil, err
	}
	switch {
	case next == nil:
		return append(old.countOps(-1), records.IndexOps(nil, old.entries(), nil)...), nil
	case old != nil:
		return records.IndexOps(c.New, old.entries(), next.entries()), nil
	}
	ops := append(next.countOps(1), records.IndexOps(c.New, nil, next.entries())...)
	subj, err := createdSubject(ctx, st, c.New, next)
	if err != nil {
		return nil, err
	}
	evs, err := events.OfChange(ctx, st, c.New, subj, events.Create, excerpt(next.Body))
	return append(ops, evs...), err
}

// The names a comment's create stamps (records.StampNames): its article's
// title and storefront path, which its event shows.
const (
	nameLabel = "label"
	namePath  = "path"
)

// createdSubject is what the event of a comment's create names: the
// article as the request read it.
func createdSubject(ctx context.Context, st store.Store, it *store.Item, c *Comment) (events.Subject, error) {
	facts, _, err := records.FactsOf(it)
	if err != nil {
		return events.Subject{}, err
	}
	if path, ok := facts.Names[namePath]; ok {
		return events.Subject{Type: events.Comment, ID: c.ID, Path: path, Label: facts.Names[nameLabel]}, nil
	}
	// Stamped before names were: the article and blog as they are now.
	var a articleRef
	var b blogRef
	if _, err := records.Get(ctx, st, articleKey(c.ArticleID), &a); err != nil && admin.ErrorCode(err) != admin.ENOTFOUND {
		return events.Subject{}, err
	}
	if _, err := records.Get(ctx, st, blogKey(c.BlogID), &b); err != nil && admin.ErrorCode(err) != admin.ENOTFOUND {
		return events.Subject{}, err
	}
	return subject(c.ID, &b, &a), nil
}
