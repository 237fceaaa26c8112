// Package queue is the delivery queue of webhook dispatch: at-least-once,
// with a per-message delay for retries (exponential backoff).
//
// Two implementations: sqsqueue (Amazon SQS, and ElasticMQ in tests) and
// storequeue (items in the service's store, durable on the embedded store
// for the local runner). queuetest holds the suite both pass.
//
// Semantics common to both:
//   - Every sent message is received at least once until it is acked; a
//     consumer must tolerate duplicates (key side effects by Message.ID).
//   - A received message stays invisible for the queue's visibility timeout
//     (Visibility when the queue was created); if it is neither acked nor
//     retried by then it is redelivered with Attempt+1 and a new Receipt.
//   - Only the latest Receipt of a message acts. Ack or Retry with an
//     outdated one (the message was acked, or redelivered since) does
//     nothing and returns ErrStaleReceipt, which a consumer may ignore: the
//     message is delivered again or is gone. (Amazon SQS itself may instead
//     report success; ElasticMQ and storequeue return the error.)
//   - There is no ordering guarantee.
package queue

import (
	"context"
	"errors"
	"time"
)

// Message is one delivery of a message.
type Message struct {
	ID      string // stable across redeliveries of the same message
	Receipt string // handle for Ack/Retry of this receive
	Body    []byte
	Attempt int // 1 on the first receive, +1 on each redelivery
}

// Queue is implemented by sqsqueue and storequeue. Implementations are safe
// for concurrent use.
type Queue interface {
	// Send enqueues bodies (each non-empty, at most MaxBody bytes), visible
	// at once. It returns nil when all were sent; on error some may have
	// been, so a caller that sends again may create duplicates.
	Send(ctx context.Context, bodies ...[]byte) error
	// Receive returns up to max (at most MaxReceive) visible messages,
	// waiting up to wait for the first one (long poll; SQS rounds wait up
	// to whole seconds). It returns no messages and no error when none
	// arrived in time, and ctx's error when ctx ended first. Received
	// messages are invisible for the queue's visibility timeout.
	Receive(ctx context.Context, max int, wait time.Duration) ([]Message, error)
	// Ack deletes the message received as m (ErrStaleReceipt: see above).
	Ack(ctx context.Context, m Message) error
	// Retry makes the message received as m visible again after `after`
	// (0 = at once; SQS rounds up to whole seconds and at most MaxRetry).
	// It is then received with Attempt+1.
	Retry(ctx context.Context, m Message, after time.Duration) error
}

// Deferrer is a Queue that can hand a received message back without
// counting the receive as an attempt: a consumer that received more than it
// can start (its receiver is busy) defers the rest. The message is received
// again after `after` with the same Attempt. storequeue implements it;
// with Amazon SQS, whose receive count cannot be taken back, consumers use
// Retry instead.
type Deferrer interface {
	Defer(ctx context.Context, m Message, after time.Duration) error
}

// Acker is a Queue that deletes several received messages at once (one
// store transaction, or SQS DeleteMessageBatch calls of ten). The result
// has one error per message, nil for those acked (ErrStaleReceipt: see
// above).
type Acker interface {
	AckAll(ctx context.Context, ms []Message) []error
}

// DefaultVisibility is how long a received, unacked message stays invisible
// before it is redelivered, unless a queue is told otherwise (its
// UseVisibility, which tests call before using it).
const DefaultVisibility = 60 * time.Second

// Limits of the interface, those of SQS so that both implementations agree.
const (
	MaxReceive = 10                     // messages per Receive
	MaxWait    = 20 * time.Second       // longest Receive wait (SQS long polling); consumers wait this long, so an idle one makes one request per MaxWait
	MaxRetry   = 12 * time.Hour         // longest Retry delay (SQS ChangeMessageVisibility)
	MaxBody    = (256<<10 - 64) / 4 * 3 // body bytes (192 KiB less 48): a body SQS cannot carry as text goes base64 encoded with a 25-byte attribute, and both fit its 256 KiB
)

var (
	// ErrStaleReceipt says a receipt no longer names an in-flight delivery:
	// the message was acked, retried, or redelivered to someone else.
	ErrStaleReceipt = errors.New("queue: receipt is no longer valid")
	// ErrBody says a body is empty or larger than MaxBody.
	ErrBody = errors.New("queue: body is empty or too large")
)

// CheckBody returns ErrBody for a body Send must refuse.
func CheckBody(b []byte) error {
	if len(b) == 0 || len(b) > MaxBody {
		return ErrBody
	}
	return nil
}

// ErrUnavailable says the queue service could not take the call now
// (throttled, a server error, a timeout); the same call later may succeed.
// The HTTP layer answers it 503 with Retry-After. A Send that failed so may
// still have sent some bodies (see Send).
var ErrUnavailable = errors.New("queue: unavailable")
