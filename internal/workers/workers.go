// Package workers runs a batch of independent API writes a bounded number at a time.
package workers

import "sync"

// Run calls fn(0) … fn(n-1) on up to limit goroutines (at least one) and returns each call's error by index.
// Every index runs once, whatever the others return.
func Run(n, limit int, fn func(i int) error) []error {
	errs := make([]error, n)
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(max(limit, 1), n) {
		wg.Go(func() {
			for i := range work {
				errs[i] = fn(i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return errs
}
