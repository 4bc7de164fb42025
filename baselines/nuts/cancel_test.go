package nuts

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// illConditioned is a 2-d Gaussian with scales 1 and 1e-4 that counts its
// gradient evaluations and runs a hook after each: with a unit metric
// and no adaptation NUTS builds trees of depth 7 (127 leapfrogs), the
// case where looking at the context once per 64 transitions let a
// cancelled run go on for thousands of evaluations (65k at depth 10).
type illConditioned struct {
	evals atomic.Int64
	after func(n int64)
}

func (g *illConditioned) LogDensityGrad(z, grad []float64) float64 {
	grad[0], grad[1] = -z[0], -z[1]*1e8
	if g.after != nil {
		g.after(g.evals.Add(1))
	}
	return -0.5 * (z[0]*z[0] + z[1]*z[1]*1e8)
}

// TestSampleCancel cancels from inside the sampling, at gradient
// evaluations spread over a whole run, and checks Sample returns
// context.Canceled within 64 more evaluations per chain.
func TestSampleCancel(t *testing.T) {
	cfg := Config{Warmup: 0, Draws: 60, Chains: 2, Seed: 3, Init: []float64{0.5, 0}, InvMetric: []float64{1, 1}}
	whole := &illConditioned{after: func(int64) {}}
	res, err := Sample(context.Background(), whole, 2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	total := whole.evals.Load()
	if res.MeanDepth < 6 {
		t.Fatalf("mean tree depth %.1f: the target does not force deep trees", res.MeanDepth)
	}
	for _, at := range []int64{1, 2, 100, total / 4, total / 2, total - total/8} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			g := &illConditioned{}
			g.after = func(n int64) {
				if n == at {
					cancel()
				}
			}
			_, err := Sample(ctx, g, 2, cfg)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if after, bound := g.evals.Load()-at, int64(cfg.Chains*64); after > bound {
				t.Errorf("%d gradient evaluations after the cancel (of %d in a whole run), want ≤ %d", after, total, bound)
			}
		})
	}
}
