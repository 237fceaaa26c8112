// Package webhooks serves /admin/webhooks (docs/openapi.yaml: schema Webhook, the
// Webhooks operations) and gives the notification dispatcher its read of the
// subscribers of a topic (schema WebhookTopic).
//
// Webhooks belong to the app that created them; the routes need no scope,
// but a webhook delivers what its topic carries, so its topic needs the
// read scope of that (TopicScope): create and update check it, and the
// dispatcher checks it again against the app's current scopes. Items:
//
//	webhook                  webhook#app#<app id> / id
//	  GSI1                   webhook#topic#<topic> / id   (every app's subscribers of a topic)
//	  GSI2                   webhook#app#<app id>#address#<address> / id   (address filter)
//	topic+address guard      webhook#guard#<app id> / <topic>\n<address>   (same transaction)
//	topic entry              webhook#app#<app id>#topic=<topic> / id   (counted: topic filter and count)
//	updated_at entry         webhook#app#<app id>#by:updated_at / <updated_at>#id
//	count shards             count#webhook#app#<app id>
//	subscription clock       webhook#clock / <topic>   (n_n: one tick per subscription to the topic)
//
// A request writes the webhook, stamped (records.Stamp), its guard and its
// topic's subscription tick; its entries and counts are the change feed's
// (Derive; the apps' partitions are a family in store.Derivers, Family).
//
// The record stores the owning app id (app_id) and the tick of its
// subscription to its topic (subscribed) for the dispatcher; responses never
// show them.
//
// A notification goes only to the webhooks that were subscribed when its
// change committed. A subscription (create, or an update moving a webhook
// to another topic) first ticks the topic's clock and stores the tick it
// got; a change firing the topic reads the clock before its transaction and
// stores the value in its notification (outbox.Notify); the fan-out skips
// the webhooks whose tick is above it. The clock is read and ticked
// strongly consistently, so a webhook created after a change returned never
// gets it, and one whose create returned before the change began is never
// skipped; for a create and a change that overlap in time either outcome
// is possible (a change reading the clock just before the tick is not sent).
package webhooks

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Topics are the allowed values of topic, in the order of docs/openapi.yaml's
// schema WebhookTopic.
var Topics = []string{
	"orders/create", "orders/delete", "orders/updated", "orders/paid", "orders/cancelled", "orders/fulfilled", "orders/partially_fulfilled",
	"order_transactions/create",
	"carts/create", "carts/update",
	"checkouts/create", "checkouts/update", "checkouts/delete",
	"refunds/create",
	"products/create", "products/update", "products/delete",
	"collections/create", "collections/update", "collections/delete",
	"customer_groups/create", "customer_groups/update", "customer_groups/delete",
	"customers/create", "customers/enable", "customers/disable", "customers/update", "customers/delete",
	"fulfillments/create", "fulfillments/update",
	"shop/update",
	"disputes/create", "disputes/update",
	"app/uninstalled",
}

var topicSet = func() map[string]bool {
	m := make(map[string]bool, len(Topics))
	for _, t := range Topics {
		m[t] = true
	}
	return m
}()

// ValidTopic reports whether t is one of Topics.
func ValidTopic(t string) bool { return topicSet[t] }

// groupScopes is the scope whose read access each topic group (the part
// of a topic before "/") needs: the scope of the resource its deliveries
// carry. Every group of Topics is here (a test keeps it so).
var groupScopes = map[string]admin.Scope{
	"orders": admin.ScopeOrders, "order_transactions": admin.ScopeOrders, "refunds": admin.ScopeOrders,
	"carts": admin.ScopeOrders, "checkouts": admin.ScopeOrders, "disputes": admin.ScopeOrders,
	"fulfillments": admin.ScopeFulfillments,
	"products":     admin.ScopeProducts, "collections": admin.ScopeProducts,
	"customers": admin.ScopeCustomers, "customer_groups": admin.ScopeCustomers,
	"shop": admin.ScopeNone, "app": admin.ScopeNone,
}

// TopicScope is the scope an app must hold (read_ or write_) to subscribe
// to topic and receive its deliveries.
func TopicScope(topic string) admin.Scope {
	group, _, _ := strings.Cut(topic, "/")
	return groupScopes[group]
}

