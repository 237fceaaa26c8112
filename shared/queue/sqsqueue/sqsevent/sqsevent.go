// Package sqsevent reads SQS messages as sqsqueue sends them, without the
// SQS client: the Lambda consumers of an SQS event source need only this,
// and a function that links no SQS client starts faster (its packages' init
// and size are paid on every cold start).
package sqsevent

import (
	"encoding/base64"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/storeadmin/adminapi/shared/queue"
)

// The message attribute marking a base64-encoded body.
const (
	AttrEncoding = "body-encoding"
	EncBase64    = "base64"
)

// Message is the queue.Message of an SQS message: its id, receipt handle,
// body, body-encoding attribute and ApproximateReceiveCount.
func Message(id, receipt, body, enc, count string) queue.Message {
	m := queue.Message{ID: id, Receipt: receipt, Body: []byte(body)}
	if enc == EncBase64 {
		if b, err := base64.StdEncoding.DecodeString(body); err == nil {
			m.Body = b
		}
	}
	m.Attempt, _ = strconv.Atoi(count)
	if m.Attempt < 1 {
		m.Attempt = 1
	}
	return m
}

// FromLambda is the message of an SQS event record, for a Lambda consumer
// that acks and retries through a Queue on the same queue. Note that the
// event source mapping deletes every message of a batch the function
// reports as processed: a message it retries must be reported in
// batchItemFailures (ReportBatchItemFailures), or its Retry is undone.
func FromLambda(r events.SQSMessage) queue.Message {
	var enc string
	if a, ok := r.MessageAttributes[AttrEncoding]; ok && a.StringValue != nil {
		enc = *a.StringValue
	}
	return Message(r.MessageId, r.ReceiptHandle, r.Body, enc, r.Attributes["ApproximateReceiveCount"])
}
