package sqsqueue_test

import (
	"encoding/base64"
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
