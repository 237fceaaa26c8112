package delivery

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// Delivery limits.
const (
	MaxAttempts     = 19
	RetryWindow     = 48 * time.Hour
	DeliveryTimeout = 5 * time.Second
	maxResponse     = 64 << 10
	logTTL          = 7 * 24 * time.Hour
)

// DefaultRetryBase is WEBHOOK_RETRY_BASE_DELAY's default.
const DefaultRetryBase = 10 * time.Second

// Backoff is the wait after failed attempt n (1-based): base doubling each
// time, capped so that MaxAttempts attempts span about RetryWindow.
func Backoff(base time.Duration, attempt int) time.Duration {
	c := backoffCap(base)
	d := base << min(attempt-1, 40)
	if d <= 0 || d > c {
		return c
	}
	return d
}

// backoffCap finds the cap c with sum of min(base*2^i, c) over the
// MaxAttempts-1 waits equal to RetryWindow (at most SQS's 12 h visibility).
func backoffCap(base time.Duration) time.Duration {
	total := func(c time.Duration) time.Duration {
		var sum time.Duration
		for i := range MaxAttempts - 1 {
			d := base << min(i, 40)
			if d <= 0 || d > c {
				d = c
			}
			sum += d
		}
		return sum
	}
	lo, hi := base, 12*time.Hour
	for hi-lo > time.Second {
		mid := lo + (hi-lo)/2
		if total(mid) < RetryWindow {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// Outcome says what to do with a message after an attempt.
type Outcome struct {
	Retry bool
	After time.Duration
}

// Dispatcher delivers queued messages. Create it once per process.
type Dispatcher struct {
	Store  store.Store
	Client *outbound.Client
	IDs    *ids.Generator
	// Clock dates attempts and expires logs and dead letters, and tells when
	// a failing webhook's RetryWindow is over.
	Clock     clock.Clock
	RetryBase time.Duration
	// MaxDelay, when set, caps the backoff below its computed cap (tests
	// walk through every attempt with it).
	MaxDelay time.Duration
	// Metrics counts the attempts.
	Metrics *metrics.Recorder

	mu   sync.Mutex
	shop *admin.Shop
}

// Attempt is one logged delivery attempt, as GET .../deliveries.json lists it.
type Attempt struct {
	ID             int64      `json:"id"`
	DeliveryID     string     `json:"delivery_id"`
	Topic          string     `json:"topic"`
	Attempt        int        `json:"attempt"`
	ResponseStatus *int       `json:"response_status"`
	DurationMS     int64      `json:"duration_ms"`
	Error          *string    `json:"error"`
	DeadLettered   bool       `json:"dead_lettered"`
	CreatedAt      admin.Time `json:"created_at"`
}

// AttemptPartition holds a webhook's attempt log.
func AttemptPartition(webhookID int64) string { return "delivery#" + strconv.FormatInt(webhookID, 10) }

// DeadLetterKey holds a dead-lettered message for redelivery.
func DeadLetterKey(webhookID int64, deliveryID string) store.Key {
	return store.Key{PK: "deadletter#" + strconv.FormatInt(webhookID, 10), SK: deliveryID}
}

func healthKey(webhookID int64) store.Key {
	return store.Key{PK: "webhookhealth", SK: records.IDSK(webhookID)}
}

type health struct {
	FirstFailure admin.Time `json:"first_failure_at"`
}

// Deliver makes one attempt at a message. An error means the attempt could
// not be made (the store failed): leave the message to come back. b, when
// not nil, shares reads with the other messages of its batch.
func (d *Dispatcher) Deliver(ctx context.Context, b *Batch, qm queue.Message) (Outcome, error) {
	p, err := d.Prepare(ctx, b, qm)
	if p == nil || err != nil {
		return Outcome{}, err
	}
	return d.Record(ctx, p, d.Send(ctx, p))
}

// Prepared is a message ready to send: its webhook, notification and the
// signed request.
type Prepared struct {
	qm       queue.Message
	m        Message
	wh       *webhooks.Webhook
	topic    string
	body     []byte
	headers  [12][2]string
	receiver string
}

// Receiver names the HTTP server the delivery goes to (scheme://host:port
// as written in the address): deliveries to one receiver share its limits.
func (p *Prepared) Receiver() string { return p.receiver }

// Prepare reads what an attempt at qm needs and renders its request. It
// returns nil (and no error) when there is nothing to deliver: the message
// is unreadable, its webhook, notification or app is gone, or the app does
// not hold the read scope of the topic (webhooks.TopicScope) now; the
// message is then done. An error means the store failed: leave the message to
// come back. b, when not nil, shares reads with the other messages of its
// batch.
func (d *Dispatcher) Prepare(ctx context.Context, b *Batch, qm queue.Message) (*Prepared, error) {
	p := &Prepared{qm: qm}
	if err := json.Unmarshal(qm.Body, &p.m); err != nil {
		slog.Error("dropping an unreadable delivery message", "error", err.Error())
		return nil, nil
	}
	m := &p.m
	wh, err := webhooks.Lookup(ctx, d.Store, m.AppID, m.WebhookID)
	switch {
	case admin.ErrorCode(err) == admin.ENOTFOUND && m.Snapshot != nil:
		wh = m.Snapshot
	case admin.ErrorCode(err) == admin.ENOTFOUND:
		return nil, nil // the webhook was deleted: nothing to deliver
	case err != nil:
		return nil, err
	}
	p.wh = wh
	n, err := d.notification(ctx, b, m.NotificationID)
	if err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return nil, nil
		}
		return nil, err
	}
	app, err := d.app(ctx, b, m.AppID)
	if err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return nil, nil
		}
		return nil, err
	}
	if webhooks.Readable(app, n.Topic) != nil {
		// The app may not read what the topic carries (now: a webhook
		// made before topics needed scopes, or a scope taken away since):
		// nothing to deliver. The app record is read anyway, to sign.
		return nil, nil
	}
	shop, err := d.shopRecord(ctx)
	if err != nil {
		return nil, err
	}
	body, contentType, err := d.body(ctx, n, wh)
	if err != nil {
		return nil, err
	}
	p.topic, p.body = n.Topic, body
	p.headers = deliveryHeaders(contentType, n.Topic, shop.Domain, m.DeliveryID, n.TriggeredAt.Time, app.SharedSecret, body)
	p.receiver = wh.Address
	if u, err := url.Parse(wh.Address); err == nil {
		p.receiver = u.Scheme + "://" + u.Host
	}
	return p, nil
}

