// Package events is the shop's events log (docs/openapi.yaml: schema Event, the
// Events operations). The change feed publishes every event, so that events
// become visible in id order (through the log's head): the event of a
// change to a record on the feed is derived from it (OfChange); every other
// change that is logged commits its event staged, in the change's own
// transaction (resources call Ops and append the result to their writes), and
// the feed publishes it (Publish).
//
// Items: event/<id>; GSI1 event#type#<subject type>/<id> serves the type
// filter, GSI2 event#subject#<type>#<subject id>/<id> the per-subject lists,
// so neither reads events of other types or subjects. One index entry per
// event, event#verb=<verb>/<id> (a copy, records.Entry), serves the verb
// filter, and its own GSI1 key event#type#<type>#verb=<verb>/<id> the verb
// within types. An event's created_at is its id's second, so created_at
// ranges are id ranges: every filter reads only its matches.
package events

import (
	"context"
	"errors"
	"html"
	"math/rand/v2"
	"strconv"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Event is the stored and returned record.
type Event struct {
	ID          int64      `json:"id"`
	SubjectID   int64      `json:"subject_id"`
	SubjectType string     `json:"subject_type"`
	Verb        string     `json:"verb"`
	Arguments   []string   `json:"arguments"`
	Message     string     `json:"message"`
	Description *string    `json:"description"`
	Body        *string    `json:"body"`
	Path        *string    `json:"path"`
	Author      string     `json:"author"`
	CreatedAt   admin.Time `json:"created_at"`
}

// Subject types of schema Event. App is an app's install and uninstall
// (docs/spec-gaps.md).
const (
	App        = "App"
	Article    = "Article"
	Blog       = "Blog"
	Collection = "Collection"
	Comment    = "Comment"
	Order      = "Order"
	Page       = "Page"
	Product    = "Product"
)

// SubjectTypes lists the valid values of the filter parameter.
var SubjectTypes = []string{App, Article, Blog, Collection, Comment, Order, Page, Product}

// Events log verbs (tag Events) shared by most subjects.
const (
	Create      = "create"
	Update      = "update"
	Destroy     = "destroy"
	Published   = "published"
	Unpublished = "unpublished"
	// Installed and Uninstalled are an app's (subject type App).
	Installed   = "installed"
	Uninstalled = "uninstalled"
)

const partition = "event"

func key(id int64) store.Key { return store.Key{PK: partition, SK: records.IDSK(id)} }

// TypePartition is the GSI1 partition of a subject type's events.
func TypePartition(subjectType string) string { return "event#type#" + subjectType }

// VerbPartition holds the index entries of a verb's events.
func VerbPartition(verb string) string { return records.ExactPartition(partition, "verb", verb) }

// TypeVerbPartition is the GSI1 partition of the entries of a subject
// type's events of one verb.
func TypeVerbPartition(subjectType, verb string) string {
	return records.ExactPartition(TypePartition(subjectType), "verb", verb)
}

// SubjectPartition is the GSI2 partition of one subject's events.
func SubjectPartition(subjectType string, id int64) string {
	return "event#subject#" + subjectType + "#" + strconv.FormatInt(id, 10)
}

// Subject is what an event is about: its type and id, the storefront path
// (e.g. /pages/about-us) and the label shown in the message's link.
type Subject struct {
	Type  string
	ID    int64
	Path  string
	Label string
}

// Link is the subject's storefront link as it appears in messages; the
// label is escaped, it comes from users.
func (s Subject) Link() string {
	return `<a href="` + html.EscapeString(s.Path) + `">` + html.EscapeString(s.Label) + `</a>`
}

// messages are the events log's message templates (tag Events), by subject type
// and verb; %s is the link (or the name, for Blog and Product destroy).
var messages = map[string]map[string]func(link, extra string) string{
	App: {
		Installed:   func(l, _ string) string { return l + " was installed." },
		Uninstalled: func(l, _ string) string { return l + " was uninstalled." },
	},
	Article: {
		Create:      func(l, _ string) string { return "New article created: " + l },
		Destroy:     func(l, _ string) string { return l + " was destroyed." },
		Published:   func(l, _ string) string { return l + " was published." },
		Unpublished: func(l, _ string) string { return l + " was unpublished." },
		Update:      func(l, _ string) string { return l + " was updated (but its published state was not changed)." },
	},
	Blog: {
		Create:  func(l, _ string) string { return "New blog created: " + l },
		Destroy: func(l, _ string) string { return l + " was destroyed." },
		Update:  func(l, _ string) string { return l + " was updated." },
	},
	Collection: {
		Create:      func(l, _ string) string { return "New collection created: " + l },
		Destroy:     func(l, _ string) string { return l + " was destroyed." },
		Published:   func(l, _ string) string { return l + " was published." },
		Unpublished: func(l, _ string) string { return l + " was hidden." },
		Update:      func(l, _ string) string { return l + " was updated." },
	},
	Comment: {
		Create: func(l, excerpt string) string { return "New comment for " + l + " : " + html.EscapeString(excerpt) },
	},
	Page: {
		Create:      func(l, _ string) string { return "New page created: " + l },
		Destroy:     func(l, _ string) string { return l + " was destroyed." },
		Published:   func(l, _ string) string { return l + " was published." },
		Unpublished: func(l, _ string) string { return l + " was hidden." },
		Update:      func(l, _ string) string { return l + " was updated." },
	},
	Product: {
		Create:      func(l, _ string) string { return "New product created: " + l },
		Destroy:     func(l, _ string) string { return l + " was destroyed." },
		Published:   func(l, _ string) string { return l + " was published." },
		Unpublished: func(l, _ string) string { return l + " was hidden." },
		Update:      func(l, _ string) string { return l + " was updated." },
	},
}

// New builds the event for a change. subject is what changed (for a comment,
// the article it was made on, with the comment's id as SubjectID), extra
// fills a second placeholder (the comment excerpt). author is the app's name.
func New(gen *ids.Generator, subject Subject, verb, extra, author string) Event {
	return newEvent(gen.Next(), subject, verb, extra, author)
}

func newEvent(id int64, subject Subject, verb, extra, author string) Event {
	link := subject.Link()
	// Product and app templates, and blog templates other than create, show
	// the bare name.
	if subject.Type == Product || subject.Type == App || (subject.Type == Blog && verb != Create) {
		link = html.EscapeString(subject.Label)
	}
	msg := link
	if tmpl, ok := messages[subject.Type][verb]; ok {
		msg = tmpl(link, extra)
	}
	args := []string{subject.Label, subject.Path}
	if extra != "" {
		args = append(args, extra)
	}
	var path *string
	if subject.Path != "" {
		p := subject.Path
		path = &p
	}
	return Event{
		ID: id, SubjectID: subject.ID, SubjectType: subject.Type, Verb: verb,
		Arguments: args, Message: msg, Path: path, Author: author, CreatedAt: admin.Time{Time: ids.Time(id)},
	}
}

// OfApp is the event of an app's install or uninstall (verb Installed or
// Uninstalled): subject type App, the app's id and name, by the app.
func OfApp(gen *ids.Generator, appID int64, name, verb string) Event {
	return New(gen, Subject{Type: App, ID: appID, Label: name}, verb, "", name)
}

// OfChange are the writes of the event of a request's change to a record
// (store.Change, its item stamped by records.Stamp): its id is the
// change's unless the log already shows one as high (logged), so it is
// dated when the change committed, and unique in the log whatever other
// change drew the same id. Its author is the stamping app's name as the
// request stamped it (records.Facts; for an item stamped before facts were,
// as read now: one GetItem). The change feed calls it.
func OfChange(ctx context.Context, st store.Store, it *store.Item, subject Subject, verb, extra string) ([]store.Op, error) {
	facts, stamped, err := records.FactsOf(it)
	if err != nil {
		return nil, err
	}
	author := facts.Author
	if by := it.Nums[store.ByNum]; by != 0 && !stamped { // stamped before its facts were
		app, err := auth.App(ctx, st, by)
		if err != nil && admin.ErrorCode(err) != admin.ENOTFOUND {
			return nil, err
		}
		if app != nil {
			author = app.Name
		}
	}
	ops, _, err := logged(ctx, st, newEvent(it.Nums[store.ChangeNum], subject, verb, extra, author))
	return ops, err
}

// The log's head: Nums[headLast] is the highest id the log shows. Every
// event becomes visible in a transaction that moves the head, conditioned on
// the version it read, so of two publishers one waits for the other and ids
// become visible in increasing order: a reader following since_id misses
// none, however many processes (or stream shards) publish.
const (
	headPartition = "event#head"
	headLast      = "last"
)

// HeadKey is the log head's key.
var HeadKey = store.Key{PK: headPartition, SK: "head"}

// logged are the writes that publish ev in the log, and the id it takes:
// its own when it is above the head's, else the next after it (its
// created_at, the id's second, is then when it became visible); the head
// moves to it in the same transaction (one GetItem, and one item more). A
// caller whose transaction fails on HeadKey lost a race to another
// publisher and derives again (store.Derivers does).
func logged(ctx context.Context, st store.Store, ev Event) ([]store.Op, int64, error) {
	head, err := st.Get(ctx, HeadKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
		head = store.Item{PK: HeadKey.PK, SK: HeadKey.SK}
	case err != nil:
		return nil, 0, err
	}
	if last := head.Nums[headLast]; ev.ID <= last {
		ev.ID = last + 1
		ev.CreatedAt = admin.Time{Time: ids.Time(ev.ID)}
	}
	move := store.Put(store.Item{PK: HeadKey.PK, SK: HeadKey.SK, Version: head.Version + 1, Nums: map[string]int64{headLast: ev.ID}, Data: []byte("{}")}, store.IfVersion, head.Version)
	if head.Version == 0 {
		move.Cond = store.IfAbsent
	}
	return append(published(ev), move), ev.ID, nil
}

// StagedPartition holds the events requests commit with their changes
// (Ops), until the change feed publishes them in the log (Publish).
const StagedPartition = "event#staged"

// Ops are the writes that record ev, made by a request in its change's
// transaction: the event is staged there, and the change feed publishes
// it in the log right after (Publish; in AWS from the table's stream), so
// that it becomes visible in id order with every other event.
func Ops(ev Event) []store.Op {
	it := store.Item{PK: StagedPartition, SK: records.IDSK(ev.ID) + "#" + strconv.FormatUint(rand.Uint64(), 36), Version: 1,
		Nums: map[string]int64{store.ChangeNum: ev.ID}, Data: records.Encode(&ev)}
	return []store.Op{store.Put(it, store.IfAbsent, 0)}
}

// Publish is the change feed's work for a staged event (store.Deriver): its
// publication in the log (logged) and the staged item's removal.
func Publish(ctx context.Context, st store.Store, c store.Change) ([]store.Op, error) {
	if c.New == nil {
		return nil, nil // the staged item's removal: done
	}
	var ev Event
	if err := records.Decode(c.New, &ev); err != nil {
		return nil, err
	}
	ops, _, err := logged(ctx, st, ev)
	return append(ops, store.Delete(c.New.Key(), store.IfPresent, 0)), err
}

// published are the items of ev in the log: the event, its count and its
// index entries.
func published(ev Event) []store.Op {
	it := ev.item(1)
	ops := []store.Op{store.Put(it, store.IfAbsent, 0), records.CountOp(partition, 1)}
	return append(ops, records.IndexOps(&it, nil, ev.entries())...)
}

func (ev *Event) item(version int64) store.Item {
	sk := records.IDSK(ev.ID)
	return store.Item{
		PK: partition, SK: sk,
		GSI1PK: TypePartition(ev.SubjectType), GSI1SK: sk,
		GSI2PK: SubjectPartition(ev.SubjectType, ev.SubjectID), GSI2SK: sk,
		Version: version,
		Data:    records.Encode(ev),
	}
}

// entries are the event's index entries: its verb's, whose own GSI1 key is
// its type and verb's.
func (ev *Event) entries() []records.Entry {
	sk := records.IDSK(ev.ID)
	return []records.Entry{{
		Partition: VerbPartition(ev.Verb), SK: sk,
		GSI1PK: TypeVerbPartition(ev.SubjectType, ev.Verb), GSI1SK: sk,
	}}
}

// Indexer rebuilds the events' index keys and verb entries in a store
// written before them (records.Reindex).
var Indexer = records.Indexer{
	Name:       "events",
	Partitions: records.OnePartition(partition),
	Rewrite: func(it *store.Item) (records.Rewritten, error) {
		var ev Event
		if err := records.Decode(it, &ev); err != nil {
			return records.Rewritten{}, err
		}
		next := ev.item(it.Version)
		next.Data = it.Data // as stored
		return records.Rewritten{Item: next, Entries: ev.entries()}, nil
	},
}

// UpdateVerb is the verb of an update: a change of published state is
// logged as published or unpublished, anything else as update.
func UpdateVerb(c publishing.Change) string {
	switch c {
	case publishing.Published:
		return Published
	case publishing.Unpublished:
		return Unpublished
	}
	return Update
}
