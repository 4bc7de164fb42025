package factortest

// The small helpers that the tests of several packages (NUTS, VI,
// references) share: a simulated single-family task and the distances
// they compare moments with.

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// Simulate draws one task of d latents and n sites of likelihood family
// lik under a prior of family prior, iid design, from the PCG stream
// (seed, stream); it fails the test on error. Each package passes its own
// stream so their tasks stay what their tolerances were set on.
func Simulate(t testing.TB, seed, stream uint64, prior, lik string, d, n int) *factor.Task {
	t.Helper()
	task, err := factor.Simulate(rand.New(rand.NewPCG(seed, stream)), factor.SimOptions{D: d, N: n, Prior: prior, Likelihoods: []string{lik}, Design: factor.DesignIID})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// L2 is the Euclidean distance between a and b.
func L2(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// MaxAbsDiff is the largest |aᵢ − bᵢ|.
func MaxAbsDiff(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}