// Sent is the result of sending a prepared delivery.
type Sent struct {
	status   int
	err      error
	start    time.Time
	duration time.Duration
}

// Send makes the HTTP request of p, within DeliveryTimeout.
func (d *Dispatcher) Send(ctx context.Context, p *Prepared) Sent {
	r := Sent{start: time.Now()}
	r.status, r.err = d.send(ctx, p.wh.Address, p.body, &p.headers)
	r.duration = time.Since(r.start)
	return r
}

// Record logs the attempt p made (r) and says what to do with its message:
// done, or to retry after a backoff; after MaxAttempts a failed delivery
// is dead-lettered. An error means the outcome could not be recorded (the
// store failed, or ctx ended, which is not the receiver's fault): leave
// the message to come back.
func (d *Dispatcher) Record(ctx context.Context, p *Prepared, r Sent) (Outcome, error) {
	if ctx.Err() != nil { // shutting down: not the receiver's fault; the message comes back
		return Outcome{}, ctx.Err()
	}
	qm, m, wh := p.qm, &p.m, p.wh
	status, sendErr := r.status, r.err
	a := Attempt{ID: d.IDs.Next(), DeliveryID: m.DeliveryID, Topic: p.topic, Attempt: qm.Attempt,
		DurationMS: r.duration.Milliseconds(), CreatedAt: admin.At(d.Clock.Now())}
	if status != 0 {
		a.ResponseStatus = &status
	}
	ok := sendErr == nil && status >= 200 && status <= 299
	if !ok {
		msg := fmt.Sprintf("the receiver answered %d", status)
		if sendErr != nil {
			msg = outbound.Reason(sendErr)
		}
		a.Error = &msg
	}
	ops := []store.Op{d.logOp(ctx, wh.ID, &a)}
	if ok {
		d.Metrics.Delivery(ctx, metrics.Sent, r.duration)
		if _, err := d.Store.Get(ctx, healthKey(wh.ID)); err == nil {
			ops = append(ops, store.Delete(healthKey(wh.ID), store.Always, 0))
		}
		return Outcome{}, records.Transact(ctx, d.Store, ops...)
	}

	if removed, err := d.checkHealth(ctx, wh); err != nil || removed {
		attempt := metrics.Removed
		if err != nil {
			attempt = metrics.Retried // the store failed: the message comes back
		}
		d.Metrics.Delivery(ctx, attempt, r.duration)
		return Outcome{}, err
	}
	if qm.Attempt >= MaxAttempts {
		d.Metrics.Delivery(ctx, metrics.DeadLettered, r.duration)
		a.DeadLettered = true
		ops[0] = d.logOp(ctx, wh.ID, &a)
		dl := DeadLetterKey(wh.ID, m.DeliveryID)
		ops = append(ops, store.Put(store.Item{PK: dl.PK, SK: dl.SK, Version: 1, Data: qm.Body,
			ExpiresAt: d.Clock.Now().Add(logTTL).Unix()}, store.Always, 0))
		slog.Warn("delivery dead-lettered", "webhook", wh.ID, "delivery", m.DeliveryID, "topic", p.topic)
		return Outcome{}, records.Transact(ctx, d.Store, ops...)
	}
	d.Metrics.Delivery(ctx, metrics.Retried, r.duration)
	after := Backoff(d.retryBase(), qm.Attempt)
	if d.MaxDelay > 0 {
		after = min(after, d.MaxDelay)
	}
	return Outcome{Retry: true, After: after}, records.Transact(ctx, d.Store, ops...)
}

