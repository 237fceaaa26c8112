package metafields

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Messages of the metafields endpoints beyond part 7's.
const (
	MsgTaken     = "must be unique within this namespace"
	MsgImmutable = "can't be changed after creation"
)

// Owners lists the owner resources, in the order owner_resource's enum shows them.
var Owners = []string{OwnerShop, OwnerProduct, OwnerVariant, OwnerPage, OwnerArticle, OwnerBlog,
	OwnerCustomCollection, OwnerSmartCollection, OwnerCustomer, OwnerOrder}

// ScopeOf is the scope an owner's metafields need: the scope of the owner's
// own resource family; shop metafields need none.
func ScopeOf(resource string) admin.Scope {
	switch resource {
	case OwnerProduct, OwnerVariant, OwnerCustomCollection, OwnerSmartCollection:
		return admin.ScopeProducts
	case OwnerPage, OwnerArticle, OwnerBlog:
		return admin.ScopeContent
	case OwnerCustomer:
		return admin.ScopeCustomers
	case OwnerOrder:
		return admin.ScopeOrders
	}
	return admin.ScopeNone
}

// Owner names whose metafields an operation reads or writes. Blog is the
// blog of an article's path (0 otherwise); an article of another blog is
// not found.
type Owner struct {
	Resource string
	ID       int64
	Blog     int64
}

// Lookup checks that an owner exists: nil, admin.NotFound when it does not,
// or a failure. For an article it returns the article's blog id. The
// composition root (shared/api) gives each owner resource the read
// operation of the owner's own package, so that this package imports none
// of them (they import it for their metafield inputs).
type Lookup func(ctx context.Context, id int64) (blog int64, err error)

// Service holds the metafield operations of the metafields endpoints.
// Lookups has one entry per owner resource but the shop.
type Service struct {
	*platform.Deps
	Lookups map[string]Lookup
}

// Filter is what a list or count keeps: §4.5's query parameters but paging.
type Filter struct {
	Namespaces         []string // namespace and namepace (sic), each must match
	Key, ValueType     string
	Created, Updated   dates.Range
	OwnerID            int64  // metafield[owner_id]
	OwnerResource      string // metafield[owner_resource]
	OwnerGiven, Nested bool
}

func (f *Filter) empty() bool {
	return len(f.Namespaces) == 0 && f.Key == "" && f.ValueType == "" && f.Created.Empty() && f.Updated.Empty()
}

func (f *Filter) matches(m *Metafield) bool {
	for _, ns := range f.Namespaces {
		if m.Namespace != ns {
			return false
		}
	}
	return (f.Key == "" || m.Key == f.Key) && (f.ValueType == "" || m.ValueType == f.ValueType) &&
		f.Created.Contains(m.CreatedAt.Time) && f.Updated.Contains(m.UpdatedAt.Time)
}

// CheckFilter validates the filter's values (400 naming the parameter).
func (f *Filter) CheckFilter() error {
	if f.ValueType != "" && f.ValueType != "string" && f.ValueType != "integer" {
		return admin.BadParam("value_type", admin.MsgNotInList)
	}
	if f.OwnerResource != "" && !slices.Contains(Owners, f.OwnerResource) {
		return admin.BadParam("metafield[owner_resource]", admin.MsgNotInList)
	}
	if f.OwnerID != 0 && f.OwnerResource == "" {
		return admin.BadParam("metafield[owner_resource]", admin.MsgBlank)
	}
	if f.OwnerResource != "" && f.OwnerResource != OwnerShop && f.OwnerID == 0 {
		return admin.BadParam("metafield[owner_id]", admin.MsgBlank)
	}
	return nil
}

// ShopOwner is the owner of the top-level endpoints: the shop, unless a
// list or count names another with metafield[owner_resource] and
// metafield[owner_id].
func ShopOwner(ctx context.Context, f *Filter) Owner {
	o := Owner{Resource: OwnerShop, ID: admin.ShopFrom(ctx).ID}
	if f != nil && f.OwnerResource != "" {
		o.Resource = f.OwnerResource
		if f.OwnerID != 0 || o.Resource != OwnerShop {
			o.ID = f.OwnerID
		}
	}
	return o
}

