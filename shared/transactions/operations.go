package transactions

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the transaction operations: plain functions of a context
// and typed input, used by the handlers.
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock}
}

// order is a seeded order as the transactions need it.
type order struct {
	item     store.Item
	raw      map[string]json.RawMessage
	ID       int64
	Name     string
	Currency string
	Total    admin.Money
	Status   string
}

// getOrder reads an order; admin.NotFound if there is none.
func (s Service) getOrder(ctx context.Context, id int64) (order, error) {
	o := order{ID: id}
	it, err := s.Store.Get(ctx, orderKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return o, admin.NotFound
	}
	if err != nil {
		return o, err
	}
	o.item = it
	if err := records.Decode(&it, &o.raw); err != nil {
		return o, err
	}
	// A seeded field of an unexpected type reads as absent.
	_ = json.Unmarshal(o.raw["name"], &o.Name)
	_ = json.Unmarshal(o.raw["currency"], &o.Currency)
	_ = json.Unmarshal(o.raw["financial_status"], &o.Status)
	_ = json.Unmarshal(o.raw["total_price"], &o.Total)
	if o.Name == "" {
		o.Name = "#" + idString(id)
	}
	if o.Currency = strings.ToUpper(strings.TrimSpace(o.Currency)); o.Currency == "" {
		o.Currency = admin.ShopFrom(ctx).Currency
	}
	return o, nil
}

// List returns the window of an order's transactions in id order
// (creation order) after sinceID, and where it lies: one Query of the key
// range, reading only the page.
func (s Service) List(ctx context.Context, orderID, sinceID int64, w records.Window) ([]Transaction, records.Span, error) {
	o, err := s.getOrder(ctx, orderID)
	if err != nil {
		return nil, records.Span{}, err
	}
	q := store.Query{PK: Partition(orderID)}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	items, span, err := records.ListWindow(ctx, s.Store, q, nil, w)
	if err != nil {
		return nil, records.Span{}, err
	}
	out := make([]Transaction, len(items))
	for i := range items {
		if out[i], err = decode(&items[i], o.Currency); err != nil {
			return nil, records.Span{}, err
		}
	}
	return out, span, nil
}

// Count returns how many transactions an order has: its count shards.
func (s Service) Count(ctx context.Context, orderID int64) (int, error) {
	if _, err := s.getOrder(ctx, orderID); err != nil {
		return 0, err
	}
	return records.Count(ctx, s.Store, Partition(orderID))
}

// Get returns one transaction of an order; admin.NotFound if the order has
// none with that id.
func (s Service) Get(ctx context.Context, orderID, id int64) (Transaction, error) {
	it, err := s.Store.Get(ctx, key(orderID, id))
	if errors.Is(err, store.ErrNotFound) {
		return Transaction{}, admin.NotFound
	}
	if err != nil {
		return Transaction{}, err
	}
	return decode(&it, admin.ShopFrom(ctx).Currency)
}