// A Batch shares the reads of its messages' notifications and apps: the
// messages of one change to several webhooks (or several webhooks of one
// app) usually arrive together, so a batch of ten reads each once. The
// reads are strongly consistent, so an app's secret is read at most a
// batch's time before it signs. The consumer makes one per Receive, the
// Lambda handler one per event, and hands it to each Deliver or Prepare of
// the batch; a nil Batch shares nothing.
type Batch struct {
	mu            sync.Mutex
	notifications map[int64]*read[outbox.Notification]
	apps          map[int64]*read[admin.App]
}

type read[T any] struct {
	once sync.Once
	v    *T
	err  error
}

// NewBatch returns an empty Batch for the deliveries of one batch of
// messages.
func NewBatch() *Batch {
	return &Batch{notifications: map[int64]*read[outbox.Notification]{}, apps: map[int64]*read[admin.App]{}}
}

// shared returns the entry of id in m, creating it.
func shared[T any](b *Batch, m map[int64]*read[T], id int64) *read[T] {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := m[id]
	if r == nil {
		r = &read[T]{}
		m[id] = r
	}
	return r
}

func (d *Dispatcher) notification(ctx context.Context, b *Batch, id int64) (*outbox.Notification, error) {
	get := func() (*outbox.Notification, error) {
		var n outbox.Notification
		if _, err := records.Get(ctx, d.Store, outbox.NotificationKey(id), &n); err != nil {
			return nil, err
		}
		return &n, nil
	}
	if b == nil {
		return get()
	}
	r := shared(b, b.notifications, id)
	r.once.Do(func() { r.v, r.err = get() })
	return r.v, r.err
}

func (d *Dispatcher) app(ctx context.Context, b *Batch, id int64) (*admin.App, error) {
	if b == nil {
		return auth.App(ctx, d.Store, id)
	}
	r := shared(b, b.apps, id)
	r.once.Do(func() { r.v, r.err = auth.App(ctx, d.Store, id) })
	return r.v, r.err
}

func (d *Dispatcher) retryBase() time.Duration {
	if d.RetryBase > 0 {
		return d.RetryBase
	}
	return DefaultRetryBase
}

func (d *Dispatcher) logOp(ctx context.Context, webhookID int64, a *Attempt) store.Op {
	return store.Put(store.Item{PK: AttemptPartition(webhookID), SK: records.IDSK(a.ID), Version: 1,
		Data: records.Encode(a), ExpiresAt: d.Clock.Now().Add(logTTL).Unix()}, store.Always, 0)
}

