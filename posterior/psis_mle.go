package posterior

import (
	"math"
	"slices"

	"github.com/afin-bench/afin/internal/moments"
)

// ParetoKMLE is the Pareto k̂ of the authors' public evaluation code (facts
// sheet §9), offered for comparison with the paper's tables; ParetoK (PSIS,
// as loo) is afin's default. It differs from ParetoK in three ways:
//
//   - the tail holds M = min(max(20, round(3√n)), max(5, round(0.2n)))
//     draws, clamped to [5, n−1], where n counts the finite log ratios
//     (non-finite ones are dropped, not treated as zero weights);
//   - the GPD (location 0) is fitted by plain maximum likelihood, with no
//     prior, so k̂ can be far below 0 for light tails;
//   - when the fit fails it falls back to the method of moments,
//     k = ½(1 − mean²/var), and returns 0 for a constant tail.
//
// It returns NaN for fewer than 10 finite ratios.
func ParetoKMLE(logW []float64) float64 {
	var lw []float64
	maxLW := math.Inf(-1)
	for _, v := range logW {
		if finite(v) {
			lw = append(lw, v)
			maxLW = math.Max(maxLW, v)
		}
	}
	n := len(lw)
	if n < 10 {
		return math.NaN()
	}
	fn := float64(n)
	// Python's round() rounds half to even.
	m := int(math.Min(math.Max(20, math.RoundToEven(3*math.Sqrt(fn))), math.Max(5, math.RoundToEven(0.2*fn))))
	m = min(max(m, 5), n-1)
	w := make([]float64, n)
	for i, v := range lw {
		w[i] = math.Exp(v - maxLW)
	}
	selectKth(w, n-m-1)
	thr := w[n-m-1]
	x := slices.Clone(w[n-m:])
	for i := range x {
		x[i] -= thr
	}
	slices.Sort(x)
	if x[m-1]-x[0] <= 0 {
		return 0
	}
	if k, ok := gpdMLE(x); ok {
		return k
	}
	mu, v := moments.MeanVar(x, 1)
	if !(v > 0) {
		return 0
	}
	return 0.5 * (1 - mu*mu/v)
}

// gpdMLE maximises the GPD (location 0) likelihood of exceedances x
// (sorted ascending, not all equal) over shape k and scale σ through the
// profile likelihood in θ = k/σ: for fixed θ the best shape is
// k̂(θ) = mean log(1 + θx), and the log-likelihood per observation is
// log(θ/k̂(θ)) − k̂(θ) − 1 (Grimshaw 1993). θ ranges over (−1/x_max, ∞).
//
// That likelihood grows without bound as θ → −1/x_max (k → −∞), so the
// MLE is the highest interior local maximum: a grid over θ·x_max finds
// it, golden-section search refines it. ok is false when there is none.
func gpdMLE(x []float64) (k float64, ok bool) {
	xmax := x[len(x)-1]
	prof := func(t float64) float64 { // t = θ·x_max
		th := t / xmax
		var kk float64
		for _, xi := range x {
			kk += math.Log1p(th * xi)
		}
		kk /= float64(len(x))
		if t == 0 || kk == 0 {
			// Exponential limit: θ/k̂(θ) → 1/mean(x).
			var mu float64
			for _, xi := range x {
				mu += xi
			}
			return -math.Log(mu/float64(len(x))) - 1
		}
		return math.Log(th/kk) - kk - 1
	}
	// Grid: t = −1 + 10^−e near the lower end, 10^e on the positive side,
	// both in steps of 0.05 decades, plus 0.
	var grid []float64
	for e := 8.0; e > 0.001; e -= 0.05 {
		grid = append(grid, -1+math.Pow(10, -e))
	}
	grid = append(grid, 0)
	for e := -6.0; e <= 10.0; e += 0.05 {
		grid = append(grid, math.Pow(10, e))
	}
	slices.Sort(grid)
	vals := make([]float64, len(grid))
	for i, t := range grid {
		vals[i] = prof(t)
	}
	best := -1
	for i := 1; i+1 < len(grid); i++ {
		if vals[i] >= vals[i-1] && vals[i] > vals[i+1] && !math.IsNaN(vals[i]) {
			if best < 0 || vals[i] > vals[best] {
				best = i
			}
		}
	}
	if best < 0 {
		return 0, false
	}
	// Golden-section search for the maximum on [grid[best−1], grid[best+1]].
	lo, hi := grid[best-1], grid[best+1]
	const g = 0.6180339887498949
	c, d := hi-g*(hi-lo), lo+g*(hi-lo)
	fc, fd := prof(c), prof(d)
	for range 200 {
		if hi-lo <= 1e-12*math.Max(1, math.Abs(lo)+math.Abs(hi)) {
			break
		}
		if fc > fd {
			hi, d, fd = d, c, fc
			c = hi - g*(hi-lo)
			fc = prof(c)
		} else {
			lo, c, fc = c, d, fd
			d = lo + g*(hi-lo)
			fd = prof(d)
		}
	}
	t := (lo + hi) / 2
	th := t / xmax
	for _, xi := range x {
		k += math.Log1p(th * xi)
	}
	k /= float64(len(x))
	if !finite(k) {
		return 0, false
	}
	return k, true
}
