package countries

import (
	"cmp"
	"context"
	"slices"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/countries/country"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the country operations: plain functions of a context and
// typed input, which the handlers call.
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

// maxCountries bounds a list: there are fewer ISO codes (and Rest of World)
// than this, and a shop has each at most once.
const maxCountries = 300

// List returns the countries with an id above sinceID, in id order: one
// Query of the partition from that id on.
func (s Service) List(ctx context.Context, sinceID int64) ([]country.Country, error) {
	q := store.Query{PK: country.Partition}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	items, err := records.List(ctx, s.Store, q, nil, 0, maxCountries)
	if err != nil {
		return nil, err
	}
	return records.DecodeAll[country.Country](items)
}

// Count returns how many countries the shop has: its count shards.
func (s Service) Count(ctx context.Context) (int, error) {
	return records.Count(ctx, s.Store, country.Partition)
}

// Get returns one country; admin.NotFound if there is none.
func (s Service) Get(ctx context.Context, id int64) (country.Country, error) {
	var c country.Country
	_, err := records.Get(ctx, s.Store, country.Key(id), &c)
	return c, err
}

// Create adds the country of in.Code (ISO 3166-1 alpha-2 in any case, or
// `*` for Rest of World) with its name and provinces from the dataset and
// its default taxes, then applies the rest of in. The country and its code
// guard are one transaction: of two creates of one code, one fails on the
// guard, however they race. Its count is the change feed's (Derive).
func (s Service) Create(ctx context.Context, in *Input) (country.Country, error) {
	code := ""
	if in.Code != nil {
		code = country.NormalizeCode(*in.Code)
	}
	switch {
	case code == "":
		return country.Country{}, admin.Invalid("code", admin.MsgBlank)
	case !country.Known(code):
		return country.Country{}, admin.Invalid("code", admin.MsgInvalid)
	}
	// Taken already: answered without drawing ids (the guard decides races).
	if _, err := s.Store.Get(ctx, country.CodeKey(code)); err == nil {
		return country.Country{}, admin.Invalid("code", admin.MsgTaken)
	}
	var c country.Country
	_, err := records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		c = country.New(id, code, s.IDs.Next)
		if err := in.apply(&c, s.IDs.Next); err != nil {
			return nil, err
		}
		return c.CreateOps(ctx, id), nil
	})
	if store.FailedOn(err, country.CodeKey(code)) {
		return country.Country{}, admin.Invalid("code", admin.MsgTaken)
	}
	return c, err
}

// Update applies in to a country (its code and name do not change): one
// write of its item, conditioned on the version read.
func (s Service) Update(ctx context.Context, id int64, in *Input) (country.Country, error) {
	var c country.Country
	err := records.Update(ctx, s.Store, country.Key(id), func(it *store.Item) ([]store.Op, error) {
		var err error
		if c, err = country.Decode(it); err != nil {
			return nil, err
		}
		if err := in.apply(&c, s.IDs.Next); err != nil {
			return nil, err
		}
		return s.put(ctx, &c, it.Version), nil
	})
	return c, err
}

// put is the write of a country's new state over version, stamped as the
// request's change.
func (s Service) put(ctx context.Context, c *country.Country, version int64) []store.Op {
	put := records.PutNext(c.Item(version))
	records.Stamp(ctx, &put.Item, s.IDs.Next())
	return []store.Op{put}
}

// Delete removes a country with its provinces and rates (all in its item)
// and its code guard, in one transaction, with its tomb saying who did;
// its count is the change feed's.
func (s Service) Delete(ctx context.Context, id int64) error {
	return records.Update(ctx, s.Store, country.Key(id), func(it *store.Item) ([]store.Op, error) {
		c, err := country.Decode(it)
		if err != nil {
			return nil, err
		}
		ops, _ := records.Remove(ctx, it, s.IDs.Next(), s.Clock.Now())
		return append(ops, store.Delete(country.CodeKey(c.Code), store.Always, 0)), nil
	})
}

// Derive is the change feed's work for a change to a country
// (store.Deriver): its count, when it comes or goes. Countries log no event
// and fire no webhook.
func Derive(_ context.Context, _ store.Store, c store.Change) ([]store.Op, error) {
	switch {
	case c.Old == nil:
		return []store.Op{records.CountOp(country.Partition, 1)}, nil
	case c.New == nil:
		return []store.Op{records.CountOp(country.Partition, -1)}, nil
	}
	return nil, nil
}

// Provinces returns a country's provinces with an id above sinceID, in id
// order (one GetItem: they are in the country's item).
func (s Service) Provinces(ctx context.Context, countryID, sinceID int64) ([]country.Province, error) {
	c, err := s.Get(ctx, countryID)
	if err != nil {
		return nil, err
	}
	out := make([]country.Province, 0, len(c.Provinces))
	for _, p := range c.Provinces {
		if p.ID > sinceID {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b country.Province) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// CountProvinces returns how many provinces a country has.
func (s Service) CountProvinces(ctx context.Context, countryID int64) (int, error) {
	c, err := s.Get(ctx, countryID)
	return len(c.Provinces), err
}

// Province returns one province of a country; admin.NotFound if the
// country has no province with that id.
func (s Service) Province(ctx context.Context, countryID, id int64) (country.Province, error) {
	c, err := s.Get(ctx, countryID)
	if err != nil {
		return country.Province{}, err
	}
	i := slices.IndexFunc(c.Provinces, func(p country.Province) bool { return p.ID == id })
	if i < 0 {
		return country.Province{}, admin.NotFound
	}
	return c.Provinces[i], nil
}

// UpdateProvince changes one province's taxes (tax, tax_name, tax_type,
// tax_percentage; its id, code and name do not change): one write of the
// country's item, conditioned on the version read.
func (s Service) UpdateProvince(ctx context.Context, countryID, id int64, in *ProvinceInput) (country.Province, error) {
	var p country.Province
	err := records.Update(ctx, s.Store, country.Key(countryID), func(it *store.Item) ([]store.Op, error) {
		c, err := country.Decode(it)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(c.Provinces, func(p country.Province) bool { return p.ID == id })
		if i < 0 {
			return nil, admin.NotFound
		}
		var v admin.Validation
		in.apply(&v, "", &c.Provinces[i])
		if err := v.Err(); err != nil {
			return nil, err
		}
		p = c.Provinces[i]
		return s.put(ctx, &c, it.Version), nil
	})
	return p, err
}
