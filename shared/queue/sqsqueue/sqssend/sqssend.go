// Package sqssend sends messages to an SQS queue without the SQS client:
// SendMessageBatch over SQS's JSON protocol, signed with SigV4 by the SDK's
// signer. The functions that only send (an API function enqueuing a theme
// import or a redelivery, the change feed fanning out notifications) link
// this instead of service/sqs, whose packages' init (about 0.45 ms) and
// size every cold start pays; sqsqueue sends through it too, so there is
// one way messages are written.
//
// Bodies SQS cannot carry as text are sent base64 encoded with the message
// attribute body-encoding=base64 (sqsevent reads it).
package sqssend

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/storeadmin/adminapi/shared/awsconfig"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue/sqsevent"
)

// SQS limits of SendMessageBatch.
const (
	maxBatch      = 10        // entries
	maxBatchBytes = 256 << 10 // payload: bodies and attributes
	attempts      = 3         // of a call SQS could not take, and of entries it failed on its side
	callTimeout   = 10 * time.Second
	maxAnswer     = 1 << 20
)

// Sender sends to one queue. It is safe for concurrent use.
type Sender struct {
	cfg      func() (aws.Config, error)
	endpoint string // the endpoint New was given, else the configuration's, else the queue URL's origin
	origin   string // the queue URL's scheme and host ("" when it is not an absolute http(s) URL)
	region   string // the region the queue URL's host names (sqs.<region>.amazonaws.com), else ""
	url      string
	signer   *v4.Signer
}

// New returns the sender to queueURL with the credentials, region and
// HTTP client of the configuration cfg returns on each send (sync.OnceValues
// of awsconfig.Load, so that a function that may send loads none in its
// cold start; a failed load fails every send). Calls go to endpoint
// (ElasticMQ), else the configuration's BaseEndpoint, else the queue URL's
// origin (the queue's regional endpoint), signed for the region that host
// names, else the configuration's.
func New(cfg func() (aws.Config, error), endpoint, queueURL string) *Sender {
	s := &Sender{cfg: cfg, endpoint: endpoint, url: queueURL, signer: v4.NewSigner()}
	if u, err := url.Parse(queueURL); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		s.origin = u.Scheme + "://" + u.Host
		if r, ok := strings.CutPrefix(u.Hostname(), "sqs."); ok {
			if r, _, ok = strings.Cut(r, ".amazonaws.com"); ok && !strings.Contains(r, ".") {
				s.region = r
			}
		}
	}
	return s
}

// target returns where calls go and the region they are signed for.
func (s *Sender) target(cfg aws.Config) (endpoint, region string, err error) {
	endpoint, region = s.endpoint, cfg.Region
	if endpoint == "" && cfg.BaseEndpoint != nil {
		endpoint = *cfg.BaseEndpoint
	}
	if endpoint == "" {
		if s.origin == "" {
			return "", "", fmt.Errorf("the queue URL %q is not an absolute http(s) URL", s.url)
		}
		endpoint = s.origin
	}
	if s.region != "" {
		region = s.region
	}
	return strings.TrimSuffix(endpoint, "/") + "/", region, nil
}

// Text says whether SQS accepts b as a message body as it is: UTF-8 of
// #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
func Text(b []byte) bool {
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

type attribute struct {
	DataType    string
	StringValue string
}

type entry struct {
	Id                string
	MessageBody       string
	MessageAttributes map[string]attribute `json:",omitempty"`
}

// newEntry returns the entry of body and the bytes it counts toward a
// batch's payload.
func newEntry(i int, body []byte) (entry, int) {
	if Text(body) {
		return entry{Id: strconv.Itoa(i), MessageBody: string(body)}, len(body)
	}
	s := base64.StdEncoding.EncodeToString(body)
	return entry{Id: strconv.Itoa(i), MessageBody: s, MessageAttributes: map[string]attribute{
			sqsevent.AttrEncoding: {DataType: "String", StringValue: sqsevent.EncBase64}}},
		len(s) + len(sqsevent.AttrEncoding) + len("String") + len(sqsevent.EncBase64)
}

// Send sends the bodies with SendMessageBatch, in batches of at most ten
// entries and 256 KiB. Entries SQS fails on its side are sent again (up to
// three times); on an error the batches before have been sent.
func (s *Sender) Send(ctx context.Context, bodies ...[]byte) error {
	for _, b := range bodies {
		if err := queue.CheckBody(b); err != nil {
			return err
		}
	}
	var batch []entry
	size := 0
	for _, b := range bodies {
		e, n := newEntry(len(batch), b)
		if len(batch) == maxBatch || size+n > maxBatchBytes {
			if err := s.sendBatch(ctx, batch); err != nil {
				return err
			}
			batch, size = nil, 0
			e.Id = "0"
		}
		batch = append(batch, e)
		size += n
	}
	return s.sendBatch(ctx, batch)
}

type failure struct {
	Id          string
	SenderFault bool
	Code        string
	Message     string
}

func (s *Sender) sendBatch(ctx context.Context, batch []entry) error {
	for attempt := 1; len(batch) > 0; attempt++ {
		var out struct{ Failed []failure }
		if err := s.call(ctx, "SendMessageBatch", map[string]any{"QueueUrl": s.url, "Entries": batch}, &out); err != nil {
			return fmt.Errorf("sqs: send: %w", err)
		}
		if len(out.Failed) == 0 {
			return nil
		}
		f := out.Failed[0]
		if f.SenderFault || attempt == attempts {
			err := fmt.Errorf("sqs: send: %d of %d messages failed, first: %s: %s", len(out.Failed), len(batch), f.Code, f.Message)
			if !f.SenderFault {
				err = fmt.Errorf("%w: %w", queue.ErrUnavailable, err)
			}
			return err
		}
		failed := make(map[string]bool, len(out.Failed))
		for _, f := range out.Failed {
			failed[f.Id] = true
		}
		var again []entry
		for _, e := range batch {
			if failed[e.Id] {
				again = append(again, e)
			}
		}
		batch = again
		if err := pause(ctx, attempt); err != nil {
			return err
		}
	}
	return nil
}

// Error is an error SQS answered: its HTTP status and error code
// (QueueDoesNotExist, RequestThrottled, ...).
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message) }

