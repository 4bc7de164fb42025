package optim

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each runs f(0..n−1) on GOMAXPROCS goroutines, handing out one index
// at a time, for independent items of uneven size: a network's tensors
// (over the paper's 4.55M weights an optimiser step, an EMA or a sum of
// gradients is tens of milliseconds on one core) or a batch's tasks. Each
// item's arithmetic is its own, so the result does not depend on the
// schedule.
func Each(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
}
