package addresses

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the address operations: plain functions of a context and
// typed input, used by the handlers.
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

// TopicCustomerUpdate fires, with the customer as payload, when one of its
// addresses changes.
const TopicCustomerUpdate = "customers/update"

// customer reads the seeded customer record; an unknown one is admin.NotFound.
func (s Service) customer(ctx context.Context, cid int64) (map[string]json.RawMessage, error) {
	var c map[string]json.RawMessage
	_, err := records.Get(ctx, s.Store, customerKey(cid), &c)
	return c, err
}

// defaultOf reads the customer's default item: the address id (0 with none
// recorded), the version (0 when absent) and whether it exists.
func (s Service) defaultOf(ctx context.Context, cid int64) (id, version int64, present bool, err error) {
	var d defaultRecord
	it, err := records.Get(ctx, s.Store, defaultKey(cid), &d)
	if errors.Is(err, admin.NotFound) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	return d.AddressID, it.Version, true, nil
}

// state is what a change reads: the default item and every address.
type state struct {
	defaultID int64
	version   int64
	present   bool
	all       []Address
	versions  map[int64]int64
}

// flag sets each address's default: the default item's when it exists,
// the seeded flags before.
func (st *state) flag(a *Address) {
	if st.present {
		a.Default = a.ID == st.defaultID
	}
}

// defaultCheck conditions a transaction on the default item as read.
func (st *state) defaultCheck(cid int64) store.Op {
	if st.present {
		return store.Check(defaultKey(cid), store.IfVersion, st.version)
	}
	return store.Check(defaultKey(cid), store.IfAbsent, 0)
}

func (s Service) read(ctx context.Context, cid int64) (*state, error) {
	id, v, present, err := s.defaultOf(ctx, cid)
	if err != nil {
		return nil, err
	}
	st := &state{defaultID: id, version: v, present: present, versions: map[int64]int64{}}
	err = records.Each(ctx, s.Store, store.Query{PK: partition(cid)}, func(it *store.Item) error {
		a, err := decode(it)
		if err != nil {
			return err
		}
		st.flag(&a)
		st.all = append(st.all, a)
		st.versions[a.ID] = it.Version
		return nil
	})
	return st, err
}

func (st *state) find(id int64) (Address, bool) {
	for _, a := range st.all {
		if a.ID == id {
			return a, true
		}
	}
	return Address{}, false
}

func decode(it *store.Item) (Address, error) {
	var a Address
	if err := records.Decode(it, &a); err != nil {
		return a, err
	}
	if a.CountryName == "" {
		a.CountryName = a.Country
	}
	if a.Name == nil {
		a.Name = fullName(a.FirstName, a.LastName)
	}
	return a, nil
}

// notify returns the writes firing customers/update with the customer and
// its addresses as they are after the change.
func (s Service) notify(ctx context.Context, c map[string]json.RawMessage, addrs []Address) ([]store.Op, error) {
	payload := make(map[string]any, len(c)+2)
	for k, v := range c {
		payload[k] = v
	}
	if addrs == nil {
		addrs = []Address{}
	}
	payload["addresses"] = addrs
	payload["default_address"] = nil
	for i := range addrs {
		if addrs[i].Default {
			payload["default_address"] = addrs[i]
		}
	}
	return outbox.Notify(ctx, s.Store, s.IDs, s.Clock, TopicCustomerUpdate, "customer", payload)
}

// List returns the window of a customer's addresses in id order after
// sinceID, and where it lies.
func (s Service) List(ctx context.Context, cid, sinceID int64, w records.Window) ([]Address, records.Span, error) {
	if _, err := s.customer(ctx, cid); err != nil {
		return nil, records.Span{}, err
	}
	id, _, present, err := s.defaultOf(ctx, cid)
	if err != nil {
		return nil, records.Span{}, err
	}
	q := store.Query{PK: partition(cid)}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	items, span, err := records.ListWindow(ctx, s.Store, q, nil, w)
	if err != nil {
		return nil, records.Span{}, err
	}
	out := make([]Address, 0, len(items))
	for i := range items {
		a, err := decode(&items[i])
		if err != nil {
			return nil, records.Span{}, err
		}
		if present {
			a.Default = a.ID == id
		}
		out = append(out, a)
	}
	return out, span, nil
}