// check answers admin.NotFound unless the owner exists (and, for an
// article, is in the path's blog), and 403 when the calling app lacks the
// owner's scope (write for changes).
func (s Service) check(ctx context.Context, o Owner, write bool) error {
	if err := allowed(ctx, o.Resource, write); err != nil {
		return err
	}
	if o.Resource == OwnerShop {
		if shop := admin.ShopFrom(ctx); shop != nil && o.ID != shop.ID {
			return admin.NotFound
		}
		return nil
	}
	lookup := s.Lookups[o.Resource]
	if lookup == nil || o.ID <= 0 {
		return admin.NotFound
	}
	blog, err := lookup(ctx, o.ID)
	if err != nil {
		return err
	}
	if o.Resource == OwnerArticle && o.Blog != 0 && blog != o.Blog {
		return admin.NotFound
	}
	return nil
}

// allowed checks the calling app's scope for an owner's metafields (the
// top-level endpoints reach every owner; nested routes also carry it).
func allowed(ctx context.Context, resource string, write bool) error {
	app := admin.AppFrom(ctx)
	if app == nil || app.Allows(ScopeOf(resource), write) {
		return nil
	}
	return admin.ScopeRequired(ScopeOf(resource), write)
}

// List returns the window of an owner's metafields after sinceID that pass
// f, and where it lies: one Query of the owner's index partition.
func (s Service) List(ctx context.Context, o Owner, f *Filter, sinceID int64, w records.Window) ([]Metafield, records.Span, error) {
	if err := s.check(ctx, o, false); err != nil {
		return nil, records.Span{}, err
	}
	q, rest := f.query(o)
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	return records.Spanned[Metafield](records.ListWindow(ctx, s.Store, q, matcher(rest), w))
}

// query is the index partition a list or count of f reads: the owner's
// metafields in the namespace filtered on (GSI2), else all the owner's
// (GSI1); rest is what that leaves to check on each metafield.
func (f *Filter) query(o Owner) (q store.Query, rest *Filter) {
	q = store.Query{Index: store.GSI1, PK: OwnerPartition(o.Resource, o.ID)}
	if f == nil || len(f.Namespaces) == 0 {
		return q, f
	}
	for _, ns := range f.Namespaces[1:] {
		if ns != f.Namespaces[0] {
			return q, f // namespace and namepace disagree: nothing matches
		}
	}
	r := *f
	r.Namespaces = nil
	return store.Query{Index: store.GSI2, PK: NamespacePartition(o.Resource, o.ID, f.Namespaces[0])}, &r
}

// Count returns how many of an owner's metafields pass f.
func (s Service) Count(ctx context.Context, o Owner, f *Filter) (int, error) {
	if err := s.check(ctx, o, false); err != nil {
		return 0, err
	}
	q, rest := f.query(o)
	return records.CountMatching(ctx, s.Store, q, matcher(rest))
}

func matcher(f *Filter) records.Matcher {
	if f == nil || f.empty() {
		return nil
	}
	return func(it *store.Item) (bool, error) {
		var m Metafield
		if err := records.Decode(it, &m); err != nil {
			return false, err
		}
		return f.matches(&m), nil
	}
}

// get reads a metafield; through an owner's path (o not nil) one of
// another owner is not found, as is an owner that no longer exists.
func (s Service) get(ctx context.Context, o *Owner, id int64, write bool) (Metafield, store.Item, error) {
	var m Metafield
	it, err := records.Get(ctx, s.Store, Key(id), &m)
	if err != nil {
		return m, it, err
	}
	if o != nil {
		if m.OwnerResource != o.Resource || m.OwnerID != o.ID {
			return m, it, admin.NotFound
		}
		return m, it, s.check(ctx, *o, write)
	}
	return m, it, allowed(ctx, m.OwnerResource, write)
}

// Get returns one metafield: of any owner (o nil), or of o's.
func (s Service) Get(ctx context.Context, o *Owner, id int64) (Metafield, error) {
	m, _, err := s.get(ctx, o, id, false)
	return m, err
}

