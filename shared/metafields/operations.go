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

// Messages of the metafields endpoints beyond the contract's validation messages.
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

// Filter is what a list or count keeps: the Metafields operations' query
// parameters but paging.
type Filter struct {
	Namespaces         []string // namespace and namepace (sic), each must match
	Key, ValueType     string
	Type               string // the metafield type (types.go)
	Created, Updated   dates.Range
	OwnerID            int64  // metafield[owner_id]
	OwnerResource      string // metafield[owner_resource]
	OwnerGiven, Nested bool
}

func (f *Filter) matches(m *Metafield) bool {
	for _, ns := range f.Namespaces {
		if m.Namespace != ns {
			return false
		}
	}
	return (f.Key == "" || m.Key == f.Key) && (f.ValueType == "" || m.ValueType == f.ValueType) && (f.Type == "" || m.TypeName() == f.Type) &&
		f.Created.Contains(m.CreatedAt.Time) && f.Updated.Contains(m.UpdatedAt.Time)
}

// CheckFilter validates the filter's values (400 naming the parameter).
func (f *Filter) CheckFilter() error {
	if f.ValueType != "" && f.ValueType != "string" && f.ValueType != "integer" {
		return admin.BadParam("value_type", admin.MsgNotInList)
	}
	if f.Type != "" && !KnownType(f.Type) {
		return admin.BadParam("type", admin.MsgNotInList)
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
// f, and where it lies: one Query of the source (Filter.source), with a
// GetItem per metafield when it reads the guards.
func (s Service) List(ctx context.Context, o Owner, f *Filter, sinceID int64, w records.Window) ([]Metafield, records.Span, error) {
	if err := s.check(ctx, o, false); err != nil {
		return nil, records.Span{}, err
	}
	q, match, refs := f.source(o, sinceID)
	return records.Spanned[Metafield](records.ListSource(ctx, s.Store, q, match, refs, w))
}

// source is what a list or count of f reads among an owner's metafields,
// the most selective the filters allow (records.Plan): the guards of a key
// (GSI1) or of an updated_at range (GSI2, in that order), the owner's
// metafields in a namespace (GSI2), else all the owner's (GSI1); since_id
// and created_at (the id's second) bound the id-ordered ones by key.
// value_type and type are checked on each metafield read. The guards
// are Ref entries (refs); match is nil when the keys answer f whole.
func (f *Filter) source(o Owner, sinceID int64) (q store.Query, match records.Matcher, refs bool) {
	if f == nil {
		f = &Filter{}
	}
	owner := OwnerPartition(o.Resource, o.ID)
	p := records.Plan{All: store.Query{Index: store.GSI1, PK: owner}, Created: f.Created, SinceID: sinceID}
	if f.Key != "" {
		p.Keyed = append(p.Keyed, records.Keyed{Query: store.Query{Index: store.GSI1, PK: KeyPartition(o.Resource, o.ID, f.Key)}, Ref: true})
	}
	if !f.Updated.Empty() {
		k := records.Timed(owner, "updated_at", f.Updated)
		k.Query.Index, k.Ref = store.GSI2, true
		p.Keyed = append(p.Keyed, k)
	}
	if len(f.Namespaces) > 0 {
		p.Keyed = append(p.Keyed, records.Keyed{Query: store.Query{Index: store.GSI2, PK: NamespacePartition(o.Resource, o.ID, f.Namespaces[0])}})
	}
	if f.ValueType != "" || f.Type != "" || len(f.Namespaces) > 1 { // namespace and namepace: both must match
		p.Given = len(p.Keyed) + 1
	}
	q, exact := p.Source()
	if exact {
		return q, nil, p.Refs()
	}
	return q, func(it *store.Item) (bool, error) {
		var m Metafield
		if err := records.Decode(it, &m); err != nil {
			return false, err
		}
		return m.ID > sinceID && f.matches(&m), nil
	}, p.Refs()
}

// Count returns how many of an owner's metafields pass f: unfiltered, the
// owner's counter; else a count of the source's keys, with a GetItem per
// key where a combination over the guards needs the metafield.
func (s Service) Count(ctx context.Context, o Owner, f *Filter) (int, error) {
	if err := s.check(ctx, o, false); err != nil {
		return 0, err
	}
	q, match, refs := f.source(o, 0)
	if match == nil && q.Index == store.GSI1 && q.PK == OwnerPartition(o.Resource, o.ID) && q.After == "" && q.Before == "" {
		return records.Count(ctx, s.Store, q.PK) // the owner's counter
	}
	return records.CountSource(ctx, s.Store, q, match, refs)
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

// Create adds a metafield to an owner: the metafield, stamped, and the
// guard of its namespace and key in one transaction; of two creates of the
// same namespace and key, the guard lets exactly one commit. Its owner's
// count is the change feed's (Derive).
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
	now := admin.At(s.Clock.Now())
	m := Metafield{Namespace: strings.TrimSpace(*in.Namespace), Key: strings.TrimSpace(*in.Key), Value: value,
		ValueType: in.kind.valueType, Type: in.kind.typ, Description: in.Description, OwnerID: o.ID, OwnerResource: o.Resource}
	_, err := records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		m.ID = id
		m.stamp(now)
		it := m.Item(1)
		records.Stamp(ctx, &it, id)
		return []store.Op{store.Put(it, store.IfAbsent, 0), m.guardPut(&it, store.IfAbsent)}, nil
	})
	if store.FailedOn(err, m.guardKey()) {
		return Metafield{}, admin.Invalid("key", MsgTaken)
	}
	return m, err
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
		merged := Input{Value: m.Value, ValueType: in.ValueType, Type: in.Type}
		if in.Value != nil {
			merged.Value = in.Value
		}
		merged.validateValue(&v, "", &m)
		if in.Description != nil && len([]rune(*in.Description)) > descriptionMax && !v.Has("description") {
			v.Add("description", admin.TooLong(descriptionMax))
		}
		if err := v.Err(); err != nil {
			return false, err
		}
		m.Value, _ = merged.value()
		m.ValueType, m.Type = merged.kind.valueType, merged.kind.typ
		if in.Description != nil {
			m.Description = in.Description
			if *in.Description == "" {
				m.Description = nil
			}
		}
		m.UpdatedAt = admin.At(s.Clock.Now())
		put := records.PutNext(m.Item(it.Version))
		records.Stamp(ctx, &put.Item, s.IDs.Next())
		err = records.Transact(ctx, s.Store, put, m.guardPut(&put.Item, store.Always))
		out = m
		return store.FailedOn(err, put.Item.Key()), err
	})
	return out, err
}

// Delete removes a metafield with its guard, and its tomb saying who did;
// its owner's count is the change feed's.
func (s Service) Delete(ctx context.Context, o *Owner, id int64) error {
	return records.Retry(ctx, func() (bool, error) {
		m, it, err := s.get(ctx, o, id, true)
		if err != nil {
			return false, err
		}
		ops, _ := records.Remove(ctx, &it, s.IDs.Next(), s.Clock.Now())
		err = records.Transact(ctx, s.Store, append(ops, store.Delete(guardKey(m.OwnerResource, m.OwnerID, m.Namespace, m.Key), store.Always, 0))...)
		return store.FailedOn(err, it.Key()), err
	})
}

// Present moves a metafield's timestamps into loc.
func Present(m *Metafield, loc *time.Location) {
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.In(loc), m.UpdatedAt.In(loc)
	m.Type = m.TypeName()
}
