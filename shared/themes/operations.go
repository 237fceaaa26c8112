package themes

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

// Service holds the theme and asset operations, used by the handlers and
// the import job.
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
	// Outbound fetches what a user names by URL.
	Outbound *outbound.Client
	// ThemeImports carries zip imports to the theme-import function.
	ThemeImports queue.Queue
	// DownloadTimeout bounds an import's zip download; zero is
	// DefaultDownloadTimeout (tests shorten it).
	DownloadTimeout time.Duration
	// Metrics counts finished imports.
	Metrics *metrics.Recorder
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock, Outbound: d.Outbound, ThemeImports: d.ThemeImports, Metrics: d.Metrics}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// getSet reads the theme set; an absent set is empty at version 0.
func (s Service) getSet(ctx context.Context) (theme.Set, int64, error) {
	var set theme.Set
	it, err := s.Store.Get(ctx, theme.SetKey)
	if errors.Is(err, store.ErrNotFound) {
		return set, 0, nil
	}
	if err != nil {
		return set, 0, err
	}
	return set, it.Version, records.Decode(&it, &set)
}

// putSet is the conditioned write of the set read at version v.
func putSet(set *theme.Set, v int64) store.Op {
	if v == 0 {
		return store.Put(set.Item(1), store.IfAbsent, 0)
	}
	return store.Put(set.Item(v+1), store.IfVersion, v)
}

func (s Service) get(ctx context.Context, id int64) (theme.Record, store.Item, error) {
	var rec theme.Record
	it, err := records.Get(ctx, s.Store, theme.Key(id), &rec)
	return rec, it, err
}

// List returns every theme in id order (at most 20: one Query).
func (s Service) List(ctx context.Context) ([]theme.Theme, error) {
	items, err := records.List(ctx, s.Store, store.Query{PK: theme.Partition}, nil, 0, theme.MaxThemes*2)
	if err != nil {
		return nil, err
	}
	recs, err := records.DecodeAll[theme.Record](items)
	if err != nil {
		return nil, err
	}
	out := make([]theme.Theme, len(recs))
	for i := range recs {
		out[i] = recs[i].Theme
	}
	return out, nil
}

// Get returns one theme.
func (s Service) Get(ctx context.Context, id int64) (theme.Theme, error) {
	rec, _, err := s.get(ctx, id)
	return rec.Theme, err
}

// importMessage is the body of a theme-import queue message.
type importMessage struct {
	ThemeID int64 `json:"theme_id"`
}

// Create adds an unpublished theme. With a src it is processing until the import
// job has extracted the zip; without one it starts with the starter files. A
// requested main or mobile role is applied by the job, once the files are in place
// (schema ThemeRole). The theme set, conditioned on the version read, is what
// concurrent creates race on, so the 20-theme limit holds.
func (s Service) Create(ctx context.Context, in *Input) (theme.Theme, error) {
	name, src, role, err := in.valid(true, s.Outbound)
	if err != nil {
		return theme.Theme{}, err
	}
	now := admin.At(s.Clock.Now())
	rec := theme.Record{Theme: theme.Theme{Name: name, Role: theme.RoleUnpublished, CreatedAt: now, UpdatedAt: now}, Src: src}
	if role == theme.RoleMain || role == theme.RoleMobile {
		rec.RequestedRole = role
	}
	rec.Processing = src != "" || rec.RequestedRole != ""
	rec.Previewable = !rec.Processing
	rec.ID = s.IDs.Next()
	// The starter files go first, under the new id, in their own
	// transaction: the one that races on the set stays two items small.
	// Until the theme commits nothing lists them; a create that fails
	// removes them.
	if src == "" {
		if err := s.Store.Transact(ctx, theme.StarterOps(rec.ID, now)...); err != nil {
			return theme.Theme{}, err
		}
	}
	err = records.Retry(ctx, func() (bool, error) {
		set, v, err := s.getSet(ctx)
		if err != nil {
			return false, err
		}
		if len(set.IDs) >= theme.MaxThemes {
			return false, admin.Invalid("base", MsgTooMany)
		}
		set.IDs = append(set.IDs, rec.ID)
		setOp := putSet(&set, v)
		err = s.Store.Transact(ctx, store.Put(rec.Item(1), store.IfAbsent, 0), setOp)
		return store.FailedOn(err, setOp.TargetKey()), err
	})
	if err != nil {
		if src == "" {
			if err := theme.DeleteAll(ctx, s.Store, rec.ID); err != nil {
				slog.WarnContext(ctx, "starter files of a refused theme left behind", "theme_id", rec.ID, "error", err.Error())
			}
		}
		return theme.Theme{}, err
	}
	if rec.Processing {
		if err := s.ThemeImports.Send(ctx, records.Encode(importMessage{rec.ID})); err != nil {
			slog.ErrorContext(ctx, "theme import not queued", "theme_id", rec.ID, "error", err.Error())
			return s.fail(ctx, rec.ID, "could not be queued for import; create the theme again")
		}
	}
	return rec.Theme, nil
}

