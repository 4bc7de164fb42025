package posterior

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Pareto-smoothed importance sampling (Vehtari, Simpson, Gelman, Yao and
// Gabry, "Pareto smoothed importance sampling", JMLR 2024), with the
// conventions of the R package loo (the reference implementation the
// paper's k̂ values are meant to be comparable with):
//
//   - the tail holds the M = ⌈min(0.2·S, 3·√S)⌉ largest ratios (loo with
//     r_eff = 1, which is right for independent proposal draws);
//   - the generalised Pareto distribution is fitted to the exceedances over
//     the (M+1)-th largest ratio with the profile-likelihood/empirical-Bayes
//     estimator of Zhang and Stephens (Technometrics 2009, §4), followed by
//     the weakly informative prior that shrinks k̂ towards 0.5 with the
//     weight of 10 pseudo-observations;
//   - fewer than 5 tail draws, a constant tail, or a failed fit give
//     k̂ = +Inf ("cannot be trusted"), as loo does.

// minTail is the smallest tail for which a GPD fit is attempted.
const minTail = 5

// MinParetoKDraws is the fewest draws whose PSIS tail (PSISTailLen) holds
// the minTail ratios a Pareto fit needs: with fewer, k̂ is +Inf ("cannot
// be trusted") whatever the draws. Methods that report k̂ on their
// proposals refuse budgets below it.
const MinParetoKDraws = 21

// PSISTailLen is the PSIS tail length ⌈min(0.2·S, 3·√S)⌉ for S draws.
func PSISTailLen(s int) int {
	fs := float64(s)
	return int(math.Ceil(math.Min(0.2*fs, 3*math.Sqrt(fs))))
}

// ParetoK returns the PSIS Pareto k̂ of the log importance ratios logW.
// Entries equal to −Inf are zero ratios: they count towards S but can never
// be in the tail. It returns +Inf when no reliable fit exists (too few
// draws, constant tail, failed fit) and NaN when logW holds NaN or +Inf or
// no finite entry at all.
func ParetoK(logW []float64) float64 {
	k, _, err := paretoTail(logW, false)
	if err != nil {
		return math.NaN()
	}
	return k
}

// PSIS returns the Pareto-smoothed, normalised log weights (log-sum-exp 0)
// of the log importance ratios logW, and k̂. The M largest ratios are
// replaced by the expected order statistics of the fitted GPD and all
// weights are truncated at the largest raw ratio, as in loo. When k̂ is not
// finite the tail is left unsmoothed. The input is not modified.
func PSIS(logW []float64) (logWeights []float64, k float64, err error) {
	k, lw, err := paretoTail(logW, true)
	if err != nil {
		return nil, k, err
	}
	m := math.Inf(-1)
	for _, v := range lw {
		m = math.Max(m, v)
	}
	var sum float64
	for _, v := range lw {
		sum += math.Exp(v - m)
	}
	lse := m + math.Log(sum)
	for i := range lw {
		lw[i] -= lse
	}
	return lw, k, nil
}

// paretoTail fits the tail of logW; when smooth is set it also returns the
// smoothed, truncated log ratios (shifted so the largest raw one is 0).
func paretoTail(logW []float64, smooth bool) (float64, []float64, error) {
	s := len(logW)
	if s == 0 {
		return math.NaN(), nil, errors.New("psis: no log ratios")
	}
	maxLW := math.Inf(-1)
	for i, v := range logW {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return math.NaN(), nil, fmt.Errorf("psis: log ratio %d is %v", i, v)
		}
		maxLW = math.Max(maxLW, v)
	}
	if math.IsInf(maxLW, -1) {
		return math.NaN(), nil, errors.New("psis: all ratios are zero")
	}
	m := PSISTailLen(s)

	// Shifting by the maximum changes nothing mathematically (the fit is
	// scale-equivariant) but keeps exp() in range, and matches loo's
	// rounding.
	var lw []float64
	if smooth {
		lw = make([]float64, s)
		for i, v := range logW {
			lw[i] = v - maxLW
		}
	}
	if m < minTail {
		return math.Inf(1), lw, nil
	}

	var tail []float64 // ascending, length m
	var cutoff float64
	var order []int
	if smooth {
		// Only the tail and the cutoff need ordering: select the cutoff
		// value, then sort the indices at or above it. Ties keep their
		// input order (a stable sort), as R's sort.int does, so the
		// smoothed values land on the same draws as in loo.
		_, cutVal := largest(logW, m, maxLW)
		for i, v := range lw {
			if v >= cutVal {
				order = append(order, i)
			}
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(lw[a], lw[b]) })
		order = order[len(order)-m-1:]
		tail = make([]float64, m)
		for j := range m {
			tail[j] = lw[order[1+j]]
		}
		cutoff = lw[order[0]]
	} else {
		tail, cutoff = largest(logW, m, maxLW)
	}
	if math.Abs(tail[m-1]-tail[0]) < epsilon/100 {
		return math.Inf(1), lw, nil
	}
	expCut := math.Exp(cutoff)
	x := make([]float64, m)
	for j, v := range tail {
		x[j] = math.Exp(v) - expCut
	}
	k, sigma := GPDFit(x)
	if smooth {
		if !math.IsInf(k, 0) && sigma > 0 {
			for j := range m {
				p := (float64(j) + 0.5) / float64(m)
				q := sigma*math.Expm1(-k*math.Log1p(-p))/k + expCut
				lw[order[1+j]] = math.Log(q)
			}
		}
		for i, v := range lw {
			if v > 0 {
				lw[i] = 0
			}
		}
	}
	return k, lw, nil
}

