package smartcollections

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Membership is kept in three places, always changed together in one
// transaction per product:
//
//   - the membership item smart_member#<collection>/<product> (GSI2
//     product#<product>#smart_member/<collection>), which the collects
//     endpoint lists;
//   - the collection's products_count (store.Add on its item);
//   - the product's state item smart_product/<product>: the ids of the smart
//     collections it belongs to. It is the source of truth the engine reads
//     (one strongly consistent GetItem, where a GSI2 Query may lag), and its
//     version serialises every membership change of one product: writers
//     read it first and write it with IfVersion, so a writer that computed
//     its change from stale data (variants, memberships) fails and starts over.
//
// Rule sets are read from smart_rules/<collection>, whose version moves with
// every rule change; membership writes check it, so no write computed from
// old rules lands after new ones were committed.

// Per-transaction op budgets (store.MaxTransactItems is 100; the brief keeps
// membership transactions at most 90).
const (
	maxOps = 90
	// recompute: the collection's Add and rules check, then two ops a product.
	batchProducts = (maxOps - 2) / 2
	scanPage      = 1000
)

// Member is the stored membership record, shown by the collects endpoint
// as a read-only collect of the smart collection.
type Member struct {
	ID           int64      `json:"id"`
	CollectionID int64      `json:"collection_id"`
	ProductID    int64      `json:"product_id"`
	Position     int64      `json:"position"`
	CreatedAt    admin.Time `json:"created_at"`
	UpdatedAt    admin.Time `json:"updated_at"`
}

func (m *Member) item() store.Item {
	k := MemberKey(m.CollectionID, m.ProductID)
	return store.Item{
		PK: k.PK, SK: k.SK,
		GSI2PK: ProductMembersIndex(m.ProductID), GSI2SK: records.IDSK(m.CollectionID),
		Version: 1, Data: records.Encode(m),
	}
}

// productState is the product's smart collection ids (sorted).
type productState struct {
	Collections []int64 `json:"collection_ids"`
}

func stateKey(productID int64) store.Key {
	return store.Key{PK: statePartition, SK: records.IDSK(productID)}
}

// statePut writes a product's state over the version read (0: absent).
func statePut(productID int64, collections []int64, version int64) store.Op {
	k := stateKey(productID)
	it := store.Item{PK: k.PK, SK: k.SK, Version: version + 1, Data: records.Encode(productState{Collections: nonNilIDs(collections)})}
	if version == 0 {
		return store.Put(it, store.IfAbsent, 0)
	}
	return store.Put(it, store.IfVersion, version)
}

func readState(ctx context.Context, st store.Store, productID int64) ([]int64, int64, error) {
	var s productState
	it, err := records.Get(ctx, st, stateKey(productID), &s)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	slices.Sort(s.Collections)
	return s.Collections, it.Version, nil
}

// ruleSet is the rules item's data; its item version is the rules version.
type ruleSet struct {
	Rules       []Rule `json:"rules"`
	Disjunctive bool   `json:"disjunctive"`
}

func rulesKey(collectionID int64) store.Key {
	return store.Key{PK: rulesPartition, SK: records.IDSK(collectionID)}
}

// rulesPut writes a collection's rule set as version `version` (1 on create).
func rulesPut(collectionID int64, rules []Rule, disjunctive bool, version int64) store.Op {
	k := rulesKey(collectionID)
	it := store.Item{PK: k.PK, SK: k.SK, Version: version, Data: records.Encode(ruleSet{Rules: rules, Disjunctive: disjunctive})}
	if version == 1 {
		return store.Put(it, store.IfAbsent, 0)
	}
	return store.Put(it, store.IfVersion, version-1)
}

func countAdd(collectionID, delta int64) store.Op {
	return store.Add(Key(collectionID), store.IfPresent, map[string]int64{CountNum: delta})
}

// scan reads a whole partition of the table page by page.
func scan(ctx context.Context, st store.Store, pk string, fn func(it *store.Item) error) error {
	return records.Each(ctx, st, store.Query{PK: pk, Limit: scanPage}, fn)
}

