// Package factortest holds the test helpers several packages' tests
// share about factor tasks: a simulated single-family task, the
// distances their moments are compared with, and the hard cases.
//
// The hard cases are the posteriors on which issue 17 found the VI
// baselines silently wrong, with independent reference moments, so the
// tests of FRVI and of the flows check the same cases: a conjugate task
// 10³ times narrower than its prior, and a binomial observation of 2³⁰
// trials at its support boundary.
package factortest

import (
	"fmt"
	"math"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
)

// HardCase is one task with its exact posterior mean and sds.
type HardCase struct {
	Name     string
	Task     *factor.Task
	Mean, SD []float64
}

// HardCases returns the σ = 10⁻³ conjugate case and the binomial cases at y = 0
// and y = trials.
func HardCases() ([]HardCase, error) {
	conj := TinySigma(1)
	mean, cov, err := factor.ExactPosterior(conj)
	if err != nil {
		return nil, fmt.Errorf("hard cases: %w", err)
	}
	sd := make([]float64, conj.D)
	for i := range sd {
		sd[i] = math.Sqrt(cov[i*conj.D+i])
	}
	cases := []HardCase{{"conjugate σ=1e-3 d=4 N=64", conj, mean, sd}}
	for _, high := range []bool{false, true} {
		task := BoundaryBinomial(high)
		m, s := QuadratureMoments(task, -80, 80)
		name := "binomial 2^30 trials, y=0"
		if high {
			name = "binomial 2^30 trials, y=trials"
		}
		cases = append(cases, HardCase{name, task, []float64{m}, []float64{s}})
	}
	return cases, nil
}

// TinySigma is issue 17's conjugate case: d = 4, N = 64 linear Gaussian
// observations with σ = 10⁻³ under a N(0, I) prior, so the posterior sds
// (about 10⁻⁴) are four orders of magnitude below the prior's.
func TinySigma(seed uint64) *factor.Task {
	const d, n, sigma = 4, 64, 1e-3
	rng := streams.New(seed, streams.HardCases)
	z := make([]float64, d)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	task := &factor.Task{D: d, Prior: &factor.DiagGaussian{Loc: make([]float64, d), Scale: []float64{1, 1, 1, 1}}, TrueZ: z}
	for k := 0; k < n; k++ {
		x := make([]float64, d)
		var eta float64
		for i := range x {
			x[i] = rng.NormFloat64()
			eta += x[i] * z[i]
		}
		task.Factors = append(task.Factors, &factor.LinGaussian{X: x, Y: eta + sigma*rng.NormFloat64(), Sigma: sigma})
	}
	return task
}

// BoundaryBinomial is issue 17's support-boundary case: one binomial
// observation of 2³⁰ trials with y = 0 (or y = trials when high) under a
// N(0, 10²) prior on the logit. The posterior sits near ∓log 2³⁰ and is
// skewed: a wall on the data's side, the prior's tail on the other.
func BoundaryBinomial(high bool) *factor.Task {
	const trials = 1 << 30
	y := 0.0
	if high {
		y = trials
	}
	return &factor.Task{D: 1, Prior: &factor.DiagGaussian{Loc: []float64{0}, Scale: []float64{10}},
		Factors: []factor.Likelihood{&factor.BinomialLogit{X: []float64{1}, Y: y, Trials: trials}}}
}

// QuadratureMoments returns the mean and sd of a one-dimensional
// posterior by Simpson's rule on [lo, hi] with 2·10⁵ intervals: a
// reference that needs neither MCMC nor a closed form.
func QuadratureMoments(task *factor.Task, lo, hi float64) (mean, sd float64) {
	const n = 200000 // even
	h := (hi - lo) / n
	z := []float64{0}
	lps := make([]float64, n+1)
	maxLP := math.Inf(-1)
	for i := range lps {
		z[0] = lo + float64(i)*h
		lps[i] = task.LogDensity(z)
		maxLP = math.Max(maxLP, lps[i])
	}
	var m0, m1, m2 float64
	for i, lp := range lps {
		w := 2.0
		if i == 0 || i == n {
			w = 1
		} else if i%2 == 1 {
			w = 4
		}
		x := lo + float64(i)*h
		p := w * math.Exp(lp-maxLP)
		m0 += p
		m1 += p * x
		m2 += p * x * x
	}
	mean = m1 / m0
	return mean, math.Sqrt(m2/m0 - mean*mean)
}

// AnswerDraws is the number of draws an answer is taken to be made of
// when its Monte Carlo standard error is computed (afin infer's default).
const AnswerDraws = 4000

// WithinMCSE reports whether an answer's mean and covariance are within 4
// Monte Carlo standard errors of an answer of AnswerDraws draws from the
// exact posterior: |Δmeanᵢ| ≤ 4sdᵢ/√n and |sd_qᵢ/sdᵢ − 1| ≤ 4/√(2n). why
// names the first miss.
func (c HardCase) WithinMCSE(mean, cov []float64) (ok bool, why string) {
	d := len(c.Mean)
	n := float64(AnswerDraws)
	for i := range c.Mean {
		if dm := math.Abs(mean[i] - c.Mean[i]); dm > 4*c.SD[i]/math.Sqrt(n) {
			return false, fmt.Sprintf("mean[%d] off by %.3g sd", i, dm/c.SD[i])
		}
		if r := math.Sqrt(cov[i*d+i]) / c.SD[i]; math.Abs(r-1) > 4/math.Sqrt(2*n) {
			return false, fmt.Sprintf("sd[%d] off by a factor %.3g", i, r)
		}
	}
	return true, ""
}
