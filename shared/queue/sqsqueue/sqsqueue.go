// Package sqsqueue implements queue.Queue on Amazon SQS (a standard queue),
// and on ElasticMQ in tests.
//
// Message.ID is the SQS MessageId, Receipt the receipt handle and Attempt
// the ApproximateReceiveCount system attribute. SQS carries bodies as text
// of a restricted character set (valid UTF-8 without most control
// characters and without U+FFFE/U+FFFF); any other body is sent base64
// encoded with the message attribute body-encoding=base64, which Receive
// and FromLambda undo.
package sqsqueue

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue/sqsevent"
)

// SQS limits.
const (
	maxBatch      = 10           // entries of SendMessageBatch
	maxBatchBytes = 256 << 10    // payload of one SendMessageBatch (bodies and attributes)
	maxWait       = 20           // WaitTimeSeconds
	maxVisibility = 12 * 60 * 60 // seconds
)

// The message attribute marking a base64-encoded body (sqsevent reads it).
const (
	attrEncoding = sqsevent.AttrEncoding
	encBase64    = sqsevent.EncBase64
)

// Queue is a queue.Queue on one SQS queue.
type Queue struct {
	client     func() (*sqs.Client, error)
	url        string
	visibility int32 // seconds
}

var (
	_ queue.Queue = (*Queue)(nil)
	_ queue.Acker = (*Queue)(nil)
)

// New returns the queue at queueURL, with the visibility timeout
// queue.DefaultVisibility for its receives. The client is created once
// (NewClient) and shared.
func New(client *sqs.Client, queueURL string) *Queue {
	return &Queue{client: func() (*sqs.Client, error) { return client, nil }, url: queueURL,
		visibility: seconds(queue.DefaultVisibility, maxVisibility)}
}

// Open is New with the client NewClient makes (for endpoint) on the
// queue's first call, so that a function that may send loads no AWS
// configuration in its cold start; a failed load fails every call. It is
// the api.SQS of the functions with a queue.
func Open(endpoint, queueURL string) queue.Queue {
	client := sync.OnceValues(func() (*sqs.Client, error) { return NewClient(context.Background(), endpoint) })
	return &Queue{client: client, url: queueURL, visibility: seconds(queue.DefaultVisibility, maxVisibility)}
}

// UseVisibility sets the receives' visibility timeout (rounded up to whole
// seconds; tests shorten it); call it before the queue is used.
func (q *Queue) UseVisibility(d time.Duration) { q.visibility = seconds(d, maxVisibility) }

// NewClient loads the default AWS configuration. With a non-empty endpoint
// (ElasticMQ) it sets BaseEndpoint and, unless credentials come from the
// environment, uses dummy static credentials in us-east-1. Create the
// client once per process and reuse it.
func NewClient(ctx context.Context, endpoint string) (*sqs.Client, error) {
	var opts []func(*config.LoadOptions) error
	if endpoint != "" && os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		opts = append(opts,
			config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")),
			config.WithRegion("us-east-1"))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("sqsqueue: load config: %w", err)
	}
	if endpoint != "" && cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

// CreateQueue creates a standard queue named name (or finds it, if it
// exists with default attributes) and returns its URL. For emulators and
// tests: in AWS the queue comes from template.yaml.
func CreateQueue(ctx context.Context, client *sqs.Client, name string) (string, error) {
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		return "", fmt.Errorf("sqsqueue: create queue %s: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

// seconds rounds d up to whole seconds within [0, limit].
func seconds(d time.Duration, limit int32) int32 {
	if d <= 0 {
		return 0
	}
	s := (d + time.Second - 1) / time.Second
	return int32(min(s, time.Duration(limit)))
}

// sqsText says whether SQS accepts b as a message body as it is: UTF-8 of
// #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
func sqsText(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			return false
		case r == 0x9 || r == 0xA || r == 0xD:
		case r < 0x20, r > 0xD7FF && r < 0xE000, r == 0xFFFE, r == 0xFFFF:
			return false
		}
		b = b[n:]
	}
	return true
}