// Get returns one of a customer's addresses.
func (s Service) Get(ctx context.Context, cid, id int64) (Address, error) {
	if _, err := s.customer(ctx, cid); err != nil {
		return Address{}, err
	}
	it, err := s.Store.Get(ctx, key(cid, id))
	if errors.Is(err, store.ErrNotFound) {
		return Address{}, admin.NotFound
	}
	if err != nil {
		return Address{}, err
	}
	a, err := decode(&it)
	if err != nil {
		return a, err
	}
	did, _, present, err := s.defaultOf(ctx, cid)
	if present {
		a.Default = a.ID == did
	}
	return a, err
}

// Create adds an address to a customer; it is not the default.
func (s Service) Create(ctx context.Context, cid int64, in *Input) (Address, error) {
	c, err := s.customer(ctx, cid)
	if err != nil {
		return Address{}, err
	}
	a := Address{CustomerID: cid}
	if err := in.apply(&a); err != nil {
		return Address{}, err
	}
	var st *state
	_, err = records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		a.ID = id
		if st, err = s.read(ctx, cid); err != nil {
			return nil, err
		}
		nops, err := s.notify(ctx, c, append(slices.Clone(st.all), a))
		if err != nil {
			return nil, err
		}
		return append([]store.Op{store.Put(a.item(1), store.IfAbsent, 0), records.CountOp(partition(cid), 1)}, nops...), nil
	})
	return a, err
}

// Update changes an address.
func (s Service) Update(ctx context.Context, cid, id int64, in *Input) (Address, error) {
	c, err := s.customer(ctx, cid)
	if err != nil {
		return Address{}, err
	}
	var a Address
	err = records.Retry(ctx, func() (bool, error) {
		st, err := s.read(ctx, cid)
		if err != nil {
			return false, err
		}
		var ok bool
		if a, ok = st.find(id); !ok {
			return false, admin.NotFound
		}
		if err := in.apply(&a); err != nil {
			return false, err
		}
		all := slices.Clone(st.all)
		for i := range all {
			if all[i].ID == id {
				all[i] = a
			}
		}
		nops, err := s.notify(ctx, c, all)
		if err != nil {
			return false, err
		}
		it := a.item(st.versions[id] + 1)
		ops := []store.Op{store.Put(it, store.IfVersion, st.versions[id])}
		if a.Default {
			// the default item records the default's country (a seeded
			// default gets its item now), conditioned on the version read
			put := store.Put(a.defaultItem(st.version+1), store.IfAbsent, 0)
			if st.present {
				put = store.Put(a.defaultItem(st.version+1), store.IfVersion, st.version)
			}
			ops = append(ops, put)
		}
		err = records.Transact(ctx, s.Store, append(ops, nops...)...)
		return store.FailedOnAny(err, ops), err // the address or the default moved
	})
	return a, err
}

// Set applies a bulk operation to addresses of a customer (set.json):
// "destroy", the only one, deletes them all or none (see Delete). The
// operation and the list are validated first: blank or unknown
// `operation`, no ids or more than MaxSet are 422.
func (s Service) Set(ctx context.Context, cid int64, operation string, ids []int64) error {
	var v admin.Validation
	switch operation {
	case "destroy":
	case "":
		v.Add("operation", admin.MsgBlank)
	default:
		v.Add("operation", "is not included in the list")
	}
	switch {
	case len(ids) == 0:
		v.Add("address_ids", admin.MsgBlank)
	case len(ids) > MaxSet:
		v.Add("address_ids", admin.TooMany(MaxSet, "ids"))
	}
	if err := v.Err(); err != nil {
		return err
	}
	return s.Delete(ctx, cid, ids...)
}

