package charges

import (
	"context"
	"errors"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the charge operations, used by the handlers, the page and
// app uninstall.
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

// Now is the service's time.
func (s Service) Now() time.Time { return s.Clock.Now() }

// ErrNotPending is returned by Decide when the charge was already decided
// otherwise (or expired): the page shows its status instead.
var ErrNotPending = errors.New("charges: the charge is no longer pending")

// errForbidden is a page form without its valid token.
var errForbidden = admin.Errorf(admin.EFORBIDDEN, "Invalid form token")

// Create adds a pending charge of the app: the charge and its page link in
// one transaction.
func (s Service) Create(ctx context.Context, appID int64, in *Input) (Charge, error) {
	c, err := in.newCharge(appID, admin.At(s.Clock.Now()))
	if err != nil {
		return c, err
	}
	_, err = records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		c.ID = id
		lk := linkKey(id)
		return []store.Op{
			store.Put(c.item(1), store.IfAbsent, 0),
			store.Put(store.Item{PK: lk.PK, SK: lk.SK, Version: 1, Data: records.Encode(link{AppID: appID})}, store.IfAbsent, 0),
		}, nil
	})
	return c, err
}

// Get returns one of the app's charges; another app's is admin.NotFound.
func (s Service) Get(ctx context.Context, appID, id int64) (Charge, error) {
	var c Charge
	_, err := records.Get(ctx, s.Store, key(appID, id), &c)
	return c, err
}

// List returns the window of the app's charges after sinceID in id order,
// and where it lies: one query of its partition.
func (s Service) List(ctx context.Context, appID, sinceID int64, w records.Window) ([]Charge, records.Span, error) {
	q := store.Query{PK: Partition(appID)}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	return records.Spanned[Charge](records.ListWindow(ctx, s.Store, q, nil, w))
}

// statusError is the 422 of a transition the charge's status does not allow.
func statusError(status, only string) error {
	return admin.Invalid("status", "is "+status+"; only "+only)
}

// Activate makes an accepted charge the app's active one: the charge, the
// app's guard item (conditioned on its version, so concurrent activations
// take turns) and the cancellation of the app's previously active charge
// commit in one transaction.
func (s Service) Activate(ctx context.Context, appID, id int64) (Charge, error) {
	var c Charge
	err := records.Retry(ctx, func() (bool, error) {
		it, err := records.Get(ctx, s.Store, key(appID, id), &c)
		if err != nil {
			return false, err
		}
		now := admin.At(s.Clock.Now())
		if st := c.StatusAt(now.Time); st != StatusAccepted {
			return false, statusError(st, "an accepted charge can be activated")
		}
		ends := admin.Time{Time: now.Add(time.Duration(c.TrialDays) * 24 * time.Hour)}
		c.Status, c.ActivatedOn, c.TrialEndsOn, c.BillingOn, c.UpdatedAt = StatusActive, now.Ptr(), ends.Ptr(), ends.Ptr(), now
		ops := []store.Op{records.PutNext(c.item(it.Version))}
		ak := activeKey(appID)
		guard := store.Item{PK: ak.PK, SK: ak.SK, Version: 1, Data: records.Encode(active{ChargeID: id})}
		var cur active
		g, err := records.Get(ctx, s.Store, ak, &cur)
		switch {
		case errors.Is(err, admin.NotFound):
			ops = append(ops, store.Put(guard, store.IfAbsent, 0))
		case err != nil:
			return false, err
		default:
			guard.Version = g.Version + 1
			ops = append(ops, store.Put(guard, store.IfVersion, g.Version))
			if cur.ChargeID != id {
				op, err := s.cancelOp(ctx, appID, cur.ChargeID, now)
				if err != nil {
					return false, err
				}
				if op != nil {
					ops = append(ops, *op)
				}
			}
		}
		err = records.Transact(ctx, s.Store, ops...)
		return errors.Is(err, store.ErrConditionFailed), err
	})
	return c, err
}

// cancelOp is the conditioned write that cancels the app's charge id if it
// is active (nil when it is not, or gone).
func (s Service) cancelOp(ctx context.Context, appID, id int64, now admin.Time) (*store.Op, error) {
	var prev Charge
	it, err := records.Get(ctx, s.Store, key(appID, id), &prev)
	if errors.Is(err, admin.NotFound) {
		return nil, nil
	}
	if err != nil || prev.Status != StatusActive {
		return nil, err
	}
	prev.Status, prev.CancelledOn, prev.UpdatedAt = StatusCancelled, now.Ptr(), now
	op := records.PutNext(prev.item(it.Version))
	return &op, nil
}

