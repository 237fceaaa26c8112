package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// A line logged within a Lambda invocation names its request id; others
// do not.
func TestLogLinesNameTheLambdaRequest(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(lambdaRequestIDs{slog.NewJSONHandler(&buf, nil)}).With("fn", "redirects")
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	log.ErrorContext(ctx, "request failed")
	log.Info("outside an invocation")
	dec := json.NewDecoder(&buf)
	for _, want := range []any{"req-1", nil} {
		var line map[string]any
		if err := dec.Decode(&line); err != nil {
			t.Fatal(err)
		}
		if line["aws_request_id"] != want || line["fn"] != "redirects" {
			t.Errorf("line %v: aws_request_id %v, want %v", line, line["aws_request_id"], want)
		}
	}
}
