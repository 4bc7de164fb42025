package flows

import (
	"context"
	"errors"
	"testing"

	"github.com/afin-bench/afin/internal/countctx"
)

// TestFitCancel cancels each flow's fit (Laplace start, learning-rate
// sweep, Adam steps, scoring) at looks at its context spread over a run:
// each returns context.Canceled with no loop going on after the cancel
// (the error path looks again at most 3 times, to tell a cancel from a
// failure). vi's TestOptimizeCancel bounds the work between two looks to
// one step.
func TestFitCancel(t *testing.T) {
	task := conjugateTask(3, 20, 1)
	opt := Options{Arch: Arch{Layers: 2, Hidden: 8}, Budgets: []int{200}, LRs: []float64{3e-3, 1e-2}, ScoreDraws: 64, Seed: 5}
	for _, kind := range Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			whole := countctx.CancelAt(0)
			defer whole.Stop()
			if _, err := Fit(whole, task, kind, opt); err != nil {
				t.Fatal(err)
			}
			looks := whole.Calls()
			for _, at := range []int64{1, 2, looks / 4, looks / 2, looks - looks/8} {
				ctx := countctx.CancelAt(at)
				_, err := Fit(ctx, task, kind, opt)
				ctx.Stop()
				if !errors.Is(err, context.Canceled) {
					t.Errorf("cancel at look %d of %d: err = %v, want context.Canceled", at, looks, err)
				}
				if ctx.After() > 3 {
					t.Errorf("cancel at look %d of %d: looked %d more times, want ≤ 3", at, looks, ctx.After())
				}
			}
		})
	}
}
