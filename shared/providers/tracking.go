package providers

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

const (
	// FulfillmentsUpdate is the topic fired for each fulfillment that got a
	// tracking number (webhook topics, schema WebhookTopic: fulfillments/update
	// fires for every tracking update).
	FulfillmentsUpdate = "fulfillments/update"
	// maxTrackingLen bounds a tracking number.
	maxTrackingLen = 255
	// writers bounds the fulfillments of one service written at once.
	writers = 8
)

// FetchTrackingNumbers asks every service with tracking_support for the
// tracking numbers of its completed fulfillments that have none yet (one
// Query of GSI1 parents.UntrackedPartition(handle) per service), by order
// name, at most BatchSize names per request: GET
// <callback_url>/fetch_tracking_numbers.<format>?order_names[]=…&shop=<domain>.
// A service with no such fulfillment is not asked. Each number answered is
// stored on the order's untracked fulfillments by that service, each in one
// transaction with its Order update event and its fulfillments/update
// notification (storeTracking).
func FetchTrackingNumbers(ctx context.Context, d *platform.Deps) Summary {
	const job = "fetch_tracking_numbers"
	t := tally{metrics: d.Metrics}
	shop, svcs, err := setup(ctx, d, func(s *fulfillmentservices.FulfillmentService) bool { return s.TrackingSupport })
	if err != nil {
		t.fail(ctx, job, "(all services)", err)
		return t.done(ctx, job)
	}
	ctx = admin.WithShop(ctx, shop)
	each(svcs, func(svc *fulfillmentservices.FulfillmentService) {
		pending, err := untracked(ctx, d.Store, svc.Handle)
		if err != nil {
			t.fail(ctx, job, svc.Handle, err)
			return
		}
		if len(pending) == 0 {
			return
		}
		t.add(func(s *Summary) { s.Providers++ })
		for start := 0; start < len(pending); start += BatchSize {
			batch := pending[start:min(start+BatchSize, len(pending))]
			names := make([]string, len(batch))
			byName := make(map[string][]store.Key, len(batch))
			for i, o := range batch {
				names[i], byName[o.name] = o.name, o.keys
			}
			body, err := call(ctx, d, svc, job, url.Values{"order_names[]": names, "shop": {shop.Domain}})
			if err != nil {
				t.fail(ctx, job, svc.Handle, err) // not asked again this run
				return
			}
			ans, err := parseTracking(svc.Format, body)
			if err != nil {
				t.fail(ctx, job, svc.Handle, err)
				return
			}
			var unknown []string
			sem := make(chan struct{}, writers)
			var wg sync.WaitGroup
			for _, name := range sortedKeys(ans.numbers) {
				keys, ok := byName[name]
				if !ok {
					unknown = append(unknown, name)
					continue
				}
				for _, k := range keys {
					wg.Add(1)
					sem <- struct{}{}
					go func() {
						defer func() { <-sem; wg.Done() }()
						changed, err := storeTracking(ctx, d, k, svc, ans.numbers[name])
						if err != nil {
							t.fail(ctx, job, svc.Handle, fmt.Errorf("fulfillment %s of order %s: %w", k.SK, name, err))
							return
						}
						if changed {
							t.add(func(s *Summary) { s.Updated++ })
						}
					}()
				}
			}
			wg.Wait()
			t.skip(ctx, job, svc.Handle, "order names not asked about", unknown)
			t.skip(ctx, job, svc.Handle, "invalid tracking numbers", ans.bad)
		}
	})
	return t.done(ctx, job)
}

// pendingOrder is an order name and the keys of its untracked
// fulfillments by one service.
type pendingOrder struct {
	name string
	keys []store.Key
}

