package delivery

import (
	"context"

	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// Attempts returns the window of an app's webhook's logged attempts, newest
// first (ascending from sinceID when given), and where it lies: one Query
// of the webhook's attempt partition. Another app's webhook is
// admin.NotFound.
func Attempts(ctx context.Context, st store.Store, appID, webhookID, sinceID int64, w records.Window) ([]Attempt, records.Span, error) {
	if _, err := webhooks.Lookup(ctx, st, appID, webhookID); err != nil {
		return nil, records.Span{}, err
	}
	q := store.Query{PK: AttemptPartition(webhookID), Desc: true}
	if sinceID > 0 {
		q = store.Query{PK: AttemptPartition(webhookID), After: records.IDSK(sinceID)}
	}
	return records.Spanned[Attempt](records.ListWindow(ctx, st, q, nil, w))
}