// checkHealth notes the first failure of a failing streak and removes a
// webhook whose deliveries have failed for RetryWindow.
func (d *Dispatcher) checkHealth(ctx context.Context, wh *webhooks.Webhook) (removed bool, err error) {
	var h health
	_, err = records.Get(ctx, d.Store, healthKey(wh.ID), &h)
	switch {
	case admin.ErrorCode(err) == admin.ENOTFOUND:
		k := healthKey(wh.ID)
		h.FirstFailure = admin.At(d.Clock.Now())
		err := d.Store.Transact(ctx, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: records.Encode(&h)}, store.IfAbsent, 0))
		if errors.Is(err, store.ErrConditionFailed) {
			err = nil // a concurrent failure noted the streak first
		}
		return false, err
	case err != nil:
		return false, err
	case d.Clock.Now().Sub(h.FirstFailure.Time) < RetryWindow:
		return false, nil
	}
	slog.Warn("removing a webhook whose deliveries failed for 48 hours", "webhook", wh.ID, "address", wh.Address)
	if err := webhooks.Remove(ctx, d.Store, wh.AppID, wh.ID); err != nil && admin.ErrorCode(err) != admin.ENOTFOUND {
		return false, err
	}
	return true, d.Store.Transact(ctx, store.Delete(healthKey(wh.ID), store.Always, 0))
}

func (d *Dispatcher) send(ctx context.Context, address string, body []byte, headers *[12][2]string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, DeliveryTimeout)
	defer cancel()
	status, _, err := d.Client.Send(ctx, outbound.Request{Method: "POST", URL: address, Header: headers[:], Body: body}, maxResponse)
	if status != 0 {
		return status, nil // a big answer is still an answer
	}
	return 0, err
}

// deliveryHeaders are the headers of every delivery: what a receiver
// routes, de-duplicates and verifies it by.
// Each X-Service- header is also sent as its X-Shopify- twin, with the API
// version, so that a receiver written with a Shopify library's webhook
// validation accepts deliveries unchanged.
func deliveryHeaders(contentType, topic, shopDomain, deliveryID string, triggeredAt time.Time, secret string, body []byte) [12][2]string {
	at, sig := triggeredAt.Format(time.RFC3339), Sign(secret, body)
	return [...][2]string{
		{"Content-Type", contentType},
		{"X-Service-Topic", topic},
		{"X-Service-Shop-Domain", shopDomain},
		{"X-Service-Webhook-Id", deliveryID},
		{"X-Service-Triggered-At", at},
		{"X-Service-Hmac-Sha256", sig},
		{"X-Shopify-Topic", topic},
		{"X-Shopify-Shop-Domain", shopDomain},
		{"X-Shopify-Webhook-Id", deliveryID},
		{"X-Shopify-Triggered-At", at},
		{"X-Shopify-Hmac-Sha256", sig},
		{"X-Shopify-API-Version", admin.LatestVersion(triggeredAt)},
	}
}

// Sign is the X-Service-Hmac-Sha256 header: Base64 of HMAC-SHA256 over the
// raw body, keyed with the app's shared secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func (d *Dispatcher) shopRecord(ctx context.Context) (*admin.Shop, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.shop != nil {
		return d.shop, nil
	}
	s, err := auth.ReadShop(ctx, d.Store)
	if err != nil {
		return nil, err
	}
	d.shop = s
	return d.shop, nil
}

// body renders the payload for a webhook: restricted to its fields, with
// the owner's metafields of its namespaces, as JSON or XML.
func (d *Dispatcher) body(ctx context.Context, n *outbox.Notification, wh *webhooks.Webhook) ([]byte, string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(n.Payload, &obj); err != nil {
		return nil, "", fmt.Errorf("notification %d: payload is not an object: %w", n.ID, err)
	}
	if len(wh.MetafieldNamespaces) > 0 && n.OwnerResource != "" {
		items, err := records.List(ctx, d.Store, store.Query{Index: store.GSI1, PK: metafields.OwnerPartition(n.OwnerResource, n.OwnerID)}, nil, 0, 250)
		if err != nil {
			return nil, "", err
		}
		mfs := []metafields.Metafield{}
		for i := range items {
			var m metafields.Metafield
			if err := records.Decode(&items[i], &m); err != nil {
				return nil, "", err
			}
			if slices.Contains(wh.MetafieldNamespaces, m.Namespace) {
				mfs = append(mfs, m)
			}
		}
		obj["metafields"] = records.Encode(mfs)
	}
	if len(wh.Fields) > 0 {
		for k := range obj {
			if !slices.Contains(wh.Fields, k) && !(k == "metafields" && len(wh.MetafieldNamespaces) > 0) {
				delete(obj, k)
			}
		}
	}
	if wh.Format == "xml" {
		b, err := toXML(n.Resource, obj)
		return b, "application/xml", err
	}
	b, err := json.Marshal(obj)
	return b, "application/json", err
}
