package smartcollections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/store"
)

// holdDerived fails the change feed's derivations (the transactions that
// remove pending items) while held, as an unavailable store does.
type holdDerived struct {
	store.Store
	held atomic.Bool
}

func (h *holdDerived) Transact(ctx context.Context, ops ...store.Op) error {
	for i := range ops {
		if h.held.Load() && ops[i].Kind == store.OpDelete && ops[i].Key.PK == store.PendingPartition {
			return store.Unavailable("throttled", false, errors.New("held"))
		}
	}
	return h.Store.Transact(ctx, ops...)
}

// A smart collection's request commits the collection, its guard, rules
// and image only: its counts, filter entries, event and collections/*
// notification come from the change feed, as of the commit (the event's
// author and the payload's zone as they were then), for a create, an
// update and a delete.
func TestSmartCollectionsDerivedFromTheFeed(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		hold := &holdDerived{}
		e.Change(func(d *platform.Deps) {
			hold.Store = store.Innermost(d.Store)
			api.UseStore(d, hold, true)
		})
		count := func(query string) int {
			t.Helper()
			return int(e.Do("GET", base+"/count.json"+query, nil).Expect(t, 200).JSON(t)["count"].(float64))
		}
		listed := func(query string, id int64) bool {
			t.Helper()
			return slices.Contains(e.Do("GET", base+".json"+query, nil).Expect(t, 200).IDs(t, "smart_collections"), id)
		}
		all, published, unpublished := count(""), count("?published_status=published"), count("?published_status=unpublished")

		c := fedSmartCreate(t, e, hold)
		if count("") != all+1 || count("?published_status=published") != published+1 ||
			!listed("?published_status=published", id(c)) || !listed("?title=Fed+smart", id(c)) {
			t.Error("a published create is not counted or listed as published")
		}

		update(t, e, c, map[string]any{"published": false, "title": "Fed hidden"})
		if v := verbs(collectionEvents(t, e, id(c))); v != "create,unpublished" {
			t.Errorf("events %s, want create,unpublished", v)
		}
		if count("?published_status=published") != published || count("?published_status=unpublished") != unpublished+1 ||
			listed("?published_status=published", id(c)) || !listed("?published_status=unpublished", id(c)) ||
			listed("?title=Fed+smart", id(c)) || !listed("?title=Fed+hidden", id(c)) {
			t.Error("an unpublished, renamed collection is not counted and listed so")
		}

		e.Do("DELETE", path(c), nil).Expect(t, 200)
		if count("") != all || count("?published_status=unpublished") != unpublished || listed("", id(c)) || listed("?title=Fed+hidden", id(c)) {
			t.Error("a deleted collection is still counted or listed")
		}
		evs := collectionEvents(t, e, id(c))
		if verbs(evs) != "create,unpublished,destroy" || evs[2].Author != "Demo App" {
			t.Errorf("events %s (%+v): want a destroy by Demo App last", verbs(evs), evs)
		}
		if ts := topics(notifications(t, e, id(c))); ts != "collections/create,collections/update,collections/delete" {
			t.Errorf("notifications %s", ts)
		}
	}, group)
}

// fedSmartCreate creates a collection whose derivation waits while the
// app is renamed and the shop moves to another zone: its event and
// notification show them as they were at the commit.
func fedSmartCreate(t *testing.T, e *apitest.Env, hold *holdDerived) map[string]any {
	ctx := t.Context()
	rewrite := func(k store.Key, from, to string) {
		t.Helper()
		it, err := hold.Store.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		it.Data = bytes.Replace(it.Data, []byte(from), []byte(to), 1)
		if err := hold.Store.Transact(ctx, store.Put(it, store.Always, 0)); err != nil {
			t.Fatal(err)
		}
	}
	hold.held.Store(true)
	c := create(t, e, map[string]any{"title": "Fed smart", "rules": []any{rule("vendor", "equals", "fed-nobody")}})
	rewrite(auth.AppKey(1001), `"name":"Demo App"`, `"name":"Renamed App"`)
	rewrite(auth.ShopKey, `"iana_timezone":"America/New_York"`, `"iana_timezone":"Asia/Tokyo"`)
	hold.held.Store(false)
	if err := e.Deps.Feed.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	rewrite(auth.AppKey(1001), `"name":"Renamed App"`, `"name":"Demo App"`)
	rewrite(auth.ShopKey, `"iana_timezone":"Asia/Tokyo"`, `"iana_timezone":"America/New_York"`)
	if evs := collectionEvents(t, e, id(c)); len(evs) != 1 || evs[0].Verb != "create" || evs[0].Author != "Demo App" {
		t.Fatalf("the create's events %+v: want one by Demo App, the app's name when it committed", evs)
	}
	ns := notifications(t, e, id(c))
	if len(ns) != 1 || ns[0].Topic != "collections/create" {
		t.Fatalf("notifications %s: want collections/create", topics(ns))
	}
	var p struct {
		UpdatedAt string `json:"updated_at"`
		Rules     []any  `json:"rules"`
	}
	if err := json.Unmarshal(ns[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p.UpdatedAt, "-05:00") && !strings.HasSuffix(p.UpdatedAt, "-04:00") || len(p.Rules) != 1 {
		t.Errorf("payload updated_at %s, rules %v: want New York's zone, the shop's when it committed, and the rule", p.UpdatedAt, p.Rules)
	}
	return c
}
