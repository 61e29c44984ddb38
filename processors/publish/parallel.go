package publish

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// ForEach calls fn(i) for every i in [0, n) on up to GOMAXPROCS goroutines
// and returns the error of the lowest failing index (so the error does not
// depend on scheduling). fn must only write to its own index's outputs.
func ForEach(n int, fn func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	const chunk = 64
	var next atomic.Int64
	errs := make([]error, workers)
	errAt := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		errAt[w] = n
		wg.Go(func() {
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= n {
					return
				}
				for i := start; i < min(start+chunk, n); i++ {
					if err := fn(i); err != nil {
						if i < errAt[w] {
							errs[w], errAt[w] = err, i
						}
						return
					}
				}
			}
		})
	}
	wg.Wait()
	var first error
	at := n
	for w := range workers {
		if errs[w] != nil && errAt[w] < at {
			first, at = errs[w], errAt[w]
		}
	}
	return first
}
