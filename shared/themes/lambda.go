package themes

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/storeadmin/adminapi/shared/platform"
)

// SQSHandler is the theme-import function: it runs the job of each message
// of a batch (one at a time: an import holds a zip in memory) and reports
// those to retry as batch item failures.
func SQSHandler(d *platform.Deps) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	s := NewService(d)
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, r := range ev.Records {
			attempt, _ := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
			if err := s.HandleMessage(ctx, []byte(r.Body), max(attempt, 1)); err != nil {
				slog.ErrorContext(ctx, "theme import attempt failed", "message", r.MessageId, "error", err.Error())
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			}
		}
		return resp, nil
	}
}