// epsilon is the float64 machine epsilon (R's .Machine$double.eps).
const epsilon = 2.220446049250313e-16

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// largest returns the m largest values of v (shifted by −shift), ascending,
// and the (m+1)-th largest (the cutoff). It selects before sorting so that
// only the tail, not all S values, is sorted.
func largest(v []float64, m int, shift float64) ([]float64, float64) {
	buf := make([]float64, len(v))
	for i, x := range v {
		buf[i] = x - shift
	}
	pos := len(buf) - m - 1
	selectKth(buf, pos)
	tail := buf[pos+1:]
	slices.Sort(tail)
	return tail, buf[pos]
}

// selectKth partially orders a so that a[k] holds the value it would have
// if a were sorted, with nothing larger before it and nothing smaller after
// it (Hoare's quickselect with a median-of-three pivot and three-way
// partitioning, so runs of equal values, e.g. −Inf, cost linear time).
func selectKth(a []float64, k int) {
	lo, hi := 0, len(a)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		p := median3(a[lo], a[mid], a[hi])
		// Dutch-flag partition: [lo,lt) < p, [lt,i) == p, (gt,hi] > p.
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch {
			case a[i] < p:
				a[lt], a[i] = a[i], a[lt]
				lt++
				i++
			case a[i] > p:
				a[i], a[gt] = a[gt], a[i]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return
		}
	}
}

func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	if a > b {
		return a
	}
	return b
}

// gpdGridMin is the minimum number of grid points of the Zhang–Stephens
// quadrature, and gpdPrior the scale of their prior on θ (both as in their
// paper's recommended setting and in loo).
const (
	gpdGridMin = 30
	gpdPrior   = 3.0
	// The weakly informative prior adds gpdPseudoN pseudo-observations
	// with shape 0.5 (Vehtari et al. 2024, App. C).
	gpdPseudoN = 10.0
)

// GPDFit estimates the shape k and scale σ of a generalised Pareto
// distribution (location 0) from exceedances x sorted ascending, by the
// Zhang–Stephens (2009) posterior-mean estimator of θ = −k/σ, then shrinks
// k by the weakly informative prior k ← (n·k + 10·0.5)/(n + 10). σ comes
// from the unshrunk k, as in loo. A failed fit returns k = +Inf.
func GPDFit(x []float64) (k, sigma float64) {
	n := len(x)
	if n == 0 {
		return math.Inf(1), math.NaN()
	}
	fn := float64(n)
	grid := gpdGridMin + int(math.Floor(math.Sqrt(fn)))
	// Zhang & Stephens use the first sample quartile as a scale for the
	// grid of θ values; the index is R's 1-based floor(n/4 + 0.5).
	qi := int(math.Floor(fn/4+0.5)) - 1
	if qi < 0 {
		qi = 0
	}
	xstar := x[qi]
	xmax := x[n-1]

	theta := make([]float64, grid)
	logL := make([]float64, grid)
	maxL := math.Inf(-1)
	for j := range grid {
		th := 1/xmax + (1-math.Sqrt(float64(grid)/(float64(j)+0.5)))/gpdPrior/xstar
		theta[j] = th
		// Profile log-likelihood of θ, with k̂(θ) = mean log(1 − θx):
		// n·(log(−θ/k̂) − k̂ − 1) in the sign convention where positive k
		// means a heavy tail.
		var kk float64
		for _, xi := range x {
			kk += math.Log1p(-th * xi)
		}
		kk /= fn
		l := fn * (math.Log(-th/kk) - kk - 1)
		if math.IsNaN(l) {
			// θ = 0 exactly (0/0): the point carries no usable likelihood.
			l = math.Inf(-1)
		}
		logL[j] = l
		maxL = math.Max(maxL, l)
	}
	if math.IsInf(maxL, 0) {
		return math.Inf(1), math.NaN()
	}
	var wsum, thetaHat float64
	for j := range grid {
		w := math.Exp(logL[j] - maxL)
		wsum += w
		thetaHat += w * theta[j]
	}
	thetaHat /= wsum
	for _, xi := range x {
		k += math.Log1p(-thetaHat * xi)
	}
	k /= fn
	sigma = -k / thetaHat
	k = (fn*k + gpdPseudoN*0.5) / (fn + gpdPseudoN)
	if math.IsNaN(k) {
		return math.Inf(1), sigma
	}
	return k, sigma
}