// liveRules is one collection's rule set as Reevaluate reads it.
type liveRules struct {
	id      int64
	version int64
	m       matcher
}

func readRuleSets(ctx context.Context, st store.Store) ([]liveRules, error) {
	var out []liveRules
	err := scan(ctx, st, rulesPartition, func(it *store.Item) error {
		var rs ruleSet
		if err := records.Decode(it, &rs); err != nil {
			return err
		}
		id, err := records.ParseIDSK(it.SK)
		if err != nil {
			return err
		}
		out = append(out, liveRules{id: id, version: it.Version, m: compile(rs.Rules, rs.Disjunctive)})
		return nil
	})
	return out, err
}

// productVariants reads a product's variants: one Query of its GSI1
// partition (positions are not needed to match rules).
func productVariants(ctx context.Context, st store.Store, productID int64) ([]catalog.Variant, error) {
	items, err := records.List(ctx, st, store.Query{Index: store.GSI1, PK: catalog.ProductVariantsIndex(productID)}, nil, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	out := make([]catalog.Variant, 0, len(items))
	for i := range items {
		v, err := catalog.DecodeVariant(&items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// ProductChanged is the hook the composition root sets as
// platform.Deps.ProductChanged: Reevaluate over the deps' store.
func ProductChanged(d *platform.Deps) func(ctx context.Context, productID int64) error {
	return func(ctx context.Context, productID int64) error {
		return Reevaluate(ctx, d.Store, d.IDs, d.Clock, productID)
	}
}

// errContention is returned when writers kept invalidating each other.
var errContention = errors.New("smartcollections: membership kept changing concurrently; gave up")

// Reevaluate brings one product's smart collection memberships up to date,
// to be called after the product or its variants changed. It reads the
// product's state, the product, its variants (one GSI1 Query) and every
// rule set (one Query), and writes only the differences: membership puts
// and deletes with the affected collections' products_count, at most 90
// ops a transaction. The product's state is rewritten even when nothing
// changed, so a concurrent recompute that read the product before the
// change cannot commit a stale answer. A write that lost a race is
// started over from fresh reads.
func Reevaluate(ctx context.Context, st store.Store, gen *ids.Generator, clk clock.Clock, productID int64) error {
	err := records.Retry(ctx, func() (bool, error) {
		err := reevaluate(ctx, st, gen, clk, productID)
		return errors.Is(err, store.ErrConditionFailed), err
	})
	if errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("%w (product %d): %v", errContention, productID, err)
	}
	return err
}

// change is one membership to add or remove.
type change struct {
	collectionID int64
	add          bool
	live         bool  // the collection exists (its count and rules are checked)
	rules        int64 // rules version the decision was made with
}

// ops is how many ops the change takes in a transaction.
func (c *change) ops() int {
	if c.live {
		return 3
	}
	return 1
}

func reevaluate(ctx context.Context, st store.Store, gen *ids.Generator, clk clock.Clock, productID int64) error {
	have, version, err := readState(ctx, st, productID)
	if err != nil {
		return err
	}
	p, err := catalog.GetProduct(ctx, st, productID)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		p, err = nil, nil
	}
	if err != nil {
		return err
	}
	if p == nil && version == 0 {
		return nil // never a member of anything
	}
	var vs []catalog.Variant
	if p != nil {
		if vs, err = productVariants(ctx, st, productID); err != nil {
			return err
		}
	}
	sets, err := readRuleSets(ctx, st)
	if err != nil {
		return err
	}
	if len(sets) == 0 && version == 0 {
		// No smart collection existed when the rules were read, so none
		// can have read this product before its change: nothing to guard.
		return nil
	}
	var changes []change
	live := make(map[int64]bool, len(sets))
	for i := range sets {
		s := &sets[i]
		live[s.id] = true
		want, had := s.m.matches(p, vs), slices.Contains(have, s.id)
		if want != had {
			changes = append(changes, change{collectionID: s.id, add: want, live: true, rules: s.version})
		}
	}
	for _, id := range have {
		if !live[id] { // the collection was deleted: drop what is left of the membership
			changes = append(changes, change{collectionID: id})
		}
	}
	slices.SortFunc(changes, func(a, b change) int { return compareIDs(a.collectionID, b.collectionID) })

	now := admin.At(clk.Now())
	current := slices.Clone(have)
	for first := true; first || len(changes) > 0; first = false {
		ops := []store.Op{{}} // the state put, filled in below
		n := 0
		for n < len(changes) && len(ops)+changes[n].ops() <= maxOps {
			c := &changes[n]
			if c.add {
				pos, err := nextPosition(ctx, st, c.collectionID)
				if err != nil {
					return err
				}
				m := Member{ID: gen.Next(), CollectionID: c.collectionID, ProductID: productID, Position: pos, CreatedAt: now, UpdatedAt: now}
				ops = append(ops, store.Put(m.item(), store.Always, 0), countAdd(c.collectionID, 1))
				current = insertID(current, c.collectionID)
			} else {
				ops = append(ops, store.Delete(MemberKey(c.collectionID, productID), store.Always, 0))
				if c.live {
					ops = append(ops, countAdd(c.collectionID, -1))
				}
				current = removeID(current, c.collectionID)
			}
			if c.live {
				ops = append(ops, store.Check(rulesKey(c.collectionID), store.IfVersion, c.rules))
			}
			n++
		}
		ops[0] = statePut(productID, current, version)
		if err := st.Transact(ctx, ops...); err != nil {
			return err
		}
		version++
		changes = changes[n:]
	}
	return nil
}

// nextPosition is the position a product joining a collection takes: after
// the members it has (one GetItem of the collection, only when a product
// joins). Positions of leavers are not reused.
func nextPosition(ctx context.Context, st store.Store, collectionID int64) (int64, error) {
	it, err := st.Get(ctx, Key(collectionID))
	if errors.Is(err, store.ErrNotFound) {
		return 1, nil // deleted meanwhile: the transaction's count check fails
	}
	if err != nil {
		return 0, err
	}
	return it.Nums[CountNum] + 1, nil
}

// Recompute brings one smart collection's membership up to date over every
// product, after its rules changed. It reads the rule set, the collection's
// count, every product state, product and variant (one paged Query of each
// partition, however many products there are) and writes the differences
// in transactions of at most 44 products. A product changed meanwhile
// (its state's version moved) is handed to Reevaluate and left out of the
// batch; if the collection was deleted or its rules changed again, the
// newer change owns the membership and Recompute stops.
func Recompute(ctx context.Context, st store.Store, gen *ids.Generator, clk clock.Clock, collectionID int64) error {
	var rs ruleSet
	rit, err := records.Get(ctx, st, rulesKey(collectionID), &rs)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	cit, err := st.Get(ctx, Key(collectionID))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return recompute(ctx, st, gen, clk, collectionID, rs, rit.Version, cit.Nums[CountNum])
}

// recompute is Recompute with the rule set (at rulesVersion) and the
// collection's count known, as its own create or update just wrote them.
func recompute(ctx context.Context, st store.Store, gen *ids.Generator, clk clock.Clock, collectionID int64, rs ruleSet, rulesVersion, count int64) error {
	// States first: any membership write after this read moves a version.
	type state struct {
		version int64
		ids     []int64
	}
	states := map[int64]state{}
	if err := scan(ctx, st, statePartition, func(it *store.Item) error {
		var s productState
		if err := records.Decode(it, &s); err != nil {
			return err
		}
		id, err := records.ParseIDSK(it.SK)
		if err != nil {
			return err
		}
		states[id] = state{version: it.Version, ids: s.Collections}
		return nil
	}); err != nil {
		return err
	}
	var products []*catalog.Product
	if err := scan(ctx, st, catalog.ProductPartition, func(it *store.Item) error {
		p, err := catalog.DecodeProduct(it)
		if err == nil {
			products = append(products, p)
		}
		return err
	}); err != nil {
		return err
	}
	variants := make(map[int64][]catalog.Variant, len(products))
	if err := scan(ctx, st, catalog.VariantPartition, func(it *store.Item) error {
		v, err := catalog.DecodeVariant(it)
		if err == nil {
			variants[v.ProductID] = append(variants[v.ProductID], v)
		}
		return err
	}); err != nil {
		return err
	}

	type pchange struct {
		productID int64
		add       bool
		version   int64
		ids       []int64
	}
	m := compile(rs.Rules, rs.Disjunctive)
	var changes []pchange
	seen := make(map[int64]bool, len(products))
	for _, p := range products {
		seen[p.ID] = true
		s := states[p.ID]
		if want, had := m.matches(p, variants[p.ID]), slices.Contains(s.ids, collectionID); want != had {
			changes = append(changes, pchange{productID: p.ID, add: want, version: s.version, ids: s.ids})
		}
	}
	for id, s := range states {
		if !seen[id] && slices.Contains(s.ids, collectionID) { // the product is gone
			changes = append(changes, pchange{productID: id, version: s.version, ids: s.ids})
		}
	}
	slices.SortFunc(changes, func(a, b pchange) int { return compareIDs(a.productID, b.productID) })

	position := count
	now := admin.At(clk.Now())
	for len(changes) > 0 {
		batch := changes[:min(len(changes), batchProducts)]
		changes = changes[len(batch):]
		for len(batch) > 0 {
			delta := int64(0)
			ops := []store.Op{{}, store.Check(rulesKey(collectionID), store.IfVersion, rulesVersion)}
			for _, c := range batch {
				if c.add {
					delta++
					position++
					mem := Member{ID: gen.Next(), CollectionID: collectionID, ProductID: c.productID, Position: position, CreatedAt: now, UpdatedAt: now}
					ops = append(ops, statePut(c.productID, insertID(slices.Clone(c.ids), collectionID), c.version),
						store.Put(mem.item(), store.Always, 0))
				} else {
					delta--
					ops = append(ops, statePut(c.productID, removeID(slices.Clone(c.ids), collectionID), c.version),
						store.Delete(MemberKey(collectionID, c.productID), store.Always, 0))
				}
			}
			ops[0] = countAdd(collectionID, delta)
			err := st.Transact(ctx, ops...)
			failed, _ := store.FailedKey(err)
			k := slices.IndexFunc(batch, func(c pchange) bool {
				return failed == stateKey(c.productID) || failed == MemberKey(collectionID, c.productID)
			})
			switch {
			case err == nil:
				batch = nil
			case failed == Key(collectionID) || failed == rulesKey(collectionID):
				return nil // deleted, or its rules changed again: that change takes over
			case k >= 0:
				// This product changed meanwhile: evaluate it afresh on its own.
				if err := Reevaluate(ctx, st, gen, clk, batch[k].productID); err != nil {
					return err
				}
				batch = slices.Delete(slices.Clone(batch), k, k+1)
			default:
				return err
			}
		}
	}
	return nil
}

// deleteMembersOps are the deletes of a deleted collection's membership
// items (one paged Query of its partition). Product states still naming
// the collection are cleaned up by their next Reevaluate.
func deleteMembersOps(ctx context.Context, st store.Store, collectionID int64) ([]store.Op, error) {
	var ops []store.Op
	err := scan(ctx, st, MemberPartition(collectionID), func(it *store.Item) error {
		ops = append(ops, store.Delete(it.Key(), store.Always, 0))
		return nil
	})
	return ops, err
}

func compareIDs(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func insertID(list []int64, id int64) []int64 {
	i, found := slices.BinarySearch(list, id)
	if found {
		return list
	}
	return slices.Insert(list, i, id)
}

func removeID(list []int64, id int64) []int64 {
	if i, found := slices.BinarySearch(list, id); found {
		return slices.Delete(list, i, i+1)
	}
	return list
}

func nonNilIDs(list []int64) []int64 {
	if list == nil {
		return []int64{}
	}
	return list
}

// The reads of memberships the collects endpoints show as read-only
// collects: same items, same costs as a read of collects.

// MemberOf returns the product's membership of the collection, nil when it
// is not a member: one GetItem.
func MemberOf(ctx context.Context, st store.Store, collectionID, productID int64) (*Member, error) {
	var m Member
	if _, err := records.Get(ctx, st, MemberKey(collectionID, productID), &m); err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return nil, nil
		}
		return nil, err
	}
	return &m, nil
}

// Members returns the window of the collection's memberships in product id
// order whose own id is after sinceID, and where it lies: a paged Query of
// the collection's membership partition.
func Members(ctx context.Context, st store.Store, collectionID, sinceID int64, w records.Window) ([]Member, records.Span, error) {
	var match records.Matcher
	if sinceID > 0 {
		match = func(it *store.Item) (bool, error) {
			var m Member
			err := records.Decode(it, &m)
			return m.ID > sinceID, err
		}
	}
	return records.Spanned[Member](records.ListWindow(ctx, st, store.Query{PK: MemberPartition(collectionID)}, match, w))
}

// MembershipsOf returns every membership of the product, by collection id:
// one Query of its index partition.
func MembershipsOf(ctx context.Context, st store.Store, productID int64) ([]Member, error) {
	items, err := records.List(ctx, st, store.Query{Index: store.GSI2, PK: ProductMembersIndex(productID)}, nil, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	return records.DecodeAll[Member](items)
}

// CountMembers is how many products the collection holds: its
// products_count, one GetItem.
func CountMembers(ctx context.Context, st store.Store, collectionID int64) (int, error) {
	it, err := st.Get(ctx, Key(collectionID))
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	return int(it.Nums[CountNum]), err // kept in every membership transaction
}

// CountMembershipsOf counts the product's memberships.
func CountMembershipsOf(ctx context.Context, st store.Store, productID int64) (int, error) {
	return st.Count(ctx, store.Query{Index: store.GSI2, PK: ProductMembersIndex(productID)})
}

// membershipJobPage is how many markers a drain reads a query.
const membershipJobPage = 100

// RunMembershipJobs brings up to date what committed changes left a
// marker for (catalog.MembershipJobPartition): the products of variant
// changes (Reevaluate) and the collections whose rules changed
// (Recompute), and removes the markers it read once that is done. What a
// request's own step after its commit did not finish heals here, with no
// client action. It is idempotent (both read the state as it is now) and
// returns how many products and collections it brought up to date and the
// first failure; a marker whose work failed stays for the next run, and one
// written after the read stays too.
func (s Service) RunMembershipJobs(ctx context.Context) (int, error) {
	type target struct {
		id         int64
		collection bool
	}
	marks := map[target][]store.Key{}
	var order []target
	err := records.Each(ctx, s.Store, store.Query{PK: catalog.MembershipJobPartition, Limit: membershipJobPage}, func(it *store.Item) error {
		var t target
		if id, ok := catalog.MembershipJobCollection(it.SK); ok {
			t = target{id, true}
		} else if id, ok := catalog.MembershipJobProduct(it.SK); ok {
			t = target{id, false}
		} else {
			return nil
		}
		if marks[t] == nil {
			order = append(order, t)
		}
		marks[t] = append(marks[t], it.Key())
		return nil
	})
	done := 0
	for _, t := range order {
		if ctx.Err() != nil {
			break
		}
		run := Reevaluate
		if t.collection {
			run = Recompute
		}
		if rerr := run(ctx, s.Store, s.IDs, s.Clock, t.id); rerr != nil {
			err = cmp.Or(err, rerr)
			continue
		}
		done++
		err = cmp.Or(err, s.clearMarks(ctx, marks[t]...))
	}
	return done, err
}

// clearMarks deletes membership markers whose work is done.
func (s Service) clearMarks(ctx context.Context, marks ...store.Key) error {
	ops := make([]store.Op, 0, len(marks))
	for _, k := range marks {
		ops = append(ops, store.Delete(k, store.Always, 0))
	}
	return records.TransactBatches(ctx, s.Store, ops)
}
