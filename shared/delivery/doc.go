// Package delivery sends webhook notifications (docs/openapi.yaml: schema
// WebhookTopic) that the outbox package wrote in the changes' transactions.
//
// The notification reaches the fan-out through the table: in AWS the
// table's stream carries the outbox marker to the change-feed function; in
// the local runner Pump polls the outbox partition. FanOut queues one
// message per subscribed webhook, so each delivery is retried on its own;
// Dispatcher delivers a message, signs it, logs the attempt and asks for a
// retry with exponential backoff, dead-lettering after MaxAttempts.
//
// Items: delivery#<webhook id>/<id> (attempt log),
// deadletter#<webhook id>/<delivery id>, webhookhealth/<webhook id>.
package delivery
