package vi

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// gridMean integrates exp(log p̃) of a 2-D task on a fine grid around
// (m, s) — a quadrature reference accurate far beyond Monte Carlo error.
func gridMean(task *factor.Task, m []float64, s []float64) []float64 {
	const n = 800
	var w, m0, m1 float64
	z := make([]float64, 2)
	lps := make([]float64, n*n)
	maxLP := math.Inf(-1)
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			z[0] = m[0] + s[0]*(-12+24*(float64(a)+0.5)/n)
			z[1] = m[1] + s[1]*(-12+24*(float64(b)+0.5)/n)
			lps[a*n+b] = task.LogDensity(z)
			maxLP = math.Max(maxLP, lps[a*n+b])
		}
	}
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			v := math.Exp(lps[a*n+b] - maxLP)
			w += v
			m0 += v * (m[0] + s[0]*(-12+24*(float64(a)+0.5)/n))
			m1 += v * (m[1] + s[1]*(-12+24*(float64(b)+0.5)/n))
		}
	}
	return []float64{m0 / w, m1 / w}
}

// TestSNISImprovesFRVI: on a skewed bernoulli posterior the Gaussian fit
// has a visible mean bias that importance weighting removes.
func TestSNISImprovesFRVI(t *testing.T) {
	// A wide prior and a few nearly separable observations: the posterior
	// is skewed along the separating directions.
	task := &factor.Task{
		D:     2,
		Prior: &factor.DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{2.5, 2.5}},
		Factors: []factor.Likelihood{
			&factor.BernoulliLogit{X: []float64{1.5, 0.5}, Y: 1},
			&factor.BernoulliLogit{X: []float64{1, -1}, Y: 1},
			&factor.BernoulliLogit{X: []float64{0.5, 1.2}, Y: 1},
			&factor.BernoulliLogit{X: []float64{-0.3, 0.8}, Y: 0},
		},
	}
	res, err := Sweep(context.Background(), LRGrid(7, 1e-6, 1e-2), DefaultBudgets, FRVIFit(task, FRVIConfig{Seed: 2}), SelectELBO, NegELBOScore(task, 2000, 1))
	if err != nil {
		t.Fatal(err)
	}
	q := res.Best[2].Q.(*Gaussian)
	qc := q.Cov()
	truth := gridMean(task, q.Mean, []float64{math.Sqrt(qc[0]), math.Sqrt(qc[3])})
	dr, info, err := posterior.SNISOf(context.Background(), task, q, rand.New(rand.NewPCG(4, 4)), 100000)
	if err != nil {
		t.Fatal(err)
	}
	m1VI := l2(q.Mean, truth)
	m1SNIS := l2(dr.Mean(), truth)
	t.Logf("M1: FRVI %.3g, FRVI+SNIS %.3g (Pareto k %.2f, ESS %.0f)", m1VI, m1SNIS, info.ParetoK, info.ESS)
	if !(m1SNIS < 0.5*m1VI) {
		t.Errorf("SNIS M1 %.3g does not improve on FRVI's %.3g", m1SNIS, m1VI)
	}
	if !dr.Weighted() {
		t.Error("SNIS draws should be weighted")
	}
}
