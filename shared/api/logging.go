package api

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// lambdaRequestIDs adds the Lambda request id of the invocation a record is
// logged in (aws_request_id) to records logged with its context: the API's
// access log names it (integrationRequestId), so a 5xx there leads to the
// function's lines of that request.
type lambdaRequestIDs struct{ slog.Handler }

func (h lambdaRequestIDs) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("aws_request_id", lc.AwsRequestID))
	}
	return h.Handler.Handle(ctx, r)
}

func (h lambdaRequestIDs) WithAttrs(as []slog.Attr) slog.Handler {
	return lambdaRequestIDs{h.Handler.WithAttrs(as)}
}

func (h lambdaRequestIDs) WithGroup(name string) slog.Handler {
	return lambdaRequestIDs{h.Handler.WithGroup(name)}
}