// untracked reads a service's untracked fulfillments grouped by order
// name, in fulfillment id order. A fulfillment stored without order_name
// takes its order's name (one GetItem per order).
func untracked(ctx context.Context, st store.Store, handle string) ([]pendingOrder, error) {
	var out []pendingOrder
	index := map[string]int{}
	orderNames := map[int64]string{}
	q := store.Query{Index: store.GSI1, PK: parents.UntrackedPartition(handle), Limit: 500}
	err := records.Each(ctx, st, q, func(it *store.Item) error {
		var f struct {
			OrderID   int64  `json:"order_id"`
			OrderName string `json:"order_name"`
		}
		if err := records.Decode(it, &f); err != nil {
			return err
		}
		name := f.OrderName
		if name == "" && f.OrderID > 0 {
			n, ok := orderNames[f.OrderID]
			if !ok {
				var o struct {
					Name string `json:"name"`
				}
				_, err := records.Get(ctx, st, store.Key{PK: parents.OrderPartition, SK: records.IDSK(f.OrderID)}, &o)
				if err != nil && admin.ErrorCode(err) != admin.ENOTFOUND {
					return err
				}
				n, orderNames[f.OrderID] = o.Name, o.Name
			}
			name = n
		}
		if name == "" {
			return nil // nothing to ask the provider about
		}
		j, ok := index[name]
		if !ok {
			j = len(out)
			index[name] = j
			out = append(out, pendingOrder{name: name})
		}
		out[j].keys = append(out[j].keys, it.Key())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the untracked fulfillments: %w", err)
	}
	return out, nil
}

// storeTracking stores number on the fulfillment at k if it still awaits
// one from svc: the fulfillment (tracking_number, tracking_numbers,
// updated_at; its untracked index entry removed), conditioned on the
// version read, with an Order update event by the service and the
// fulfillments/update notification carrying the fulfillment, in one
// transaction. It reports whether it wrote.
func storeTracking(ctx context.Context, d *platform.Deps, k store.Key, svc *fulfillmentservices.FulfillmentService, number string) (bool, error) {
	wrote := false
	err := records.Retry(ctx, func() (bool, error) {
		it, err := d.Store.Get(ctx, k)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if it.GSI1PK != parents.UntrackedPartition(svc.Handle) {
			return false, nil // tracked meanwhile (the index lags)
		}
		var raw map[string]json.RawMessage
		if err := records.Decode(&it, &raw); err != nil {
			return false, err
		}
		var f struct {
			ID        int64  `json:"id"`
			OrderID   int64  `json:"order_id"`
			OrderName string `json:"order_name"`
		}
		if err := records.Decode(&it, &f); err != nil {
			return false, err
		}
		raw["tracking_number"] = records.Encode(number)
		raw["tracking_numbers"] = records.Encode([]string{number})
		raw["updated_at"] = records.Encode(admin.At(d.Clock.Now()).In(admin.ShopFrom(ctx).Location()))
		next := it
		next.GSI1PK, next.GSI1SK = "", ""
		next.Version = it.Version + 1
		next.Data = records.Encode(raw)
		// The notification carries the fulfillment as the API would show
		// it: with order_id, without the order_name kept for the poll.
		payload := make(map[string]json.RawMessage, len(raw))
		for key, v := range raw {
			if key != "order_name" {
				payload[key] = v
			}
		}
		ops := []store.Op{store.Put(next, store.IfVersion, it.Version)}
		ops = append(ops, events.Ops(trackingEvent(d, f.OrderID, f.OrderName, number, svc.Name))...)
		nops, err := outbox.Notify(ctx, d.Store, d.IDs, d.Clock, FulfillmentsUpdate, "fulfillment", payload)
		if err != nil {
			return false, err
		}
		ops = append(ops, nops...)
		err = records.Transact(ctx, d.Store, ops...)
		wrote = err == nil
		return store.FailedOn(err, next.Key()), err // changed since it was read: read again
	})
	return wrote, err
}

// trackingEvent is the Order update event of a tracking number stored on
// one of the order's fulfillments, by the service (author).
func trackingEvent(d *platform.Deps, orderID int64, orderName, number, author string) events.Event {
	subject := events.Subject{Type: events.Order, ID: orderID, Path: "/admin/orders/" + strconv.FormatInt(orderID, 10), Label: orderName}
	ev := events.New(d.IDs, subject, events.Update, number, author)
	ev.Message = "Tracking number " + html.EscapeString(number) + " was added to a fulfillment of " + subject.Link() + "."
	desc := "Tracking number " + number + " was added to a fulfillment of order " + orderName + "."
	ev.Description = &desc
	return ev
}

// trackingAnswer is a fetch_tracking_numbers answer: the valid numbers by
// order name and the names whose value is not one.
type trackingAnswer struct {
	numbers map[string]string
	bad     []string
}

// parseTracking reads a fetch_tracking_numbers answer. JSON: {
// "tracking_numbers": {<order name>: <number>}, "message", "success" }; a
// "success": false answer is a failure (its message quoted) and applies
// nothing. XML: <TrackingNumbers><Order><ID>#1001</ID><Tracking>…</Tracking>
// </Order>…</TrackingNumbers>. A number must be a non-blank string (or a
// JSON integer) of at most 255 characters without control characters.
func parseTracking(format string, body []byte) (trackingAnswer, error) {
	ans := trackingAnswer{numbers: map[string]string{}}
	bad := map[string]bool{}
	set := func(name, number string, ok bool) {
		number = strings.TrimSpace(number)
		if ok && number != "" && utf8.RuneCountInString(number) <= maxTrackingLen && strings.IndexFunc(number, unicode.IsControl) < 0 {
			ans.numbers[name] = number
			delete(bad, name)
		} else {
			delete(ans.numbers, name)
			bad[name] = true
		}
	}
	if format == "xml" {
		var doc struct {
			XMLName xml.Name `xml:"TrackingNumbers"`
			Orders  []struct {
				ID       *string `xml:"ID"`
				Tracking *string `xml:"Tracking"`
			} `xml:"Order"`
		}
		if err := decodeXML(body, &doc); err != nil {
			return ans, providerError("fetch_tracking_numbers: the answer is not a <TrackingNumbers> XML document: %v", err)
		}
		for _, o := range doc.Orders {
			if o.ID == nil || strings.TrimSpace(*o.ID) == "" {
				continue
			}
			set(strings.TrimSpace(*o.ID), deref(o.Tracking), o.Tracking != nil)
		}
		ans.bad = sortedKeys(bad)
		return ans, nil
	}
	obj, err := jsonObject(body)
	if err != nil {
		return ans, providerError("fetch_tracking_numbers: %v", err)
	}
	if raw, ok := obj["success"]; ok && strings.TrimSpace(string(raw)) == "false" {
		var msg string
		_ = json.Unmarshal(obj["message"], &msg) // a message of another type is left out
		return ans, providerError("fetch_tracking_numbers: the provider answered success false: %q", msg)
	}
	raw, ok := obj["tracking_numbers"]
	if !ok || strings.TrimSpace(string(raw)) == "null" {
		return ans, nil
	}
	numbers, err := jsonObject(raw)
	if err != nil {
		return ans, providerError("fetch_tracking_numbers: tracking_numbers is not an object")
	}
	for name, v := range numbers {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			set(name, s, true)
		} else { // a JSON integer is taken as its digits
			set(name, string(v), isDigits(string(v)))
		}
	}
	ans.bad = sortedKeys(bad)
	return ans, nil
}

// isDigits reports whether s is a non-empty run of decimal digits.
func isDigits(s string) bool { return s != "" && strings.TrimLeft(s, "0123456789") == "" }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
