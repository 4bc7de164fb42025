package factortest

import (
	"math"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// TestQuadratureMatchesExact checks the quadrature on one-dimensional
// conjugate posteriors, whose moments factor computes in closed form.
func TestQuadratureMatchesExact(t *testing.T) {
	tests := []struct{ prior, y, sigma float64 }{
		{10, 1, 1},
		{1, -3, 0.2},
		{3, 25, 2},
	}
	for _, tc := range tests {
		task := &factor.Task{D: 1, Prior: &factor.DiagGaussian{Loc: []float64{0}, Scale: []float64{tc.prior}},
			Factors: []factor.Likelihood{&factor.LinGaussian{X: []float64{1}, Y: tc.y, Sigma: tc.sigma}}}
		mean, cov, err := factor.ExactPosterior(task)
		if err != nil {
			t.Fatal(err)
		}
		m, sd := QuadratureMoments(task, -80, 80)
		if math.Abs(m-mean[0]) > 1e-9 || math.Abs(sd-math.Sqrt(cov[0])) > 1e-9 {
			t.Errorf("%+v: quadrature %g±%g, exact %g±%g", tc, m, sd, mean[0], math.Sqrt(cov[0]))
		}
	}
}

// TestBoundaryCases checks the binomial cases sit where issue 17 saw them
// (near ∓log 2³⁰) and mirror each other.
func TestBoundaryCases(t *testing.T) {
	cases, err := HardCases()
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := cases[1], cases[2]
	for _, c := range cases[1:] {
		if math.Abs(math.Abs(c.Mean[0])-math.Log(1<<30)) > 6 || !(c.SD[0] > 1 && c.SD[0] < 6) {
			t.Errorf("%s: mean %g sd %g", c.Name, c.Mean[0], c.SD[0])
		}
	}
	if math.Abs(lo.Mean[0]+hi.Mean[0]) > 1e-6 || math.Abs(lo.SD[0]-hi.SD[0]) > 1e-6 {
		t.Errorf("y=0 and y=trials are not mirror images: %g±%g vs %g±%g", lo.Mean[0], lo.SD[0], hi.Mean[0], hi.SD[0])
	}
}
