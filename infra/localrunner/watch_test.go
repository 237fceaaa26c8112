package main

import (
	"net/http"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/store"
)

// A notification the change feed derives (a custom collection's create)
// wakes the outbox pump before the request answers, as one committed with
// its change does: the watch sees the feed's writes.
func TestDerivedNotificationWakesThePump(t *testing.T) {
	e := apitest.New(t, apitest.OpenEmbedded(t), api.Collections)
	var w *store.Watched
	e.Change(func(d *platform.Deps) { w = watchCommits(d, nil) })
	e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": "Woken"}}).Expect(t, http.StatusCreated)
	select {
	case <-w.Woken(outbox.Partition):
	default:
		t.Fatal("the derived notification's outbox marker woke no pump")
	}
}