// Delete removes addresses of a customer (one for the delete endpoint,
// several for set.json with destroy): none when one of them is unknown (404)
// or the default (422), checked against the default item in the same
// transaction.
func (s Service) Delete(ctx context.Context, cid int64, ids ...int64) error {
	c, err := s.customer(ctx, cid)
	if err != nil {
		return err
	}
	return records.Retry(ctx, func() (bool, error) {
		st, err := s.read(ctx, cid)
		if err != nil {
			return false, err
		}
		ops := []store.Op{st.defaultCheck(cid)}
		gone := map[int64]bool{}
		for _, id := range ids {
			a, ok := st.find(id)
			if !ok {
				return false, admin.NotFound
			}
			if a.Default {
				return false, admin.Invalid("base", MsgDeleteDefault)
			}
			if gone[id] {
				continue
			}
			gone[id] = true
			ops = append(ops, store.Delete(key(cid, id), store.IfVersion, st.versions[id]), records.CountOp(partition(cid), -1))
		}
		left := slices.DeleteFunc(slices.Clone(st.all), func(a Address) bool { return gone[a.ID] })
		nops, err := s.notify(ctx, c, left)
		if err != nil {
			return false, err
		}
		err = records.Transact(ctx, s.Store, append(ops, nops...)...)
		return errors.Is(err, store.ErrConditionFailed), err
	})
}

// SetDefault makes an address the customer's default: the default item,
// conditioned on the version read, and a check that the address is still
// there, in one transaction.
func (s Service) SetDefault(ctx context.Context, cid, id int64) (Address, error) {
	c, err := s.customer(ctx, cid)
	if err != nil {
		return Address{}, err
	}
	var a Address
	err = records.Retry(ctx, func() (bool, error) {
		st, err := s.read(ctx, cid)
		if err != nil {
			return false, err
		}
		var ok bool
		if a, ok = st.find(id); !ok {
			return false, admin.NotFound
		}
		all := slices.Clone(st.all)
		for i := range all {
			all[i].Default = all[i].ID == id
		}
		a.Default = true
		nops, err := s.notify(ctx, c, all)
		if err != nil {
			return false, err
		}
		d := a.defaultItem(st.version + 1)
		put := store.Put(d, store.IfAbsent, 0)
		if st.present {
			put = store.Put(d, store.IfVersion, st.version)
		}
		ops := append([]store.Op{put, store.Check(key(cid, id), store.IfVersion, st.versions[id])}, nops...)
		err = records.Transact(ctx, s.Store, ops...)
		return errors.Is(err, store.ErrConditionFailed), err
	})
	return a, err
}

// OfCustomer returns a customer's addresses in id order, each flagged
// default as List does, and the default among them (nil for none).
func (s Service) OfCustomer(ctx context.Context, cid int64) ([]Address, *Address, error) {
	st, err := s.read(ctx, cid)
	if err != nil {
		return nil, nil, err
	}
	var def *Address
	for i := range st.all {
		if st.all[i].Default {
			def = &st.all[i]
		}
	}
	if st.all == nil {
		st.all = []Address{}
	}
	return st.all, def, nil
}

// DefaultCountries returns the country code of the default address of
// every customer whose default item exists, by customer id: one paged
// Query of the customerdefault partition, plus one GetItem per item
// written before the items kept the country. Customers absent from it
// still have their seeded default.
func (s Service) DefaultCountries(ctx context.Context) (map[int64]string, error) {
	out := map[int64]string{}
	err := records.Each(ctx, s.Store, store.Query{PK: defaultPartition}, func(it *store.Item) error {
		cid, err := records.ParseIDSK(it.SK)
		if err != nil {
			return err
		}
		var d defaultRecord
		if err := records.Decode(it, &d); err != nil {
			return err
		}
		if d.CountryCode != nil {
			out[cid] = *d.CountryCode
			return nil
		}
		var a Address
		_, err = records.Get(ctx, s.Store, key(cid, d.AddressID), &a)
		switch {
		case errors.Is(err, admin.NotFound):
			out[cid] = ""
		case err != nil:
			return err
		default:
			out[cid] = a.CountryCode
		}
		return nil
	})
	return out, err
}