// Create records a transaction on an order, as its ledger allows. The
// ledger (conditioned on the version read), the transaction, the order's
// financial_status, its count, the Order event and the notification commit
// in one transaction; a create that lost the race to another of the same
// order reads the ledger again and decides again.
func (s Service) Create(ctx context.Context, orderID int64, in *Input) (Transaction, error) {
	o, err := s.getOrder(ctx, orderID)
	if err != nil {
		return Transaction{}, err
	}
	r, err := in.validate()
	if err != nil {
		return Transaction{}, err
	}
	if r.currency != "" && r.currency != o.Currency {
		return Transaction{}, admin.Invalid("currency", "must be the order's currency ("+o.Currency+")")
	}
	shop := admin.ShopFrom(ctx)
	var t Transaction
	err = records.Retry(ctx, func() (bool, error) {
		if o.item.Version == 0 { // re-read after a lost race
			if o, err = s.getOrder(ctx, orderID); err != nil {
				return false, err
			}
		}
		l, version, err := s.ledger(ctx, orderID, o.Currency)
		if err != nil {
			return false, err
		}
		t, err = l.decide(&r)
		if err != nil {
			return false, err
		}
		t.ID, t.OrderID = s.IDs.Next(), orderID
		t.Currency, t.Status, t.SourceName = o.Currency, StatusSuccess, SourceAPI
		t.Receipt, t.CreatedAt = json.RawMessage("{}"), admin.At(s.Clock.Now())
		l.apply(&t)
		lk := ledgerKey(orderID)
		ledgerItem := store.Item{PK: lk.PK, SK: lk.SK, Version: version + 1, Data: records.Encode(&l)}
		ops := []store.Op{store.Put(t.item(), store.IfAbsent, 0)}
		if version == 0 {
			ops = append(ops, store.Put(ledgerItem, store.IfAbsent, 0))
		} else {
			ops = append(ops, store.Put(ledgerItem, store.IfVersion, version))
		}
		if status := l.financialStatus(o.Total, o.Status); status != o.Status {
			next := o.item
			raw := make(map[string]json.RawMessage, len(o.raw)+1)
			for k, v := range o.raw {
				raw[k] = v
			}
			raw["financial_status"] = records.Encode(status)
			next.Data = records.Encode(raw)
			ops = append(ops, records.PutNext(next))
		}
		ops = append(ops, records.CountOp(Partition(orderID), 1))
		ops = append(ops, events.Ops(event(s.IDs, &o, &t, admin.AppFrom(ctx).Name))...)
		shown := t
		shown.CreatedAt = t.CreatedAt.In(shop.Location())
		nops, err := outbox.Notify(ctx, s.Store, s.IDs, s.Clock, Topic, wrapper, &shown)
		if err != nil {
			return false, err
		}
		ops = append(ops, nops...)
		err = records.Transact(ctx, s.Store, ops...)
		if errors.Is(err, store.ErrConditionFailed) {
			// Another create of the order (or the id) got there first.
			o.item.Version = 0
			return true, err
		}
		return false, err
	})
	if errors.Is(err, store.ErrConditionFailed) {
		// Attempts spent: the order is too busy to decide now.
		return Transaction{}, admin.Errorf(admin.EINTERNAL, "the order changed too often to record the transaction")
	}
	return t, err
}

// ledger reads an order's ledger and its version; an order without one
// (no transaction created through the API yet) gets it built from its
// seeded transactions, version 0.
func (s Service) ledger(ctx context.Context, orderID int64, currency string) (ledger, int64, error) {
	var l ledger
	var version int64
	it, err := s.Store.Get(ctx, ledgerKey(orderID))
	switch {
	case err == nil:
		if err := records.Decode(&it, &l); err != nil || l.Format == ledgerFormat {
			return l, it.Version, err
		}
		// Written before settle lines: rebuilt, and replaced conditioned
		// on the version read.
		l, version = ledger{}, it.Version
	case !errors.Is(err, store.ErrNotFound):
		return l, 0, err
	}
	l.Format = ledgerFormat
	err = records.Each(ctx, s.Store, store.Query{PK: Partition(orderID), Limit: 500}, func(it *store.Item) error {
		t, err := decode(it, currency)
		if err != nil {
			return err
		}
		l.apply(&t)
		return nil
	})
	return l, version, err
}

// event is the Order event of a created transaction, with the events log's verb
// (tag Events) (capture_success, ...) and its amount in the message.
func event(gen *ids.Generator, o *order, t *Transaction, author string) events.Event {
	subject := events.Subject{Type: events.Order, ID: o.ID, Path: "/admin/orders/" + idString(o.ID), Label: o.Name}
	ev := events.New(gen, subject, Verb(t), t.Amount.String()+" "+t.Currency, author)
	what := noun[t.Kind] + " of " + t.Amount.String() + " " + t.Currency
	ev.Message = html.EscapeString(what) + " succeeded on " + subject.Link() + "."
	desc := what + " succeeded on order " + o.Name + "."
	ev.Description = &desc
	return ev
}
