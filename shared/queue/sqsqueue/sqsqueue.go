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
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/storeadmin/adminapi/shared/awsconfig"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue/sqsevent"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue/sqssend"
)

// SQS limits.
const (
	maxBatch      = 10           // entries of DeleteMessageBatch
	maxWait       = 20           // WaitTimeSeconds
	maxVisibility = 12 * 60 * 60 // seconds
)

const attrEncoding = sqsevent.AttrEncoding // the message attribute marking a base64-encoded body

// Queue is a queue.Queue on one SQS queue.
type Queue struct {
	client func() (*sqs.Client, error)
	*sqssend.Sender
	url        string
	visibility int32 // seconds
}

var (
	_ queue.Queue = (*Queue)(nil)
	_ queue.Acker = (*Queue)(nil)
)

// New returns the queue at queueURL, with the visibility timeout
// queue.DefaultVisibility for its receives. The client is created once
// (NewClient) and shared; sends go through sqssend with its configuration.
func New(client *sqs.Client, queueURL string) *Queue {
	o := client.Options()
	cfg := aws.Config{Credentials: o.Credentials, Region: o.Region, HTTPClient: o.HTTPClient}
	return &Queue{client: func() (*sqs.Client, error) { return client, nil },
		Sender: sqssend.New(func() (aws.Config, error) { return cfg, nil }, aws.ToString(o.BaseEndpoint), queueURL),
		url:    queueURL, visibility: seconds(queue.DefaultVisibility, maxVisibility)}
}

// Open is New with the configuration awsconfig.Load loads (for
// endpoint) on the queue's first call, so that a function that may send
// loads no AWS configuration in its cold start; a failed load fails every
// call. It is the api.SQS of the functions that receive from a queue.
func Open(endpoint, queueURL string) queue.Queue {
	cfg := sync.OnceValues(func() (aws.Config, error) { return awsconfig.Load(context.Background(), endpoint) })
	client := sync.OnceValues(func() (*sqs.Client, error) {
		c, err := cfg()
		if err != nil {
			return nil, err
		}
		return clientOf(c, endpoint), nil
	})
	return &Queue{client: client, Sender: sqssend.New(cfg, endpoint, queueURL), url: queueURL,
		visibility: seconds(queue.DefaultVisibility, maxVisibility)}
}

// UseVisibility sets the receives' visibility timeout (rounded up to whole
// seconds; tests shorten it); call it before the queue is used.
func (q *Queue) UseVisibility(d time.Duration) { q.visibility = seconds(d, maxVisibility) }

// NewClient loads the AWS configuration (awsconfig.Load: with a
// non-empty endpoint, ElasticMQ, dummy credentials unless the environment
// has some) and makes the SQS client. Create it once per process and reuse
// it.
func NewClient(ctx context.Context, endpoint string) (*sqs.Client, error) {
	cfg, err := awsconfig.Load(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return clientOf(cfg, endpoint), nil
}

func clientOf(cfg aws.Config, endpoint string) *sqs.Client {
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
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