// Create adds a metafield to an owner: the metafield, the guard of its
// namespace and key and the count in one transaction; of two creates of
// the same namespace and key, the guard lets exactly one commit.
func (s Service) Create(ctx context.Context, o Owner, in *Input) (Metafield, error) {
	var v admin.Validation
	in.Validate(&v, "")
	if err := v.Err(); err != nil {
		return Metafield{}, err
	}
	if err := s.check(ctx, o, true); err != nil {
		return Metafield{}, err
	}
	value, _ := in.value()
	now := admin.Now()
	m := Metafield{Namespace: strings.TrimSpace(*in.Namespace), Key: strings.TrimSpace(*in.Key), Value: value,
		ValueType: *in.ValueType, Description: in.Description, OwnerID: o.ID, OwnerResource: o.Resource,
		CreatedAt: now, UpdatedAt: now}
	_, err := records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		m.ID = id
		return []store.Op{
			store.Put(m.Item(1), store.IfAbsent, 0),
			guardOp(&m),
			records.CountOp(partition, 1),
		}, nil
	})
	if store.FailedOp(err) == 1 {
		return Metafield{}, admin.Invalid("key", MsgTaken)
	}
	return m, err
}

func guardOp(m *Metafield) store.Op {
	gk := guardKey(m.OwnerResource, m.OwnerID, m.Namespace, m.Key)
	return store.Put(store.Item{PK: gk.PK, SK: gk.SK, Version: 1, Data: records.Encode(map[string]int64{"id": m.ID})}, store.IfAbsent, 0)
}

// Update changes a metafield's value, value_type and description;
// namespace and key may be sent only unchanged. The write is conditioned
// on the version read.
func (s Service) Update(ctx context.Context, o *Owner, id int64, in *Input) (Metafield, error) {
	var out Metafield
	err := records.Retry(ctx, func() (bool, error) {
		m, it, err := s.get(ctx, o, id, true)
		if err != nil {
			return false, err
		}
		var v admin.Validation
		if in.Namespace != nil && strings.TrimSpace(*in.Namespace) != m.Namespace {
			v.Add("namespace", MsgImmutable)
		}
		if in.Key != nil && strings.TrimSpace(*in.Key) != m.Key {
			v.Add("key", MsgImmutable)
		}
		merged := Input{Namespace: &m.Namespace, Key: &m.Key, Value: m.Value, ValueType: &m.ValueType}
		if in.ValueType != nil {
			merged.ValueType = in.ValueType
		}
		if in.Value != nil {
			merged.Value = in.Value
		}
		merged.Validate(&v, "")
		if in.Description != nil && len([]rune(*in.Description)) > descriptionMax && !v.Has("description") {
			v.Add("description", admin.TooLong(descriptionMax))
		}
		if err := v.Err(); err != nil {
			return false, err
		}
		m.Value, _ = merged.value()
		m.ValueType = *merged.ValueType
		if in.Description != nil {
			m.Description = in.Description
			if *in.Description == "" {
				m.Description = nil
			}
		}
		m.UpdatedAt = admin.Now()
		err = records.Transact(ctx, s.Store, records.PutNext(m.Item(it.Version)))
		out = m
		return store.FailedOp(err) == 0, err
	})
	return out, err
}

// Delete removes a metafield with its guard and count.
func (s Service) Delete(ctx context.Context, o *Owner, id int64) error {
	return records.Retry(ctx, func() (bool, error) {
		m, it, err := s.get(ctx, o, id, true)
		if err != nil {
			return false, err
		}
		err = records.Transact(ctx, s.Store,
			store.Delete(it.Key(), store.IfVersion, it.Version),
			store.Delete(guardKey(m.OwnerResource, m.OwnerID, m.Namespace, m.Key), store.Always, 0),
			records.CountOp(partition, -1))
		return store.FailedOp(err) == 0, err
	})
}

// Present moves a metafield's timestamps into loc.
func Present(m *Metafield, loc *time.Location) {
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.In(loc), m.UpdatedAt.In(loc)
}
