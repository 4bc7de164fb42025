package posterior

import (
	"math"
	"slices"

	"github.com/afin-bench/afin/internal/moments"
	"gonum.org/v1/gonum/dsp/fourier"
)

// MCMC convergence diagnostics of Vehtari, Gelman, Simpson, Carpenter and
// Bürkner, "Rank-normalization, folding, and localization: an improved R̂
// for assessing convergence of MCMC", Bayesian Analysis 16 (2021).
//
// Each function takes one scalar quantity as M chains of draws. Chains of
// unequal length are truncated to the shortest. Every chain is split in
// halves (the middle draw of an odd-length chain is dropped), so at least
// 4 draws per chain are needed; with fewer, or when the draws are constant
// or not finite, the result is NaN.

// SplitRhat is the rank-normalised split-R̂: the larger of the split-R̂ of
// the rank-normalised draws (bulk) and of the rank-normalised draws folded
// about their median (tails) — the paper's eq. (4)–(5) and §4.2.
func SplitRhat(chains [][]float64) float64 {
	sp := splitChains(chains)
	if sp == nil {
		return math.NaN()
	}
	bulk := rhatBasic(rankNormalize(sp))
	// The median (and ESSTail's quantiles) are over all draws, including
	// the middle draw of odd-length chains that the split drops.
	all := flatten(truncate(chains))
	slices.Sort(all)
	med := median7(all)
	folded := mapChains(sp, func(x float64) float64 { return math.Abs(x - med) })
	tail := rhatBasic(rankNormalize(folded))
	if math.IsNaN(bulk) || math.IsNaN(tail) {
		return math.NaN()
	}
	return math.Max(bulk, tail)
}

// ESSBulk is the bulk effective sample size: the ESS of the rank-normalised
// split chains.
func ESSBulk(chains [][]float64) float64 {
	sp := splitChains(chains)
	if sp == nil {
		return math.NaN()
	}
	return essBasic(rankNormalize(sp))
}

// ESSTail is the tail effective sample size: the smaller of the ESS of the
// indicators I(x ≤ q₀.₀₅) and I(x ≤ q₀.₉₅) on the split chains, the
// quantiles taken over all draws (R's default type-7 quantile).
func ESSTail(chains [][]float64) float64 {
	sp := splitChains(chains)
	if sp == nil {
		return math.NaN()
	}
	all := flatten(truncate(chains))
	slices.Sort(all)
	e := math.Inf(1)
	for _, p := range []float64{0.05, 0.95} {
		q := quantile7(all, p)
		ind := mapChains(sp, func(x float64) float64 {
			if x <= q {
				return 1
			}
			return 0
		})
		e = math.Min(e, essBasic(ind))
	}
	return e
}

// ESS is the plain (not rank-normalised) split-chain effective sample size
// of the draws — the ESS for estimating their mean.
func ESS(chains [][]float64) float64 {
	sp := splitChains(chains)
	if sp == nil {
		return math.NaN()
	}
	return essBasic(sp)
}

// splitChains truncates to the shortest chain and splits each in halves.
// It returns nil when a half would have fewer than 2 draws or a draw is
// not finite.
func splitChains(chains [][]float64) [][]float64 {
	if len(chains) == 0 {
		return nil
	}
	n := len(chains[0])
	for _, c := range chains {
		n = min(n, len(c))
	}
	half := n / 2
	if half < 2 {
		return nil
	}
	out := make([][]float64, 0, 2*len(chains))
	for _, c := range chains {
		if !allFinite(c[:n]) {
			return nil
		}
		out = append(out, c[:half], c[n-half:n])
	}
	return out
}

func mapChains(chains [][]float64, f func(float64) float64) [][]float64 {
	out := make([][]float64, len(chains))
	for m, c := range chains {
		o := make([]float64, len(c))
		for i, x := range c {
			o[i] = f(x)
		}
		out[m] = o
	}
	return out
}

func flatten(chains [][]float64) []float64 {
	var all []float64
	for _, c := range chains {
		all = append(all, c...)
	}
	return all
}

