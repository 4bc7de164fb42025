package optim

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// Each visits every index exactly once, whatever the number of cores.
func TestEachVisitsEveryTensorOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 7} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 5, 1000} {
			seen := make([]atomic.Int32, n)
			Each(n, func(i int) { seen[i].Add(1) })
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Errorf("GOMAXPROCS %d, n %d: index %d visited %d times", procs, n, i, c)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}