// Readable reports whether app may receive topic's deliveries; when not,
// the error is the router's 403 for the missing read scope.
func Readable(app *admin.App, topic string) error {
	if s := TopicScope(topic); !app.Allows(s, false) {
		return admin.ScopeRequired(s, false)
	}
	return nil
}

// Formats are the allowed values of format; the first is the default.
var Formats = []string{"json", "xml"}

// Limits on input. An address must fit a DynamoDB sort key (1024 bytes)
// together with the longest topic in the guard's key.
const (
	maxAddressLen = 990
	maxListItems  = 50
	maxListItem   = 255
)

// MsgAddressTaken is the duplicate topic+address message on address.
const MsgAddressTaken = "for this topic has already been taken"

// Webhook is the returned record. AppID is the owning app: it is stored
// (as app_id) but never part of a response.
type Webhook struct {
	ID                  int64      `json:"id"`
	Address             string     `json:"address"`
	Topic               string     `json:"topic"`
	Format              string     `json:"format"`
	Fields              []string   `json:"fields"`
	MetafieldNamespaces []string   `json:"metafield_namespaces"`
	CreatedAt           admin.Time `json:"created_at"`
	UpdatedAt           admin.Time `json:"updated_at"`
	AppID               int64      `json:"-"`
	// Subscribed is the tick of the topic's subscription clock taken when
	// the webhook subscribed to Topic (0: before clocks existed). It is
	// stored (as subscribed) but never part of a response.
	Subscribed int64 `json:"-"`
}

// stored is the item's JSON: the webhook plus its app and subscription tick.
type stored struct {
	Webhook
	AppID      int64 `json:"app_id"`
	Subscribed int64 `json:"subscribed,omitempty"`
}

// decode reads a webhook item, AppID included.
func decode(it *store.Item) (Webhook, error) {
	var s stored
	if err := records.Decode(it, &s); err != nil {
		return Webhook{}, err
	}
	w := s.Webhook
	w.AppID, w.Subscribed = s.AppID, s.Subscribed
	w.normalize()
	return w, nil
}

// normalize makes unset lists render as [] rather than null.
func (w *Webhook) normalize() {
	if w.Fields == nil {
		w.Fields = []string{}
	}
	if w.MetafieldNamespaces == nil {
		w.MetafieldNamespaces = []string{}
	}
}

// Partition is the partition of an app's webhooks.
func Partition(appID int64) string { return Family + strconv.FormatInt(appID, 10) }

// Family names the apps' webhook partitions in the change feed's derivers
// (store.Derivers).
const Family = "webhook#app#"

// TopicPartition is the GSI1 partition holding every app's webhooks of a topic.
func TopicPartition(topic string) string { return "webhook#topic#" + topic }

func key(appID, id int64) store.Key { return store.Key{PK: Partition(appID), SK: records.IDSK(id)} }

func addressIndexKey(appID int64, address string) string {
	return Partition(appID) + "#address#" + address
}

func guardKey(appID int64, topic, address string) store.Key {
	return store.Key{PK: "webhook#guard#" + strconv.FormatInt(appID, 10), SK: topic + "\n" + address}
}

type guard struct {
	ID int64 `json:"id"`
}

// guardOp claims topic+address within the webhook's app.
func (w *Webhook) guardOp() store.Op {
	k := guardKey(w.AppID, w.Topic, w.Address)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: records.Encode(guard{ID: w.ID})}, store.IfAbsent, 0)
}

func (w *Webhook) item(version int64) store.Item {
	return store.Item{
		PK: Partition(w.AppID), SK: records.IDSK(w.ID),
		GSI1PK: TopicPartition(w.Topic), GSI1SK: records.IDSK(w.ID),
		GSI2PK: addressIndexKey(w.AppID, w.Address), GSI2SK: records.IDSK(w.ID),
		Version: version,
		Data:    records.Encode(stored{Webhook: *w, AppID: w.AppID, Subscribed: w.Subscribed}),
	}
}

// entries are the webhook's index entries (records.Entry), copies of it
// the change feed writes (Derive).
func (w *Webhook) entries() []records.Entry {
	sk := records.IDSK(w.ID)
	return []records.Entry{
		{Partition: records.ExactPartition(Partition(w.AppID), "topic", w.Topic), SK: sk, Counted: true},
		{Partition: records.TimePartition(Partition(w.AppID), "updated_at"), SK: records.TimeSK(w.UpdatedAt.Time, w.ID)},
	}
}

