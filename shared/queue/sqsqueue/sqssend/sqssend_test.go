package sqssend_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue/sqssend"
)

const queueURL = "https://sqs.us-east-1.amazonaws.com/1/q"

type call struct {
	target, contentType, auth string
	body                      struct {
		QueueUrl string
		Entries  []struct {
			Id, MessageBody   string
			MessageAttributes map[string]struct{ DataType, StringValue string }
		}
	}
}

// fakeSQS records each call and answers it with answer(n, call), n from 1.
func fakeSQS(t *testing.T, answer func(n int, c call) (int, string)) (*sqssend.Sender, func() []call) {
	var mu sync.Mutex
	var calls []call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := call{target: r.Header.Get("X-Amz-Target"), contentType: r.Header.Get("Content-Type"), auth: r.Header.Get("Authorization")}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &c.body); err != nil {
			t.Errorf("request body %s: %v", b, err)
		}
		mu.Lock()
		calls = append(calls, c)
		n := len(calls)
		mu.Unlock()
		status, body := answer(n, c)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", ""), HTTPClient: srv.Client()}
	s := sqssend.New(func() (aws.Config, error) { return cfg, nil }, srv.URL, queueURL)
	return s, func() []call { mu.Lock(); defer mu.Unlock(); return calls }
}

func ok(int, call) (int, string) { return 200, `{"Successful":[]}` }

// Bodies go in signed SendMessageBatch calls of at most ten; a body SQS
// cannot carry as text goes base64 encoded and marked.
func TestSendBatchesSignedCalls(t *testing.T) {
	s, calls := fakeSQS(t, ok)
	bodies := make([][]byte, 12)
	for i := range bodies {
		bodies[i] = []byte(`{"n":` + strings.Repeat("1", i+1) + `}`)
	}
	bodies[11] = []byte{0, 0xff}
	if err := s.Send(context.Background(), bodies...); err != nil {
		t.Fatal(err)
	}
	got := calls()
	if len(got) != 2 || len(got[0].body.Entries) != 10 || len(got[1].body.Entries) != 2 {
		t.Fatalf("calls %+v, want batches of 10 and 2", got)
	}
	for _, c := range got {
		if c.target != "AmazonSQS.SendMessageBatch" || c.contentType != "application/x-amz-json-1.0" || c.body.QueueUrl != queueURL ||
			!strings.HasPrefix(c.auth, "AWS4-HMAC-SHA256 Credential=AKID/") || !strings.Contains(c.auth, "/us-east-1/sqs/aws4_request") {
			t.Errorf("call %+v: not a signed SQS JSON SendMessageBatch of the queue", c)
		}
	}
	if e := got[0].body.Entries[0]; e.Id != "0" || e.MessageBody != `{"n":1}` || e.MessageAttributes != nil {
		t.Errorf("first entry %+v", e)
	}
	bin := got[1].body.Entries[1]
	if bin.Id != "1" || bin.MessageBody != "AP8=" || bin.MessageAttributes["body-encoding"].StringValue != "base64" {
		t.Errorf("binary entry %+v, want base64 AP8= marked body-encoding=base64", bin)
	}
}

