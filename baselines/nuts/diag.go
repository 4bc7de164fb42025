package nuts

import (
	"math"

	"github.com/afin-bench/afin/posterior"
)

// Convergence holds the cross-chain diagnostics of posterior (Vehtari et
// al. 2021): per coordinate, and the worst case over coordinates.
type Convergence struct {
	ESSBulk, ESSTail, Rhat []float64 // per coordinate
	MinESSBulk             float64
	MinESSTail             float64
	MaxRhat                float64
}

// Diagnose computes bulk and tail ESS and rank-normalised split-R̂ for
// each coordinate of chains (each row-major draws×d, equal lengths). NaN
// entries (too few draws, constant chains) make the summaries NaN, so
// they cannot pass a convergence check by accident.
func Diagnose(chains [][]float64, d int) Convergence {
	c := Convergence{
		ESSBulk: make([]float64, d), ESSTail: make([]float64, d), Rhat: make([]float64, d),
		MinESSBulk: math.Inf(1), MinESSTail: math.Inf(1), MaxRhat: math.Inf(-1),
	}
	cols := make([][]float64, len(chains))
	for i := 0; i < d; i++ {
		for k, ch := range chains {
			n := len(ch) / d
			if cap(cols[k]) < n {
				cols[k] = make([]float64, n)
			}
			cols[k] = cols[k][:n]
			for s := 0; s < n; s++ {
				cols[k][s] = ch[s*d+i]
			}
		}
		c.ESSBulk[i] = posterior.ESSBulk(cols)
		c.ESSTail[i] = posterior.ESSTail(cols)
		c.Rhat[i] = posterior.SplitRhat(cols)
		c.MinESSBulk = nanMin(c.MinESSBulk, c.ESSBulk[i])
		c.MinESSTail = nanMin(c.MinESSTail, c.ESSTail[i])
		c.MaxRhat = nanMax(c.MaxRhat, c.Rhat[i])
	}
	return c
}

func nanMin(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}
