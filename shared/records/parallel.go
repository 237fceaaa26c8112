package records

import (
	"context"
	"errors"
	"sync"
)

// ReadConcurrency bounds the reads one request makes at once: enough to
// hide DynamoDB's round trips for a page of point reads, few enough not to
// crowd the process's connections.
const ReadConcurrency = 16

// Parallel calls read(i) for i in [0, n), ReadConcurrency at a time, and
// returns every error they returned, joined. Each call must write only its
// own i's results; a page of GetItems costs the slowest few, not their sum.
func Parallel(ctx context.Context, n int, read func(ctx context.Context, i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, ReadConcurrency)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = read(ctx, i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
