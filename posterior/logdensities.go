package posterior

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// densityChunk is the number of draws one worker evaluates between looks
// at the context and at the shared chunk counter. The chunks are fixed by
// the draw count alone, and every value is a function of its own row, so
// the result does not depend on the number of cores.
const densityChunk = 1 << 12

// BatchDensity is a Density that also evaluates log p̃ at a block of
// points at once (row-major, len(out) rows of the target's dimension),
// as factor.Packed does with its vector kernels. Each out[s] must depend
// on row s alone, never on which rows share the call, and agree with
// LogDensity up to rounding.
type BatchDensity interface {
	Density
	LogDensities(z, out []float64) error
}

// LogDensities evaluates target's log p̃ at every row of d on all cores
// (GOMAXPROCS workers over fixed chunks of rows), a chunk per call of
// LogDensities when target is a BatchDensity. target must be safe for
// concurrent use, as factor.Task and factor.Packed are. The target
// evaluations dominate SNIS at large budgets (10⁷ in the paper), so the
// loop looks at ctx between chunks and returns its error.
func LogDensities(ctx context.Context, target Density, d *Draws) ([]float64, error) {
	n := d.Len()
	lp := make([]float64, n)
	chunks := (n + densityChunk - 1) / densityChunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	batch, _ := target.(BatchDensity)
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		bErr    error
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
				lo, hi := c*densityChunk, min(n, (c+1)*densityChunk)
				if batch == nil {
					for s := lo; s < hi; s++ {
						lp[s] = target.LogDensity(d.Row(s))
					}
				} else if err := batch.LogDensities(d.Z[lo*d.D:hi*d.D], lp[lo:hi]); err != nil {
					errOnce.Do(func() { bErr = err })
					next.Store(int64(chunks)) // the other workers stop too
					return
				}
			}
		}()
	}
	wg.Wait()
	if bErr != nil {
		return nil, fmt.Errorf("log densities: %w", bErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return lp, nil
}