// Entries SQS failed on its side are sent again, alone.
func TestSendRetriesFailedEntries(t *testing.T) {
	s, calls := fakeSQS(t, func(n int, c call) (int, string) {
		if n == 1 {
			return 200, `{"Failed":[{"Id":"1","SenderFault":false,"Code":"InternalError","Message":"try again"}]}`
		}
		return ok(n, c)
	})
	if err := s.Send(context.Background(), []byte("a"), []byte("b"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	got := calls()
	if len(got) != 2 || len(got[1].body.Entries) != 1 || got[1].body.Entries[0].MessageBody != "b" {
		t.Fatalf("calls %+v, want the failed entry b sent again alone", got)
	}
}

// What the same call later may get through is queue.ErrUnavailable (the
// HTTP layer's 503), after three attempts; what SQS refuses as wrong is
// not, and is not repeated.
func TestSendErrors(t *testing.T) {
	for _, c := range []struct {
		name        string
		status      int
		answer      string
		calls       int
		unavailable bool
		says        string
	}{
		{"server error", 500, `{"__type":"com.amazonaws.sqs#InternalError","message":"oops"}`, 3, true, "InternalError"},
		{"throttled", 400, `{"__type":"com.amazonaws.sqs#RequestThrottled","message":"slow down"}`, 3, true, "RequestThrottled"},
		{"no such queue", 400, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"gone"}`, 1, false, "QueueDoesNotExist"},
		{"not JSON", 403, `<html>`, 1, false, "Forbidden"},
		{"sender fault", 200, `{"Failed":[{"Id":"0","SenderFault":true,"Code":"InvalidMessageContents","Message":"bad"}]}`, 1, false, "InvalidMessageContents"},
		{"an answer that does not decode", 200, `{"Failed":`, 1, true, "SendMessageBatch answer"},
		{"failed three times", 200, `{"Failed":[{"Id":"0","SenderFault":false,"Code":"InternalError","Message":"x"}]}`, 3, true, "InternalError"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, calls := fakeSQS(t, func(int, call) (int, string) { return c.status, c.answer })
			err := s.Send(context.Background(), []byte("a"))
			if err == nil || errors.Is(err, queue.ErrUnavailable) != c.unavailable || !strings.Contains(err.Error(), c.says) {
				t.Errorf("Send: %v, want an error saying %s, unavailable %v", err, c.says, c.unavailable)
			}
			if n := len(calls()); n != c.calls {
				t.Errorf("%d calls, want %d", n, c.calls)
			}
		})
	}
}

// Calls go to the configuration's BaseEndpoint when New is given none,
// signed for the region the queue URL's host names; a queue URL that is
// not absolute, with no endpoint, fails each send as a mistake, not as
// unavailable.
func TestSendTarget(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		io.WriteString(w, `{}`)
	}))
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
		HTTPClient: srv.Client(), BaseEndpoint: aws.String(srv.URL)}
	load := func() (aws.Config, error) { return cfg, nil }
	if err := sqssend.New(load, "", "https://sqs.eu-west-1.amazonaws.com/1/q").Send(context.Background(), []byte("a")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(auth, "/eu-west-1/sqs/aws4_request") {
		t.Errorf("Authorization %q, want it signed for eu-west-1, the queue URL's region", auth)
	}
	cfg.BaseEndpoint = nil
	err := sqssend.New(load, "", "q").Send(context.Background(), []byte("a"))
	if err == nil || errors.Is(err, queue.ErrUnavailable) || !strings.Contains(err.Error(), "not an absolute") {
		t.Errorf("Send to a relative queue URL: %v, want a mistake named", err)
	}
}

func TestSendChecksBodies(t *testing.T) {
	s, calls := fakeSQS(t, ok)
	if err := s.Send(context.Background(), []byte("a"), nil); !errors.Is(err, queue.ErrBody) {
		t.Errorf("Send of an empty body: %v, want queue.ErrBody", err)
	}
	if err := s.Send(context.Background()); err != nil {
		t.Errorf("Send of nothing: %v", err)
	}
	if n := len(calls()); n != 0 {
		t.Errorf("%d calls after a refused body and a send of nothing, want none", n)
	}
}

func TestOpenOnlySends(t *testing.T) {
	q := sqssend.Open("http://127.0.0.1:1", queueURL)
	ctx := context.Background()
	if _, err := q.Receive(ctx, 1, 0); !errors.Is(err, sqssend.ErrSendOnly) {
		t.Errorf("Receive: %v", err)
	}
	if err := q.Ack(ctx, queue.Message{}); !errors.Is(err, sqssend.ErrSendOnly) {
		t.Errorf("Ack: %v", err)
	}
	if err := q.Retry(ctx, queue.Message{}, 0); !errors.Is(err, sqssend.ErrSendOnly) {
		t.Errorf("Retry: %v", err)
	}
}

func TestText(t *testing.T) {
	for b, want := range map[string]bool{"ok\t\n\r": true, "ü€😀": true, "\x00": false, "\xff": false, "\uFFFE": false, "\x1f": false} {
		if got := sqssend.Text([]byte(b)); got != want {
			t.Errorf("Text(%q) = %v, want %v", b, got, want)
		}
	}
}
