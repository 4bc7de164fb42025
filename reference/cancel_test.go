package reference

import (
	"context"
	"errors"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/factor/factortest"
	"github.com/afin-bench/afin/internal/countctx"
)

// TestGetCancel cancels a reference run at looks at its context spread
// over the whole run (warm-up, sampling): each returns context.Canceled
// with no loop going on after the cancel (the error path looks again at
// most 3 times). nuts' TestSampleCancel bounds the work between two looks
// to 64 gradient evaluations per chain.
func TestGetCancel(t *testing.T) {
	task := factortest.Simulate(t, 2, 1, factor.DiagStudentTFamily, factor.BernoulliLogitFamily, 3, 40)
	s := Settings{Profile: ProfileSmoke, Draws: 600, Warmup: 200, Chains: 2, Subsample: 100, NoCache: true, Seed: 1}
	whole := countctx.CancelAt(0)
	defer whole.Stop()
	if _, err := Get(whole, task, s); err != nil && !errors.As(err, new(*ConvergenceError)) {
		t.Fatal(err)
	}
	looks := whole.Calls()
	if looks < 20 {
		t.Fatalf("a whole run looks at its context %d times: too few", looks)
	}
	for _, at := range []int64{1, 2, looks / 4, looks / 2, looks - looks/8} {
		ctx := countctx.CancelAt(at)
		_, err := Get(ctx, task, s)
		ctx.Stop()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancel at look %d of %d: err = %v, want context.Canceled", at, looks, err)
		}
		if ctx.After() > 3 {
			t.Errorf("cancel at look %d of %d: looked %d more times, want ≤ 3", at, looks, ctx.After())
		}
	}
}
