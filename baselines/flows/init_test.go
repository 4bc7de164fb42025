package flows

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/factor"
)

// TestInitAtPriorIsFRVIStart checks that a freshly initialised flow of
// every kind is the Gaussian FRVI starts from: each draw's log q under the
// flow equals its log density under vi.PriorGaussian.
func TestInitAtPriorIsFRVIStart(t *testing.T) {
	loc := []float64{0.2, -0.7, 1.1}
	full, err := factor.NewFullRankGaussian(loc, []float64{1.5, 0.4, 0, 0.4, 2, -0.6, 0, -0.6, 1})
	if err != nil {
		t.Fatal(err)
	}
	priors := []factor.Prior{
		&factor.DiagGaussian{Loc: loc, Scale: []float64{0.5, 1, 2}},
		&factor.DiagLaplace{Loc: loc, Scale: []float64{0.5, 1, 2}},
		&factor.DiagStudentT{Loc: loc, Scale: []float64{0.5, 1, 2}, DF: 4},
		full,
	}
	for _, kind := range Kinds() {
		for _, prior := range priors {
			f, err := New(3, kind, DefaultArch(), rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.initAtPrior(prior); err != nil {
				t.Fatal(err)
			}
			g, err := vi.PriorGaussian(prior)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			z := make([]float64, 3)
			for range 50 {
				lq := f.Sample(rng, z)
				if want := g.LogQ(z); math.Abs(lq-want) > 1e-9 {
					t.Fatalf("%s/%s: log q(z) = %.12g, PriorGaussian gives %.12g at z=%v", kind, prior.Family(), lq, want, z)
				}
			}
		}
	}
}

// TestArchCheckBound checks the spline window's range: a window so wide
// that the spline overflows (every loss NaN) is refused up front.
func TestArchCheckBound(t *testing.T) {
	tests := []struct {
		bound float64
		ok    bool
	}{
		{5, true},
		{1e12, true},
		{1e13, false},
		{1e308, false},
		{math.Inf(1), false},
		{math.NaN(), false},
		{-1, false},
	}
	for _, tc := range tests {
		err := Arch{Layers: 1, Hidden: 4, Depth: 1, Bins: 4, Bound: tc.bound, MaxLogScale: 3}.Check()
		if (err == nil) != tc.ok {
			t.Errorf("bound %g: Check() = %v, want ok=%v", tc.bound, err, tc.ok)
		}
	}
	// The largest accepted window still trains to a finite loss.
	task := conjugateTask(2, 4, 2)
	if _, err := Fit(context.Background(), task, NSF, Options{Arch: Arch{Layers: 1, Hidden: 4, Depth: 1, Bins: 4, Bound: maxBound},
		Budgets: []int{20}, LRs: []float64{1e-3}}); err != nil {
		t.Errorf("bound %g: %v", maxBound, err)
	}
}

// TestFitErrorNamesKindOnce checks that a failed fit names the flow kind
// once ("maf: sweep: ..."), not once per wrapping layer.
func TestFitErrorNamesKindOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	task := conjugateTask(2, 4, 3)
	for _, tc := range []struct {
		ctx context.Context
		opt Options
	}{
		{ctx, Options{Budgets: []int{1000}, LRs: []float64{1e-3}}},                     // cancelled
		{context.Background(), Options{Budgets: []int{200}, LRs: []float64{1e6, 1e7}}}, // every rate diverges
	} {
		_, err := Fit(tc.ctx, task, MAF, tc.opt)
		if err == nil {
			t.Fatal("no error")
		}
		if msg := err.Error(); strings.Count(msg, "maf:") != 1 || strings.Contains(msg, "\n") {
			t.Errorf("error %q: want one line naming maf once", msg)
		}
	}
}