// truncate cuts every chain to the length of the shortest.
func truncate(chains [][]float64) [][]float64 {
	n := len(chains[0])
	for _, c := range chains {
		n = min(n, len(c))
	}
	out := make([][]float64, len(chains))
	for m, c := range chains {
		out[m] = c[:n]
	}
	return out
}

// quantile7 is R's type-7 quantile of sorted x, computed as R's
// quantile.default does it — index 1 + (n−1)p, then (1−h)·x_lo + h·x_hi —
// so that a draw lying exactly on the quantile compares the same way as
// in R posterior's tail ESS.
func quantile7(sorted []float64, p float64) float64 {
	n := len(sorted)
	index := 1 + float64(n-1)*p
	lo := math.Floor(index)
	q := sorted[int(lo)-1]
	if index > lo {
		hi := sorted[int(lo)]
		if hi != q {
			h := index - lo
			q = (1-h)*q + h*hi
		}
	}
	return q
}

// median7 is R's median of sorted x: the middle draw, or the mean of the
// two middle draws computed as (a+b)/2. That rounds like R's mean (the
// halving is exact), whereas the type-7 form a + ½(b−a) can differ in the
// last bit, and folding about the median turns such a bit into a broken
// tie between |a−med| and |b−med| and so into a different tail R̂.
func median7(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// rankNormalize replaces every draw by Φ⁻¹((r − 3/8)/(S + 1/4)), where r is
// its rank among all S draws of all chains (ties get their average rank) —
// Blom's normal scores, the paper's eq. (14).
func rankNormalize(chains [][]float64) [][]float64 {
	type item struct {
		v    float64
		m, i int
	}
	var items []item
	for m, c := range chains {
		for i, v := range c {
			items = append(items, item{v, m, i})
		}
	}
	slices.SortFunc(items, func(a, b item) int { return cmpFloat(a.v, b.v) })
	s := float64(len(items))
	out := make([][]float64, len(chains))
	for m, c := range chains {
		out[m] = make([]float64, len(c))
	}
	for lo := 0; lo < len(items); {
		hi := lo + 1
		for hi < len(items) && items[hi].v == items[lo].v {
			hi++
		}
		// Ranks lo+1..hi (1-based) share their average.
		r := float64(lo+1+hi) / 2
		z := math.Sqrt2 * math.Erfinv(2*(r-0.375)/(s+0.25)-1)
		for _, it := range items[lo:hi] {
			out[it.m][it.i] = z
		}
		lo = hi
	}
	return out
}

// rhatBasic is the split-R̂ of equal-length chains (the paper's eq. 3–4):
// √(var̂⁺/W) with var̂⁺ = (n−1)/n·W + B/n.
func rhatBasic(chains [][]float64) float64 {
	m := len(chains)
	n := len(chains[0])
	means := make([]float64, m)
	var w float64
	for j, c := range chains {
		mu, v := moments.MeanVar(c, 1)
		means[j] = mu
		w += v
	}
	w /= float64(m)
	_, bOverN := moments.MeanVar(means, 1) // B/n is the variance of the chain means
	if !(w > 0) {
		return math.NaN()
	}
	varPlus := float64(n-1)/float64(n)*w + bOverN
	return math.Sqrt(varPlus / w)
}

// essBasic is the multi-chain ESS of equal-length chains (the paper's
// §3.2): autocorrelations ρ̂_t = 1 − (W − mean_m γ̂_{m,t})/var̂⁺ combine the
// within-chain autocovariances γ̂ with the between-chain variance; their
// sum is truncated by Geyer's initial positive sequence (pairs P_k =
// ρ̂_{2k} + ρ̂_{2k+1}, k < K, up to the first non-positive pair K), made
// monotone (Geyer's initial monotone sequence), and τ̂ = −1 + 2·Σ_{k<K} P_k
// + ρ̂_{2K}, where the last term, the correction of Stan and of the R
// package posterior that reduces variance for antithetic chains, is kept
// when positive or when pair K itself was non-negative. τ̂ is bounded below
// by 1/log₁₀(MN), capping the ESS at MN·log₁₀(MN). The small-sample rules
// (NaN below 3 draws per split chain, τ̂ = 2 when no lag pair fits) are
// posterior 1.4's, checked against it on chains of 4 to 12 draws.
func essBasic(chains [][]float64) float64 {
	m := len(chains)
	n := len(chains[0])
	if n < 3 {
		return math.NaN()
	}
	acov := make([][]float64, m)
	means := make([]float64, m)
	for j, c := range chains {
		acov[j], means[j] = autocov(c)
	}
	var w float64 // within-chain variance (unbiased)
	for j := range m {
		w += acov[j][0]
	}
	w = w / float64(m) * float64(n) / float64(n-1)
	varPlus := w * float64(n-1) / float64(n)
	if m > 1 {
		_, v := moments.MeanVar(means, 1)
		varPlus += v
	}
	if !(varPlus > 0) || math.IsNaN(w) {
		return math.NaN()
	}
	rho := func(t int) float64 {
		var g float64
		for j := range m {
			g += acov[j][t]
		}
		return 1 - (w-g/float64(m))/varPlus
	}

	// Initial positive sequence over pairs of lags (2k, 2k+1): pairs are
	// added while the previous one is positive; the last pair computed
	// (index K, at lag 2K) is not summed, only its even lag (see below).
	// Lags stop a few short of n, where the autocovariance rests on too
	// few products to mean anything.
	// ρ̂₀ is 1 by definition (the formula would give 1 − W/(n·var̂⁺)).
	pairs := []float64{1 + rho(1)}
	lastEven := 1.0
	for t := 0; t < n-5 && pairs[len(pairs)-1] > 0; {
		t += 2
		lastEven = rho(t)
		pairs = append(pairs, lastEven+rho(t+1))
	}
	K := len(pairs) - 1
	// Initial monotone sequence over the summed pairs.
	for k := 1; k < K; k++ {
		pairs[k] = math.Min(pairs[k], pairs[k-1])
	}
	tau := -1.0
	for _, p := range pairs[:K] {
		tau += 2 * p
	}
	switch {
	case K == 0:
		// No lag pair could be examined (split chains of ≤ 5 draws).
		// posterior sums ρ̂ over lags 1:max_t with max_t = 0, which R reads
		// as c(1, 0): ρ̂₀ = 1 is summed once, so τ̂ = −1 + 2·1 + ρ̂₀ = 2 and
		// the ESS is MN/2. Matching that keeps afin's numbers comparable.
		tau = 2
	case lastEven > 0 || pairs[K] >= 0:
		// posterior keeps the last pair's even lag when it is positive,
		// and also, whatever its sign, when the pair itself was kept
		// (pair ≥ 0: the loop stopped at the lag limit, not on the sign).
		tau += lastEven
	}
	total := float64(m * n)
	tau = math.Max(tau, 1/math.Log10(total))
	return total / tau
}

// autocov returns the biased (1/n) autocovariance of x at lags 0..n−1,
// computed through an FFT of the zero-padded centred series (O(n log n), so
// reference chains of 10⁶ draws are cheap), and the mean of x.
func autocov(x []float64) ([]float64, float64) {
	n := len(x)
	var mu float64
	for _, v := range x {
		mu += v
	}
	mu /= float64(n)
	size := 1
	for size < 2*n {
		size *= 2
	}
	buf := make([]float64, size)
	for i, v := range x {
		buf[i] = v - mu
	}
	fft := fourier.NewFFT(size)
	coef := fft.Coefficients(nil, buf)
	for i, c := range coef {
		coef[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	seq := fft.Sequence(nil, coef)
	out := make([]float64, n)
	// Sequence is unnormalised (×size); the biased estimator divides by n.
	scale := 1 / (float64(size) * float64(n))
	for t := range n {
		out[t] = seq[t] * scale
	}
	return out, mu
}