// transient says whether the same call later may succeed: a server error
// or throttling. Any other 4xx says the call itself was wrong.
func (e *Error) transient() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests || strings.Contains(e.Code, "Throttl")
}

// call makes one SQS JSON-protocol call, up to three times while SQS
// cannot take it (a transport error, a server error, throttling), and
// decodes its answer into out. An error the same call later might not meet
// wraps queue.ErrUnavailable. An answer of 200 is never asked for again,
// even one that does not decode: SQS took the call.
func (s *Sender) call(ctx context.Context, action string, in, out any) error {
	cfg, err := s.cfg()
	if err != nil {
		return err
	}
	endpoint, region, err := s.target(cfg)
	if err != nil {
		return err
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	for attempt := 1; ; attempt++ {
		answer, err := s.once(ctx, cfg, endpoint, region, action, body, hex.EncodeToString(sum[:]))
		var sqsErr *Error
		switch {
		case err == nil:
			if err := json.Unmarshal(answer, out); err != nil {
				return fmt.Errorf("%w: %s answer: %w", queue.ErrUnavailable, action, err)
			}
			return nil
		case ctx.Err() != nil, errors.As(err, &sqsErr) && !sqsErr.transient():
			return err
		case attempt == attempts:
			return fmt.Errorf("%w: %w", queue.ErrUnavailable, err)
		}
		if err := pause(ctx, attempt); err != nil {
			return err
		}
	}
}

// once makes one call and returns the body of its 200 answer.
func (s *Sender) once(ctx context.Context, cfg aws.Config, endpoint, region, action string, body []byte, hash string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if err := s.signer.SignHTTP(ctx, creds, req, hash, "sqs", region, time.Now()); err != nil {
		return nil, err
	}
	client := cfg.HTTPClient
	if client == nil {
		client = awshttp.NewBuildableClient()
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(answer, &e) // an answer that is not JSON keeps its status
		code := e.Type[strings.LastIndexByte(e.Type, '#')+1:]
		if code == "" {
			code = http.StatusText(resp.StatusCode)
		}
		return nil, &Error{Status: resp.StatusCode, Code: code, Message: e.Message}
	}
	return answer, nil
}

// pause waits before attempt+1: 100 ms, then 200 ms.
func pause(ctx context.Context, attempt int) error {
	t := time.NewTimer(time.Duration(attempt) * 100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ErrSendOnly is the error of a receive-side call on a send-only queue.
var ErrSendOnly = errors.New("sqs: this function's queue only sends (sqssend.Open); receive with sqsqueue")

// sendOnly is the queue.Queue of a function that only sends.
type sendOnly struct{ *Sender }

// Open returns a queue.Queue that sends to queueURL, loading the AWS
// configuration on its first send, and refuses Receive, Ack and Retry with
// ErrSendOnly: the api.SQS of the functions that only send.
func Open(endpoint, queueURL string) queue.Queue {
	cfg := sync.OnceValues(func() (aws.Config, error) { return awsconfig.Load(context.Background(), endpoint) })
	return sendOnly{New(cfg, endpoint, queueURL)}
}

func (sendOnly) Receive(context.Context, int, time.Duration) ([]queue.Message, error) {
	return nil, ErrSendOnly
}
func (sendOnly) Ack(context.Context, queue.Message) error                  { return ErrSendOnly }
func (sendOnly) Retry(context.Context, queue.Message, time.Duration) error { return ErrSendOnly }