func entry(i int, body []byte) (types.SendMessageBatchRequestEntry, int) {
	e := types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i))}
	if sqsText(body) {
		e.MessageBody = aws.String(string(body))
		return e, len(body)
	}
	s := base64.StdEncoding.EncodeToString(body)
	e.MessageBody = &s
	e.MessageAttributes = map[string]types.MessageAttributeValue{
		attrEncoding: {DataType: aws.String("String"), StringValue: aws.String(encBase64)},
	}
	return e, len(s) + len(attrEncoding) + len("String") + len(encBase64)
}

// Send sends the bodies with SendMessageBatch, in batches of at most ten
// entries and 256 KiB. Entries SQS fails on its side are sent again (up to
// three times); on an error the batches before have been sent.
func (q *Queue) Send(ctx context.Context, bodies ...[]byte) error {
	for _, b := range bodies {
		if err := queue.CheckBody(b); err != nil {
			return err
		}
	}
	var batch []types.SendMessageBatchRequestEntry
	size := 0
	for _, b := range bodies {
		e, n := entry(len(batch), b)
		if len(batch) == maxBatch || size+n > maxBatchBytes {
			if err := q.sendBatch(ctx, batch); err != nil {
				return err
			}
			batch, size = nil, 0
			e.Id = aws.String("0")
		}
		batch = append(batch, e)
		size += n
	}
	return q.sendBatch(ctx, batch)
}

func (q *Queue) sendBatch(ctx context.Context, batch []types.SendMessageBatchRequestEntry) error {
	c, err := q.client()
	if err != nil {
		return fmt.Errorf("sqsqueue: send: %w", err)
	}
	for attempt := 1; len(batch) > 0; attempt++ {
		out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: batch})
		if err != nil {
			return fmt.Errorf("sqsqueue: send: %w", unavailable(err))
		}
		if len(out.Failed) == 0 {
			return nil
		}
		f := out.Failed[0]
		if f.SenderFault || attempt == 3 {
			err := fmt.Errorf("sqsqueue: send: %d of %d messages failed, first: %s: %s",
				len(out.Failed), len(batch), aws.ToString(f.Code), aws.ToString(f.Message))
			if !f.SenderFault {
				err = fmt.Errorf("%w: %w", queue.ErrUnavailable, err)
			}
			return err
		}
		failed := make(map[string]bool, len(out.Failed))
		for _, f := range out.Failed {
			failed[aws.ToString(f.Id)] = true
		}
		var again []types.SendMessageBatchRequestEntry
		for _, e := range batch {
			if failed[aws.ToString(e.Id)] {
				again = append(again, e)
			}
		}
		batch = again
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
		}
	}
	return nil
}

// Receive long-polls with ReceiveMessage: wait is rounded up to whole
// seconds and, past SQS's 20 s, polled again until it has elapsed.
func (q *Queue) Receive(ctx context.Context, max int, wait time.Duration) ([]queue.Message, error) {
	if max < 1 {
		return nil, fmt.Errorf("sqsqueue: receive max %d", max)
	}
	c, err := q.client()
	if err != nil {
		return nil, fmt.Errorf("sqsqueue: receive: %w", err)
	}
	deadline := time.Now().Add(wait)
	for {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    &q.url,
			MaxNumberOfMessages:         int32(min(max, queue.MaxReceive)),
			VisibilityTimeout:           q.visibility,
			WaitTimeSeconds:             seconds(time.Until(deadline), maxWait),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
			MessageAttributeNames:       []string{attrEncoding},
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("sqsqueue: receive: %w", err)
		}
		if len(out.Messages) > 0 || time.Until(deadline) < time.Second {
			msgs := make([]queue.Message, len(out.Messages))
			for i := range out.Messages {
				m := &out.Messages[i]
				var enc string
				if a, ok := m.MessageAttributes[attrEncoding]; ok {
					enc = aws.ToString(a.StringValue)
				}
				msgs[i] = sqsevent.Message(aws.ToString(m.MessageId), aws.ToString(m.ReceiptHandle),
					aws.ToString(m.Body), enc, m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
			}
			return msgs, nil
		}
	}
}

// FromLambda is sqsevent.FromLambda.
func FromLambda(r events.SQSMessage) queue.Message { return sqsevent.FromLambda(r) }

