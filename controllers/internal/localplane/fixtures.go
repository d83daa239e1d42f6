package localplane

import (
	"errors"
	"sync"
)

// Parallel runs f(i) for every i in [0,n) on workers goroutines (at least one)
// and returns every error f returned, joined.
func Parallel(n, workers int, f func(i int) error) error {
	var mu sync.Mutex
	var errs []error
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}
