package delivery

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// samples are the payloads Trigger sends, one per topic group (the part of
// the topic before the slash), each with its XML root: records of the demo
// shop as the service writes them.
//
//go:embed samples.json
var samplesJSON []byte

type sample struct {
	Resource string                     `json:"resource"`
	Payload  map[string]json.RawMessage `json:"payload"`
}

// samples decodes samplesJSON on first use: only the local runner's
// trigger reads them, and no Lambda's cold start should pay for it.
var samples = sync.OnceValue(func() map[string]sample {
	var m map[string]sample
	if err := json.Unmarshal(samplesJSON, &m); err != nil {
		panic("delivery: samples.json: " + err.Error())
	}
	return m
})

// Triggered is what a trigger sent, and what the receiver answered (0
// when nothing answered).
type Triggered struct {
	DeliveryID string `json:"delivery_id"`
	Status     int    `json:"status"`
}

// Trigger sends address one delivery of topic as the calling app
// (admin.AppFrom) would receive it, whether or not a webhook exists: a
// sample payload of the topic's resource, in format ("json", "" or "xml"),
// with the usual headers, signed with the app's shared secret, through the
// one outbound client (so a refused address is refused here too). An
// unknown topic or format and a refused address are 422 naming the field;
// a topic whose read scope the app lacks is 403, as for a webhook.
func Trigger(ctx context.Context, client *outbound.Client, gen *ids.Generator, clk clock.Clock, topic, address, format string) (Triggered, error) {
	var v admin.Validation
	group, _, _ := strings.Cut(topic, "/")
	s, ok := samples()[group]
	switch {
	case topic == "":
		v.Add("topic", admin.MsgBlank)
	case !webhooks.ValidTopic(topic) || !ok:
		v.Add("topic", webhooks.InvalidTopicMessage(topic))
	}
	switch {
	case address == "":
		v.Add("address", admin.MsgBlank)
	case client.Refuses(address):
		v.Add("address", outbound.MsgRefused)
	}
	if format != "" && format != "json" && format != "xml" {
		v.Add("format", admin.MsgNotInList)
	}
	if err := v.Err(); err != nil {
		return Triggered{}, err
	}
	// As for a webhook: the app must hold the read scope of what the
	// topic carries (403 otherwise).
	if err := webhooks.Readable(admin.AppFrom(ctx), topic); err != nil {
		return Triggered{}, err
	}
	body, contentType, err := []byte(nil), "application/json", error(nil)
	if format == "xml" {
		body, err = toXML(s.Resource, s.Payload)
		contentType = "application/xml"
	} else {
		body, err = json.Marshal(s.Payload)
	}
	if err != nil {
		return Triggered{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, DeliveryTimeout)
	defer cancel()
	app, shop := admin.AppFrom(ctx), admin.ShopFrom(ctx)
	t := Triggered{DeliveryID: DeliveryID(gen.Next(), 0)}
	headers := deliveryHeaders(contentType, topic, shop.Domain, t.DeliveryID, clk.Now(), app.SharedSecret, body)
	t.Status, _, err = client.Send(ctx, outbound.Request{Method: "POST", URL: address, Header: headers[:], Body: body}, maxResponse)
	if t.Status != 0 {
		return t, nil // an answer, whatever it says, is the receiver's
	}
	if errors.Is(err, outbound.ErrInvalidRequest) || errors.Is(err, outbound.ErrRefused) {
		return Triggered{}, admin.Invalid("address", outbound.MsgRefused)
	}
	return t, nil // nothing answered: the status says so
}
