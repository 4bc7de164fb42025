package calibration

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// Band is a simultaneous confidence band for the ECDF of n independent
// Uniform(0, 1) values evaluated at the points Z: with probability Level
// (up to Monte Carlo error in its calibration) every count #{u ≤ Z[i]}
// lies in [Lower[i], Upper[i]].
type Band struct {
	N     int
	Level float64
	Z     []float64 // evaluation points i/K, i = 1..K−1
	// Lower and Upper bound the counts at Z.
	Lower, Upper []int
	// Gamma is the adjusted pointwise level of Säilynoja et al. (2022).
	Gamma float64
}

// minSims is the least number of simulated uniform samples that
// calibrate γ; more are used for levels near 1, so that about 200
// simulated minima fall below γ.
const minSims = 4000

type bandKey struct {
	n, k  int
	level float64
}

var (
	bandMu    sync.Mutex
	bandCache = map[bandKey]*Band{}
)

// NewBand returns the band at level for n values on the grid i/k, computed by
// the simulation method of Säilynoja et al. (2022, §2.2): for each of
// bandSims uniform samples, the smallest over grid points of the two-sided
// binomial tail probability of its ECDF count; γ is the 5% quantile of
// those minima (1 − level for 95%), and the band is the binomial γ/2 and 1 − γ/2 quantiles at
// each grid point. The simulation is seeded, so a band is reproducible,
// and cached per (n, k, level).
func NewBand(n, k int, level float64) (*Band, error) {
	if n < 1 || k < 2 || !(level > 0 && level < 1) {
		return nil, fmt.Errorf("%w: band needs n ≥ 1, k ≥ 2, level in (0, 1), got n=%d k=%d level=%v", ErrInput, n, k, level)
	}
	bandMu.Lock()
	defer bandMu.Unlock()
	key := bandKey{n, k, level}
	if b, ok := bandCache[key]; ok {
		return b, nil
	}
	sims := max(minSims, int(200/(1-level)))
	z := make([]float64, k-1)
	cdf := make([][]float64, k-1)
	for i := range z {
		z[i] = float64(i+1) / float64(k)
		cdf[i] = binomialCDF(n, z[i])
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(k)))
	minima := make([]float64, sims)
	u := make([]float64, n)
	counts := make([]int, k-1)
	for s := range minima {
		for j := range u {
			u[j] = rng.Float64()
		}
		ecdfCounts(u, z, counts)
		minima[s] = minTail(cdf, counts)
	}
	slices.Sort(minima)
	gamma := minima[int(math.Floor((1-level)*float64(sims)))]
	b := &Band{N: n, Level: level, Z: z, Gamma: gamma, Lower: make([]int, k-1), Upper: make([]int, k-1)}
	for i := range z {
		b.Lower[i] = quantileOf(cdf[i], gamma/2)
		b.Upper[i] = quantileOf(cdf[i], 1-gamma/2)
	}
	bandCache[key] = b
	return b, nil
}

// Inside reports whether the ECDF of u stays within the band, and the
// first grid index where it leaves it (−1 when inside).
func (b *Band) Inside(u []float64) (bool, int) {
	counts := make([]int, len(b.Z))
	ecdfCounts(u, b.Z, counts)
	for i, c := range counts {
		if c < b.Lower[i] || c > b.Upper[i] {
			return false, i
		}
	}
	return true, -1
}

// ecdfCounts writes #{u ≤ z[i]} into counts (z increasing).
func ecdfCounts(u, z []float64, counts []int) {
	s := slices.Clone(u)
	slices.Sort(s)
	j := 0
	for i, zi := range z {
		for j < len(s) && s[j] <= zi {
			j++
		}
		counts[i] = j
	}
}

// minTail is the smallest two-sided tail probability
// 2·min(P(X ≤ c), P(X ≥ c)) of the counts under their binomial laws.
func minTail(cdf [][]float64, counts []int) float64 {
	m := 1.0
	for i, c := range counts {
		lo := cdf[i][c]
		hi := 1.0
		if c > 0 {
			hi = 1 - cdf[i][c-1]
		}
		m = min(m, 2*min(lo, hi))
	}
	return m
}

// binomialCDF returns P(X ≤ c), c = 0..n, for X ~ Binomial(n, p), summing
// the pmf computed in log space (exact to rounding for any n).
func binomialCDF(n int, p float64) []float64 {
	out := make([]float64, n+1)
	lp, lq := math.Log(p), math.Log1p(-p)
	lgN, _ := math.Lgamma(float64(n + 1))
	acc := 0.0
	for c := 0; c <= n; c++ {
		a, _ := math.Lgamma(float64(c + 1))
		b, _ := math.Lgamma(float64(n - c + 1))
		acc += math.Exp(lgN - a - b + float64(c)*lp + float64(n-c)*lq)
		out[c] = min(acc, 1)
	}
	return out
}

// quantileOf is the smallest c with P(X ≤ c) ≥ q.
func quantileOf(cdf []float64, q float64) int {
	c, _ := slices.BinarySearch(cdf, q)
	return min(c, len(cdf)-1)
}
