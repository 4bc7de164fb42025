package vi

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/factor/factortest"
	"github.com/afin-bench/afin/internal/countctx"
)

// TestOptimizeCancel cancels from inside a gradient (the unit of work of
// FRVI and of the flows, which share Optimize) and checks Optimize
// returns context.Canceled without another gradient: it looks at the
// context every step (it looked every 64).
func TestOptimizeCancel(t *testing.T) {
	for _, at := range []int{1, 2, 63, 64, 65, 1000} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := 0
			grad := func(step int, p, g []float64) (float64, error) {
				if calls++; calls == at {
					cancel()
				}
				g[0] = p[0] - 1
				return 0.5 * (p[0] - 1) * (p[0] - 1), nil
			}
			err := Optimize(ctx, []float64{0}, LoopConfig{LR: 1e-2, Budgets: []int{5000}}, grad, func(int, []float64) error { return nil })
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if calls != at {
				t.Errorf("%d gradients after the cancel, want 0", calls-at)
			}
		})
	}
}

// countedDensity counts the evaluations of a task's density (values and
// gradients alike) and runs a hook after each.
type countedDensity struct {
	p     *factor.Packed
	n     int
	after func(n int)
}

func (c *countedDensity) LogDensity(z []float64) float64 {
	c.n++
	c.after(c.n)
	return c.p.LogDensity(z)
}

func (c *countedDensity) LogDensityGrad(z, g []float64) float64 {
	c.n++
	c.after(c.n)
	return c.p.LogDensityGrad(z, g)
}

// TestLaplaceCancel cancels the mode search, the finite-difference
// Hessians and the Newton polish from inside a density evaluation, at
// every evaluation of a whole run, and checks Laplace returns
// context.Canceled after at most one more evaluation (the other half of
// a central difference) and at most 3 more looks at the context (the
// error path's; each block of a factorisation is one look). It looked
// only between Hessians: 2d + 2 evaluations and
// two O(d³) factorisations went on after a cancel, 88 s at d = 4096.
func TestLaplaceCancel(t *testing.T) {
	task := factortest.Simulate(t, 4, 1, factor.DiagStudentTFamily, factor.BernoulliLogitFamily, 24, 200)
	whole := &countedDensity{p: task.Packed(), after: func(int) {}}
	if _, _, err := laplace(context.Background(), whole, task.Prior.Location()); err != nil {
		t.Fatal(err)
	}
	total := whole.n
	if total < 4*task.D {
		t.Fatalf("a whole run took %d evaluations, fewer than one Hessian's", total)
	}
	for at := 1; at < total; at++ {
		ctx := countctx.CancelAt(0)
		c := &countedDensity{p: task.Packed()}
		var looks int64
		c.after = func(n int) {
			if n == at {
				ctx.Stop()
				looks = ctx.Calls()
			}
		}
		_, _, err := laplace(ctx, c, task.Prior.Location())
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancel at evaluation %d of %d: err = %v, want context.Canceled", at, total, err)
		}
		if after := c.n - at; after > 1 {
			t.Errorf("cancel at evaluation %d of %d: %d evaluations after it, want ≤ 1", at, total, after)
		}
		if after := ctx.Calls() - looks; after > 3 {
			t.Errorf("cancel at evaluation %d of %d: %d looks at the context after it, want ≤ 3 (the error path's)", at, total, after)
		}
	}
}

// TestRunFRVICancel cancels the whole FRVI protocol (Laplace start,
// learning-rate sweep, Adam steps, scoring) at looks at its context
// spread over a run: each returns context.Canceled with no loop going on
// after the cancel (the error path looks again at most 3 times, to tell
// a cancel from a failure).
func TestRunFRVICancel(t *testing.T) {
	task := factortest.Simulate(t, 5, 1, factor.DiagGaussianFamily, factor.LinGaussianFamily, 4, 30)
	o := FRVIOptions{Seed: 1, Budgets: []int{300}, LRs: []float64{1e-2, 3e-2}}
	whole := countctx.CancelAt(0)
	defer whole.Stop()
	if _, err := RunFRVI(whole, task, o); err != nil {
		t.Fatal(err)
	}
	looks := whole.Calls()
	for _, at := range []int64{1, 2, looks / 4, looks / 2, looks - looks/8} {
		ctx := countctx.CancelAt(at)
		_, err := RunFRVI(ctx, task, o)
		ctx.Stop()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancel at look %d of %d: err = %v, want context.Canceled", at, looks, err)
		}
		if ctx.After() > 3 {
			t.Errorf("cancel at look %d of %d: looked %d more times, want ≤ 3 (the error path's)", at, looks, ctx.After())
		}
	}
}
