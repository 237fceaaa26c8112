package delivery

import (
	"context"
	"log/slog"
	"time"

	"github.com/storeadmin/adminapi/shared/queue"
)

// Consume delivers messages from q until ctx ends: the local runner's
// webhook-dispatch. Each message gets its own goroutine, up to workers at
// once, so a slow receiver holds up only its own deliveries.
func Consume(ctx context.Context, q queue.Queue, d *Dispatcher, workers int) {
	slots := make(chan struct{}, workers)
	for ctx.Err() == nil {
		slots <- struct{}{} // wait for one free worker before asking for more
		free := 1 + (workers - len(slots))
		<-slots
		msgs, err := q.Receive(ctx, free, time.Second)
		if err != nil {
			if ctx.Err() == nil {
				slog.Error("delivery queue receive failed", "error", err.Error())
				time.Sleep(time.Second)
			}
			continue
		}
		for _, m := range msgs {
			slots <- struct{}{}
			go func() {
				defer func() { <-slots }()
				Handle(ctx, q, d, m)
			}()
		}
	}
	for range workers { // wait for deliveries in flight
		slots <- struct{}{}
	}
}

// Handle makes one attempt at m and settles it on q: acked when done,
// delayed when to be retried, left to reappear when the attempt failed.
func Handle(ctx context.Context, q queue.Queue, d *Dispatcher, m queue.Message) (retry bool) {
	out, err := d.Deliver(ctx, m)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			slog.Error("delivery attempt failed", "message", m.ID, "error", err.Error())
		}
		return true
	case out.Retry:
		if err := q.Retry(ctx, m, out.After); err != nil {
			slog.Error("delivery retry failed", "message", m.ID, "error", err.Error())
		}
		return true
	}
	if err := q.Ack(ctx, m); err != nil {
		slog.Error("delivery ack failed", "message", m.ID, "error", err.Error())
	}
	return false
}