// Update renames a theme or gives it a role. Publishing to main or mobile
// demotes the previous holder to unpublished in the same transaction as the
// theme and the theme set.
func (s Service) Update(ctx context.Context, id int64, in *Input) (theme.Theme, error) {
	in.Src = nil // write-only on create
	name, _, role, err := in.valid(false, s.Outbound)
	if err != nil {
		return theme.Theme{}, err
	}
	var out theme.Theme
	err = records.Retry(ctx, func() (bool, error) {
		rec, it, err := s.get(ctx, id)
		if err != nil {
			return false, err
		}
		if name != "" {
			rec.Name = name
		}
		ops := []store.Op{records.PutNext(it)}
		if role != "" && role != rec.Role {
			more, err := s.roleOps(ctx, &rec, role)
			if err != nil {
				return false, err
			}
			ops = append(ops, more...)
		}
		rec.UpdatedAt = admin.At(s.Clock.Now())
		ops[0] = store.Put(rec.Item(it.Version+1), store.IfVersion, it.Version)
		err = s.Store.Transact(ctx, ops...)
		out = rec.Theme
		return errors.Is(err, store.ErrConditionFailed), err
	})
	return out, err
}

// roleOps gives rec role: the set's write and the previous holder's demotion.
func (s Service) roleOps(ctx context.Context, rec *theme.Record, role string) ([]store.Op, error) {
	switch {
	case rec.Processing:
		return nil, admin.Invalid("role", MsgProcessing)
	case !rec.Previewable:
		return nil, admin.Invalid("role", MsgNotPreviewable)
	case rec.Role == theme.RoleMain:
		return nil, admin.Invalid("role", MsgMainUnpublish)
	}
	set, v, err := s.getSet(ctx)
	if err != nil {
		return nil, err
	}
	prev := set.Holder(role)
	set.SetHolder(role, rec.ID)
	ops := []store.Op{putSet(&set, v)}
	if prev != 0 && prev != rec.ID {
		old, it, err := s.get(ctx, prev)
		switch {
		case errors.Is(err, admin.NotFound):
		case err != nil:
			return nil, err
		default:
			old.Role, old.UpdatedAt = theme.RoleUnpublished, admin.At(s.Clock.Now())
			ops = append(ops, store.Put(old.Item(it.Version+1), store.IfVersion, it.Version))
		}
	}
	rec.Role = role
	return ops, nil
}

// Delete removes a theme and answers it; the main theme stays (422). Its
// assets are deleted after the theme's own transaction commits.
func (s Service) Delete(ctx context.Context, id int64) (theme.Theme, error) {
	var rec theme.Record
	err := records.Retry(ctx, func() (bool, error) {
		var it store.Item
		var err error
		rec, it, err = s.get(ctx, id)
		if err != nil {
			return false, err
		}
		set, v, err := s.getSet(ctx)
		if err != nil {
			return false, err
		}
		if rec.Role == theme.RoleMain || set.Main == id {
			return false, admin.Invalid("base", MsgMainDelete)
		}
		set.SetHolder(theme.RoleUnpublished, id)
		for i, x := range set.IDs {
			if x == id {
				set.IDs = append(set.IDs[:i:i], set.IDs[i+1:]...)
				break
			}
		}
		err = s.Store.Transact(ctx, store.Delete(it.Key(), store.IfVersion, it.Version), putSet(&set, v))
		return errors.Is(err, store.ErrConditionFailed), err
	})
	if err != nil {
		return theme.Theme{}, err
	}
	if err := theme.DeleteAll(ctx, s.Store, id); err != nil {
		slog.WarnContext(ctx, "assets of a deleted theme left behind", "theme_id", id, "error", err.Error())
	}
	return rec.Theme, nil
}

// fail ends a theme's processing with reason: not previewable, no role
// given, the reason on the record.
func (s Service) fail(ctx context.Context, id int64, reason string) (theme.Theme, error) {
	var out theme.Theme
	err := records.Update(ctx, s.Store, theme.Key(id), func(it *store.Item) ([]store.Op, error) {
		var rec theme.Record
		if err := records.Decode(it, &rec); err != nil {
			return nil, err
		}
		rec.Processing, rec.Previewable, rec.RequestedRole = false, false, ""
		rec.ImportError = &reason
		rec.UpdatedAt = admin.At(s.Clock.Now())
		out = rec.Theme
		return []store.Op{store.Put(rec.Item(it.Version+1), store.IfVersion, it.Version)}, nil
	})
	return out, err
}

// finish ends a good import: previewable, and the requested role applied.
func (s Service) finish(ctx context.Context, id int64) error {
	return records.Retry(ctx, func() (bool, error) {
		rec, it, err := s.get(ctx, id)
		if err != nil || !rec.Processing {
			return false, err
		}
		rec.Processing, rec.Previewable, rec.ImportError = false, true, nil
		role := rec.RequestedRole
		rec.RequestedRole = ""
		ops := []store.Op{{}}
		if role != "" {
			more, err := s.roleOps(ctx, &rec, role)
			if err != nil {
				return false, err
			}
			ops = append(ops, more...)
		}
		rec.UpdatedAt = admin.At(s.Clock.Now())
		ops[0] = store.Put(rec.Item(it.Version+1), store.IfVersion, it.Version)
		err = s.Store.Transact(ctx, ops...)
		return errors.Is(err, store.ErrConditionFailed), err
	})
}

func decodeMessage(body []byte) (int64, error) {
	var m importMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return 0, err
	}
	return m.ThemeID, nil
}
