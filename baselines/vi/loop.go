package vi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/afin-bench/afin/internal/optim"
)

// ErrDiverged marks an optimisation whose loss or gradient became
// non-finite (typically a too-large learning rate). Snapshots taken before
// it are still valid.
var ErrDiverged = errors.New("optimisation diverged")

// DefaultBudgets is the paper's FRVI step ladder.
var DefaultBudgets = []int{1000, 5000, 10000}

// LoopConfig configures Optimize.
type LoopConfig struct {
	LR      float64
	Budgets []int // strictly increasing step counts; the run lasts Budgets[len−1] steps
	// AvgFrac is the trailing fraction of each budget whose iterates are
	// averaged (Polyak–Ruppert) into that budget's snapshot, which removes
	// most of the stochastic-gradient jitter of the last iterate. 0 means
	// 0.2; a negative value snapshots the last iterate.
	AvgFrac float64
	// Trace, when set, records the loss and gradient of every step for
	// the convergence checks (see Trace).
	Trace *Trace
}

// GradFunc writes a stochastic gradient of the loss (to be minimised) at
// params into grad and returns the loss estimate. step counts from 0.
type GradFunc func(step int, params, grad []float64) (loss float64, err error)

// SnapshotFunc receives the (averaged) parameters at a budget; params is
// reused afterwards, so copy what you keep.
type SnapshotFunc func(budget int, params []float64) error

// Optimize runs Adam on params (updated in place) for the largest budget,
// calling snap once per budget in increasing order. On divergence it
// returns an error wrapping ErrDiverged after the snapshots already taken.
func Optimize(ctx context.Context, params []float64, cfg LoopConfig, grad GradFunc, snap SnapshotFunc) error {
	if len(cfg.Budgets) == 0 {
		return fmt.Errorf("optimize: no budgets")
	}
	for i, b := range cfg.Budgets {
		if b < 1 || (i > 0 && b <= cfg.Budgets[i-1]) {
			return fmt.Errorf("optimize: budgets must be positive and strictly increasing, got %v", cfg.Budgets)
		}
	}
	if !(cfg.LR > 0) || math.IsInf(cfg.LR, 0) {
		return fmt.Errorf("optimize: learning rate must be positive and finite, got %g", cfg.LR)
	}
	frac := cfg.AvgFrac
	if frac == 0 {
		frac = 0.2
	}
	if frac < 0 {
		frac = 0
	}
	n := len(params)
	budgets := slices.Clone(cfg.Budgets)
	// start[k]: first step (1-based count after the update) averaged into
	// budget k's snapshot.
	start := make([]int, len(budgets))
	sums := make([][]float64, len(budgets))
	for k, b := range budgets {
		start[k] = b - int(frac*float64(b)) + 1
		if start[k] > b {
			start[k] = b
		}
		sums[k] = make([]float64, n)
	}
	opt := optim.New[float64](n, optim.Settings{LR: cfg.LR})
	g := make([]float64, n)
	out := make([]float64, n)
	next := 0
	last := budgets[len(budgets)-1]
	for step := 0; step < last; step++ {
		// Every step: a step of a flow on a large task is milliseconds,
		// and a look at the context costs nanoseconds.
		if err := ctx.Err(); err != nil {
			return err
		}
		loss, err := grad(step, params, g)
		if err != nil {
			return err
		}
		if !finite(loss) || !allFinite(g) {
			return fmt.Errorf("%w at step %d (learning rate %g): loss %g", ErrDiverged, step, cfg.LR, loss)
		}
		cfg.Trace.record(step, loss, g)
		opt.Step(params, g)
		if !allFinite(params) {
			return fmt.Errorf("%w at step %d (learning rate %g): non-finite parameters", ErrDiverged, step, cfg.LR)
		}
		done := step + 1
		for k := next; k < len(budgets); k++ {
			if done >= start[k] {
				for i, p := range params {
					sums[k][i] += p
				}
			}
		}
		if done == budgets[next] {
			cnt := float64(budgets[next] - start[next] + 1)
			for i := range out {
				out[i] = sums[next][i] / cnt
			}
			if err := snap(budgets[next], out); err != nil {
				return err
			}
			next++
		}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func allFinite(xs []float64) bool {
	for _, x := range xs {
		if !finite(x) {
			return false
		}
	}
	return true
}
