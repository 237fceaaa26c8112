package api

import (
	"context"
	"errors"
	"time"

	"github.com/storeadmin/adminapi/shared/articles"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/comments"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/pages"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/redirects"
	"github.com/storeadmin/adminapi/shared/scripttags"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// IndexVersion is the version of the index keys and entries this code
// writes. Raise it, and list the record type's Indexer in indexers, when a
// change adds or moves index keys or entries of records already stored.
const IndexVersion = 3 // 2: script tags, webhooks, comments', collections', articles' and metafields' entries; 3: pages' entries as Refs

// indexers rebuild every record type whose index keys or entries a
// version added. A function, not a variable: a variable's initializer would
// link every type's indexing into every Lambda function, which never
// reindexes (binary size is cold-start time).
func indexers() []records.Indexer {
	return []records.Indexer{pages.Indexer, events.Indexer, comments.Indexer, scripttags.Indexer, webhooks.Indexer,
		collection.Indexer, smartcollections.Indexer, articles.Indexer, metafields.Indexer}
}

// Repair rebuilds every record type's index keys, entries and counts from
// its records (records.Reindex over every indexer, whatever IndexVersion
// the store is at): the derived state a parked change left missing, or a
// redrive left stale, comes back. Idempotent; like Reindex an offline step,
// run with the API stopped and the change feed caught up (infra/import
// -repair; docs/operations.md, Parked changes).
func Repair(ctx context.Context, st store.Store) error {
	return records.Reindex(ctx, st, append(indexers(), redirects.Indexer)...)
}

// Redrive derives the changes the change feed parked (store.Derivers.Redrive),
// each once, in the order each record's changes committed, and reports how
// many (infra/import -redrive; docs/operations.md, Parked changes).
func Redrive(ctx context.Context, st store.Store, now time.Time) (int, error) {
	return Derivers().Redrive(ctx, st, now)
}

// indexVersionKey holds the IndexVersion a store's index was last brought
// up to (n_version).
var indexVersionKey = store.Key{PK: "schema", SK: "index"}

// Reindex brings a store written by an earlier version up to IndexVersion:
// it rebuilds every type's index keys and entries from its records
// (records.Reindex), then records the version, so that it runs once per
// version. It is an offline step (see records.Reindex): the local runner
// runs it before it serves; for DynamoDB, infra/import -reindex runs it
// while the API is stopped. It reports whether it rebuilt anything.
func Reindex(ctx context.Context, st store.Store) (bool, error) {
	it, err := st.Get(ctx, indexVersionKey)
	switch {
	case err == nil && it.Nums["version"] >= IndexVersion:
		return false, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return false, err
	}
	if err := records.Reindex(ctx, st, indexers()...); err != nil {
		return false, err
	}
	mark := store.Item{PK: indexVersionKey.PK, SK: indexVersionKey.SK, Version: 1, Nums: map[string]int64{"version": IndexVersion}}
	return true, st.Transact(ctx, store.Put(mark, store.Always, 0))
}
