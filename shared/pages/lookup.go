package pages

import (
	"context"

	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Lookup reads a page by id; admin.NotFound when there is none. The
// metafields endpoints check their owner through it (wired in shared/api).
func Lookup(ctx context.Context, st store.Store, id int64) (*Page, error) {
	var p Page
	if _, err := records.Get(ctx, st, key(id), &p); err != nil {
		return nil, err
	}
	return &p, nil
}
