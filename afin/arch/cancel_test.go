package arch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// TestNewBatchCancel cancels from inside the batch building, after a
// given token, and checks NewBatch returns context.Canceled having
// written at most checkFloats further descriptor values (plus the token in
// progress, at most 11·d²+7·d values): the latency of a
// cancel is bounded by work, not by how large the task is. Every family
// pair (the descriptor widths differ) and a large d are covered.
func TestNewBatchCancel(t *testing.T) {
	cases := []struct {
		d, n    int
		prior   string
		lik     string
		tasks   int
		cancels []int // cancel after this many tokens
	}{
		{32, 600, factor.DiagGaussianFamily, factor.LinGaussianFamily, 1, []int{0, 1, 7, 300}},
		{8, 256, factor.FullRankGaussianFamily, factor.BinomialLogitFamily, 6, []int{3, 700}},
		{16, 128, factor.DiagStudentTFamily, factor.GaussianFamily, 3, []int{1, 200}},
		{4, 256, factor.DiagLaplaceFamily, factor.LinStudentTFamily, 20, []int{5, 3000}},
	}
	for _, tc := range cases {
		rng := rand.New(rand.NewPCG(uint64(tc.d), uint64(tc.n)))
		tasks := make([]*factor.Task, tc.tasks)
		for k := range tasks {
			var err error
			tasks[k], err = factor.Simulate(rng, factor.SimOptions{D: tc.d, N: tc.n, Prior: tc.prior,
				Likelihoods: []string{tc.lik}, Design: factor.DesignIID})
			if err != nil {
				t.Fatal(err)
			}
		}
		total := 0
		if _, err := newBatch(context.Background(), tasks, 0, nil, func(v int) { total += v }); err != nil {
			t.Fatal(err)
		}
		for _, at := range tc.cancels {
			t.Run(fmt.Sprintf("d=%d,N=%d,%s,cancel@%d", tc.d, tc.n, tc.lik, at), func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				tokens, after := 0, 0
				if at == 0 {
					cancel()
				}
				_, err := newBatch(ctx, tasks, 0, nil, func(v int) {
					if ctx.Err() != nil {
						after += v
					}
					if tokens++; tokens == at {
						cancel()
					}
				})
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
				if bound := checkFloats + 11*tc.d*tc.d + 7*tc.d; after > bound {
					t.Errorf("wrote %d descriptor values after the cancel, want ≤ %d (of %d in the batch)", after, bound, total)
				}
			})
		}
		if total < 4*checkFloats {
			t.Errorf("d=%d: the batch holds %d values, too few to test a bound of %d", tc.d, total, checkFloats)
		}
	}
}
