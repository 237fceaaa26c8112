package sqsqueue_test

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/queue/queuetest"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue/sqstest"
)

func TestElasticMQ(t *testing.T) {
	sqstest.Endpoint(t)
	queuetest.Run(t, func(t *testing.T) queuetest.Visible { return sqstest.Open(t) })
}

func TestFromLambda(t *testing.T) {
	enc := "base64"
	for _, c := range []struct {
		r    events.SQSMessage
		want queue.Message
	}{{
		events.SQSMessage{MessageId: "id1", ReceiptHandle: "rh1", Body: `{"a":"ü"}`,
			Attributes: map[string]string{"ApproximateReceiveCount": "3"}},
		queue.Message{ID: "id1", Receipt: "rh1", Body: []byte(`{"a":"ü"}`), Attempt: 3},
	}, {
		events.SQSMessage{MessageId: "id2", ReceiptHandle: "rh2", Body: base64.StdEncoding.EncodeToString([]byte{0, 0xff}),
			Attributes:        map[string]string{"ApproximateReceiveCount": "1"},
			MessageAttributes: map[string]events.SQSMessageAttribute{"body-encoding": {StringValue: &enc, DataType: "String"}}},
		queue.Message{ID: "id2", Receipt: "rh2", Body: []byte{0, 0xff}, Attempt: 1},
	}, {
		events.SQSMessage{MessageId: "id3", ReceiptHandle: "rh3", Body: "x"},
		queue.Message{ID: "id3", Receipt: "rh3", Body: []byte("x"), Attempt: 1},
	}} {
		got := sqsqueue.FromLambda(c.r)
		if got.ID != c.want.ID || got.Receipt != c.want.Receipt || string(got.Body) != string(c.want.Body) || got.Attempt != c.want.Attempt {
			t.Errorf("FromLambda(%+v) = %+v, want %+v", c.r, got, c.want)
		}
	}
}

// Open loads the AWS configuration on the queue's first call, not when it
// is opened (a cold start), and a failed load fails each call.
func TestOpenLoadsConfigOnFirstCall(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "config"))
	t.Setenv("AWS_PROFILE", "")
	q := sqsqueue.Open("", "https://sqs.us-east-1.amazonaws.com/1/q") // a load now would succeed
	// The profile the first call's load meets: only a load after Open
	// fails on it.
	t.Setenv("AWS_PROFILE", "no-such-profile")
	ctx := context.Background()
	if err := q.Send(ctx, []byte("x")); err == nil || !strings.Contains(err.Error(), "no-such-profile") {
		t.Errorf("Send: %v, want the failed load", err)
	}
	if _, err := q.Receive(ctx, 1, 0); err == nil {
		t.Error("Receive: no error after a failed load")
	}
	m := queue.Message{ID: "1", Receipt: "r"}
	if err := q.Ack(ctx, m); err == nil {
		t.Error("Ack: no error after a failed load")
	}
	if err := q.Retry(ctx, m, 0); err == nil {
		t.Error("Retry: no error after a failed load")
	}
	if errs := q.(queue.Acker).AckAll(ctx, []queue.Message{m, m}); errs[0] == nil || errs[1] == nil {
		t.Errorf("AckAll: %v, want an error for each", errs)
	}
}
