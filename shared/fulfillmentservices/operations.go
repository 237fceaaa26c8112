package fulfillmentservices

import (
	"context"
	"errors"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the fulfillment service operations: plain functions of a
// context and typed input, used by the handlers (the record is
// FulfillmentService).
// Writes are the calling app's (admin.AppFrom); the functions below them
// (Lookup, All, OfApp, DeleteAllOfApp) serve the provider polls and app
// uninstall.
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
	// Outbound fetches what a user names by URL.
	Outbound *outbound.Client
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock, Outbound: d.Outbound}
}

// Filter is the list's scope: every app's services, or the caller's.
type Filter struct{ All bool }

// List returns the services in id order: the caller's (one Query of GSI1),
// or with All every app's (one Query of the partition).
func (s Service) List(ctx context.Context, f Filter) ([]FulfillmentService, error) {
	if f.All {
		return All(ctx, s.Store)
	}
	return OfApp(ctx, s.Store, admin.AppFrom(ctx).ID)
}

// Get returns one service of any app.
func (s Service) Get(ctx context.Context, id int64) (*FulfillmentService, error) {
	return Lookup(ctx, s.Store, id)
}

// Create registers a service for the calling app; its handle, unique in the
// shop, is claimed in the same transaction (handles.Create).
func (s Service) Create(ctx context.Context, in *Input) (FulfillmentService, error) {
	now := admin.At(s.Clock.Now())
	svc := FulfillmentService{AppID: admin.AppFrom(ctx).ID, CreatedAt: now, UpdatedAt: now}
	if err := in.apply(&svc, true, s.Outbound.Refuses); err != nil {
		return svc, err
	}
	_, _, err := handles.Create(ctx, s.Store, s.IDs, HandleNamespace, "", svc.Name, func(id int64, handle string) ([]store.Op, error) {
		svc.ID, svc.Handle = id, handle
		return []store.Op{store.Put(svc.item(1), store.IfAbsent, 0)}, nil
	})
	return svc, err
}

// Update changes one of the calling app's services; another app's is
// admin.NotFound.
func (s Service) Update(ctx context.Context, id int64, in *Input) (FulfillmentService, error) {
	appID := admin.AppFrom(ctx).ID
	var svc FulfillmentService
	err := records.Update(ctx, s.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		var err error
		if svc, err = decode(it); err != nil {
			return nil, err
		}
		if svc.AppID != appID {
			return nil, admin.NotFound
		}
		if err := in.apply(&svc, false, s.Outbound.Refuses); err != nil {
			return nil, err
		}
		svc.UpdatedAt = admin.At(s.Clock.Now())
		return []store.Op{records.PutNext(svc.item(it.Version))}, nil
	})
	return svc, err
}

// Delete removes one of the calling app's services with its handle; another
// app's is admin.NotFound.
func (s Service) Delete(ctx context.Context, id int64) error {
	appID := admin.AppFrom(ctx).ID
	return records.Update(ctx, s.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		svc, err := decode(it)
		if err != nil {
			return nil, err
		}
		if svc.AppID != appID {
			return nil, admin.NotFound
		}
		return deleteOps(&svc, it.Version), nil
	})
}

// Lookup reads one service of any app, AppID and Credential2 filled; an
// unknown id is admin.NotFound.
func Lookup(ctx context.Context, st store.Store, id int64) (*FulfillmentService, error) {
	it, err := st.Get(ctx, key(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, admin.NotFound
	}
	if err != nil {
		return nil, err
	}
	s, err := decode(&it)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// All returns every app's services in id order, AppID and Credential2
// filled: one Query of the partition, paged.
func All(ctx context.Context, st store.Store) ([]FulfillmentService, error) {
	return query(ctx, st, store.Query{PK: Partition})
}

// OfApp returns one app's services in id order: one Query of GSI1, paged.
func OfApp(ctx context.Context, st store.Store, appID int64) ([]FulfillmentService, error) {
	return query(ctx, st, store.Query{Index: store.GSI1, PK: AppPartition(appID)})
}

func query(ctx context.Context, st store.Store, q store.Query) ([]FulfillmentService, error) {
	q.Limit = 500
	out := []FulfillmentService{}
	err := records.Each(ctx, st, q, func(it *store.Item) error {
		s, err := decode(it)
		out = append(out, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// deleteOps are the writes deleting a service read at version: the record
// (if unchanged) and its handle.
func deleteOps(s *FulfillmentService, version int64) []store.Op {
	return []store.Op{
		store.Delete(key(s.ID), store.IfVersion, version),
		handles.Release(HandleNamespace, s.Handle),
	}
}

// DeleteAllOfApp deletes every service of an app with its handle (app
// uninstall). A service changed meanwhile is read again.
func DeleteAllOfApp(ctx context.Context, st store.Store, appID int64) error {
	const batch = store.MaxTransactItems / 2
	return records.Retry(ctx, func() (bool, error) {
		// The table, not GSI1, gives each item's current version.
		svcs, err := OfApp(ctx, st, appID)
		if err != nil || len(svcs) == 0 {
			return false, err
		}
		for len(svcs) > 0 {
			n := min(len(svcs), batch)
			var ops []store.Op
			for i := range svcs[:n] {
				it, err := st.Get(ctx, key(svcs[i].ID))
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return false, err
				}
				s, err := decode(&it)
				if err != nil {
					return false, err
				}
				ops = append(ops, deleteOps(&s, it.Version)...)
			}
			svcs = svcs[n:]
			if len(ops) == 0 {
				continue
			}
			if err := records.Transact(ctx, st, ops...); err != nil {
				return errors.Is(err, store.ErrConditionFailed), err // a service changed meanwhile: read again
			}
		}
		return false, nil
	})
}
