package posterior

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// densityChunk is the number of draws one worker evaluates between looks
// at the context and at the shared chunk counter. The chunks are fixed by
// the draw count alone, and every value is a function of its own row, so
// the result does not depend on the number of cores.
const densityChunk = 1 << 12

// LogDensities evaluates target's log p̃ at every row of d on all cores
// (GOMAXPROCS workers over fixed chunks of rows). target's LogDensity must
// be safe for concurrent use, as factor.Task's and factor.Packed's are. The
// target evaluations dominate SNIS at large budgets (10⁷ in the paper), so
// the loop looks at ctx between chunks and returns its error.
func LogDensities(ctx context.Context, target Density, d *Draws) ([]float64, error) {
	n := d.Len()
	lp := make([]float64, n)
	chunks := (n + densityChunk - 1) / densityChunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks || ctx.Err() != nil {
					return
				}
				for s := c * densityChunk; s < min(n, (c+1)*densityChunk); s++ {
					lp[s] = target.LogDensity(d.Row(s))
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return lp, nil
}