// Ack deletes the message with DeleteMessage.
func (q *Queue) Ack(ctx context.Context, m queue.Message) error {
	c, err := q.client()
	if err != nil {
		return fmt.Errorf("sqsqueue: ack %s: %w", m.ID, err)
	}
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.url, ReceiptHandle: &m.Receipt})
	if err := stale(err); err != nil {
		return fmt.Errorf("sqsqueue: ack %s: %w", m.ID, err)
	}
	if err != nil {
		return fmt.Errorf("sqsqueue: ack %s: %w", m.ID, err)
	}
	return nil
}

// AckAll deletes the messages with DeleteMessageBatch, ten per request.
func (q *Queue) AckAll(ctx context.Context, ms []queue.Message) []error {
	errs := make([]error, len(ms))
	c, err := q.client()
	if err != nil {
		for i := range ms {
			errs[i] = fmt.Errorf("sqsqueue: ack %s: %w", ms[i].ID, err)
		}
		return errs
	}
	for start := 0; start < len(ms); start += maxBatch {
		batch := ms[start:min(start+maxBatch, len(ms))]
		entries := make([]types.DeleteMessageBatchRequestEntry, len(batch))
		for i := range batch {
			entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(start + i)), ReceiptHandle: aws.String(batch[i].Receipt)}
		}
		out, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &q.url, Entries: entries})
		if err != nil {
			for i := range batch {
				errs[start+i] = fmt.Errorf("sqsqueue: ack %s: %w", batch[i].ID, err)
			}
			continue
		}
		for _, f := range out.Failed {
			i, err := strconv.Atoi(aws.ToString(f.Id))
			if err != nil || i < start || i >= start+len(batch) {
				continue
			}
			cause := fmt.Errorf("%s: %s", aws.ToString(f.Code), aws.ToString(f.Message))
			if c := aws.ToString(f.Code); c == "ReceiptHandleIsInvalid" || c == "MessageNotInflight" {
				cause = fmt.Errorf("%w (%v)", queue.ErrStaleReceipt, cause)
			}
			errs[i] = fmt.Errorf("sqsqueue: ack %s: %w", ms[i].ID, cause)
		}
	}
	return errs
}

// Retry sets the message's visibility timeout to after, rounded up to
// whole seconds (ChangeMessageVisibility; SQS counts its 12 h maximum from
// the first receive and rejects a change beyond it).
func (q *Queue) Retry(ctx context.Context, m queue.Message, after time.Duration) error {
	c, err := q.client()
	if err != nil {
		return fmt.Errorf("sqsqueue: retry %s: %w", m.ID, err)
	}
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          &q.url,
		ReceiptHandle:     &m.Receipt,
		VisibilityTimeout: seconds(after, maxVisibility),
	})
	if err := stale(err); err != nil {
		return fmt.Errorf("sqsqueue: retry %s: %w", m.ID, err)
	}
	if err != nil {
		return fmt.Errorf("sqsqueue: retry %s: %w", m.ID, err)
	}
	return nil
}

// stale returns ErrStaleReceipt, annotated with err, when err says the
// receipt handle is outdated (ElasticMQ: ReceiptHandleIsInvalid for handles
// of deleted or redelivered messages; SQS: MessageNotInflight), else nil.
func stale(err error) error {
	var notInFlight *types.MessageNotInflight
	var invalid *types.ReceiptHandleIsInvalid
	if errors.As(err, &notInFlight) || errors.As(err, &invalid) {
		return fmt.Errorf("%w (%v)", queue.ErrStaleReceipt, err)
	}
	return nil
}

// unavailable marks err as queue.ErrUnavailable unless SQS said the
// request itself was wrong (a 4xx other than throttling): throttling,
// server errors and timeouts pass.
func unavailable(err error) error {
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() < 500 && resp.HTTPStatusCode() != 429 {
		var api smithy.APIError
		if !errors.As(err, &api) || !strings.Contains(api.ErrorCode(), "Throttl") && api.ErrorCode() != "RequestThrottled" {
			return err
		}
	}
	return fmt.Errorf("%w: %w", queue.ErrUnavailable, err)
}