// Cancel cancels a pending, accepted or active charge; an active one also
// frees the app's guard item, in the same transaction.
func (s Service) Cancel(ctx context.Context, appID, id int64) (Charge, error) {
	var c Charge
	err := records.Retry(ctx, func() (bool, error) {
		it, err := records.Get(ctx, s.Store, key(appID, id), &c)
		if err != nil {
			return false, err
		}
		now := admin.At(s.Clock.Now())
		st := c.StatusAt(now.Time)
		switch st {
		case StatusPending, StatusAccepted, StatusActive:
		default:
			return false, statusError(st, "a pending, accepted or active charge can be cancelled")
		}
		c.Status, c.CancelledOn, c.UpdatedAt = StatusCancelled, now.Ptr(), now
		ops := []store.Op{records.PutNext(c.item(it.Version))}
		if st == StatusActive {
			var cur active
			g, err := records.Get(ctx, s.Store, activeKey(appID), &cur)
			if err != nil && !errors.Is(err, admin.NotFound) {
				return false, err
			}
			if err == nil && cur.ChargeID == id {
				ops = append(ops, store.Delete(activeKey(appID), store.IfVersion, g.Version))
			}
		}
		err = records.Transact(ctx, s.Store, ops...)
		return errors.Is(err, store.ErrConditionFailed), err
	})
	return c, err
}

// CancelActive cancels the app's active charge, if it has one (app
// uninstall).
func (s Service) CancelActive(ctx context.Context, appID int64) error {
	var cur active
	if _, err := records.Get(ctx, s.Store, activeKey(appID), &cur); err != nil {
		if errors.Is(err, admin.NotFound) {
			return nil
		}
		return err
	}
	_, err := s.Cancel(ctx, appID, cur.ChargeID)
	var e *admin.Error
	if errors.As(err, &e) && (e.Code == admin.EINVALID || e.Code == admin.ENOTFOUND) {
		return nil // cancelled meanwhile
	}
	return err
}

// Confirmation is what the page shows: the charge whose id and secret are
// in the path, and its app's name. A wrong secret is admin.NotFound, as an
// unknown id is.
func (s Service) Confirmation(ctx context.Context, id int64, secret string) (Charge, string, error) {
	c, _, err := s.bySecret(ctx, id, secret)
	if err != nil {
		return c, "", err
	}
	app, err := auth.App(ctx, s.Store, c.APIClientID)
	if err != nil {
		return c, "", err
	}
	return c, app.Name, nil
}

func (s Service) bySecret(ctx context.Context, id int64, secret string) (Charge, store.Item, error) {
	var c Charge
	var lk link
	if _, err := records.Get(ctx, s.Store, linkKey(id), &lk); err != nil {
		return c, store.Item{}, err
	}
	it, err := records.Get(ctx, s.Store, key(lk.AppID, id), &c)
	if err != nil {
		return c, it, err
	}
	if !c.SecretMatches(secret) {
		return Charge{}, it, admin.NotFound
	}
	return c, it, nil
}

// Decide records the shop owner's answer on the page: accepted (with
// billing_on: the end of the trial if activated now) or declined. The same
// answer again is a no-op; another status is ErrNotPending with the charge
// and its app's name, what the page then shows.
func (s Service) Decide(ctx context.Context, id int64, secret, token string, accept bool) (Charge, string, error) {
	c, err := s.decide(ctx, id, secret, token, accept)
	if !errors.Is(err, ErrNotPending) {
		return c, "", err
	}
	app, err := auth.App(ctx, s.Store, c.APIClientID)
	if err != nil {
		return c, "", err
	}
	return c, app.Name, ErrNotPending
}

func (s Service) decide(ctx context.Context, id int64, secret, token string, accept bool) (Charge, error) {
	var c Charge
	err := records.Retry(ctx, func() (bool, error) {
		var it store.Item
		var err error
		if c, it, err = s.bySecret(ctx, id, secret); err != nil {
			return false, err
		}
		if !c.CSRFMatches(token) {
			return false, errForbidden
		}
		want := StatusDeclined
		if accept {
			want = StatusAccepted
		}
		now := admin.At(s.Clock.Now())
		switch st := c.StatusAt(now.Time); {
		case st == want:
			return false, nil
		case st != StatusPending:
			return false, ErrNotPending
		}
		c.Status, c.UpdatedAt = want, now
		if accept {
			c.BillingOn = admin.Time{Time: now.Add(time.Duration(c.TrialDays) * 24 * time.Hour)}.Ptr()
		}
		err = records.Transact(ctx, s.Store, records.PutNext(c.item(it.Version)))
		return errors.Is(err, store.ErrConditionFailed), err
	})
	return c, err
}