// Indexer rebuilds the webhooks' entries in a store written before them
// (records.Reindex).
var Indexer = records.Indexer{
	Name:       "webhooks",
	Partitions: records.PerParent("app", Partition),
	Rewrite: func(it *store.Item) (records.Rewritten, error) {
		w, err := decode(it)
		return records.Rewritten{Item: *it, Entries: w.entries()}, err
	},
}

// SubscribedBy reports whether a webhook was subscribed to its topic when a
// change that read the topic's clock as clock committed.
func (w *Webhook) SubscribedBy(clock int64) bool { return w.Subscribed <= clock }

// Input is the writable part; pointers tell absent from given.
type Input struct {
	Address             *string   `json:"address" null:"refuse"`
	Topic               *string   `json:"topic" null:"refuse"`
	Format              *string   `json:"format" null:"refuse"`
	Fields              *[]string `json:"fields"`
	MetafieldNamespaces *[]string `json:"metafield_namespaces"`
}

// InvalidTopicMessage is the 422 message of a topic not in Topics.
func InvalidTopicMessage(topic string) string {
	return "Invalid topic specified: " + topic + ". Topics allowed: " + strings.Join(Topics, ", ")
}

// apply validates in and merges it into w; create requires topic and
// address and fills the defaults. refused says which addresses the
// outbound client would never reach. A topic app may not read (the new
// one, or the kept one of an update) is the 403 of its scope, before the
// other fields are looked at, as the router refuses a route's scope.
func (in *Input) apply(app *admin.App, w *Webhook, create bool, refused func(string) bool) error {
	var v admin.Validation
	if in.Topic != nil || create {
		t := ""
		if in.Topic != nil {
			t = strings.TrimSpace(*in.Topic)
		}
		switch {
		case t == "":
			v.Add("topic", admin.MsgBlank)
		case !ValidTopic(t):
			v.Add("topic", InvalidTopicMessage(t))
		default:
			w.Topic = t
		}
	}
	if !v.Has("topic") && w.Topic != "" {
		if err := Readable(app, w.Topic); err != nil {
			return err
		}
	}
	if in.Address != nil || create {
		a := ""
		if in.Address != nil {
			a = strings.TrimSpace(*in.Address)
		}
		switch {
		case a == "":
			v.Add("address", admin.MsgBlank)
		case len(a) > maxAddressLen:
			v.Add("address", admin.TooLong(maxAddressLen))
		case !validAddress(a):
			v.Add("address", admin.MsgInvalid)
		case refused(a):
			v.Add("address", outbound.MsgRefused)
		default:
			w.Address = a
		}
	}
	switch {
	case in.Format != nil:
		if *in.Format != Formats[0] && *in.Format != Formats[1] {
			v.Add("format", admin.MsgNotInList)
		} else {
			w.Format = *in.Format
		}
	case create:
		w.Format = Formats[0]
	}
	if in.Fields != nil {
		w.Fields = checkList(&v, "fields", *in.Fields, w.Fields)
	}
	if in.MetafieldNamespaces != nil {
		w.MetafieldNamespaces = checkList(&v, "metafield_namespaces", *in.MetafieldNamespaces, w.MetafieldNamespaces)
	}
	w.normalize()
	return v.Err()
}

// checkList validates a list of names, returning it trimmed (or old when invalid).
func checkList(v *admin.Validation, field string, list, old []string) []string {
	out := make([]string, 0, len(list))
	blank, long := false, false
	for _, s := range list {
		s = strings.TrimSpace(s)
		blank = blank || s == ""
		long = long || utf8.RuneCountInString(s) > maxListItem
		out = append(out, s)
	}
	ok := true
	if blank {
		v.Add(field, "can't contain blank values")
		ok = false
	}
	if long {
		v.Add(field, fmt.Sprintf("contains a value that is too long (maximum is %d characters)", maxListItem))
		ok = false
	}
	if len(list) > maxListItems {
		v.Add(field, admin.TooMany(maxListItems, "items"))
		ok = false
	}
	if !ok {
		return old
	}
	return out
}

// validAddress accepts an absolute http or https URI with a host (the
// document's httpURL).
func validAddress(a string) bool { return admin.IsHTTPURL(a) }
