package posterior

import (
	"math"
	"math/rand/v2"
)

// gaussian is a test distribution N(mu, cov) in R^d with cov = L Lᵀ.
type gaussian struct {
	mu  []float64
	cov []float64 // row-major d×d
	l   []float64 // lower Cholesky factor, row-major
}

func newGaussian(mu, cov []float64) gaussian {
	d := len(mu)
	l := make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			s := cov[i*d+j]
			for k := range j {
				s -= l[i*d+k] * l[j*d+k]
			}
			if i == j {
				if s <= 0 {
					panic("test covariance not positive definite")
				}
				l[i*d+i] = math.Sqrt(s)
			} else {
				l[i*d+j] = s / l[j*d+j]
			}
		}
	}
	return gaussian{mu: mu, cov: cov, l: l}
}

func (g gaussian) dim() int { return len(g.mu) }

// sample draws n unweighted draws.
func (g gaussian) sample(rng *rand.Rand, n int) *Draws {
	d := g.dim()
	z := make([]float64, n*d)
	e := make([]float64, d)
	for s := range n {
		for i := range e {
			e[i] = rng.NormFloat64()
		}
		row := z[s*d : (s+1)*d]
		for i := range d {
			v := g.mu[i]
			for k := 0; k <= i; k++ {
				v += g.l[i*d+k] * e[k]
			}
			row[i] = v
		}
	}
	return &Draws{D: d, Z: z}
}

// logDensity is log N(z; mu, cov) up to the constant −½ log|2πΣ| (what an
// unnormalised target would give), plus offset.
func (g gaussian) logKernel(z []float64, offset float64) float64 {
	d := g.dim()
	// Solve L y = z − mu; the quadratic form is ‖y‖².
	y := make([]float64, d)
	var q float64
	for i := range d {
		v := z[i] - g.mu[i]
		for k := range i {
			v -= g.l[i*d+k] * y[k]
		}
		y[i] = v / g.l[i*d+i]
		q += y[i] * y[i]
	}
	return -0.5*q + offset
}

// logNormConst is −½ log|2πΣ|.
func (g gaussian) logNormConst() float64 {
	d := g.dim()
	s := -0.5 * float64(d) * math.Log(2*math.Pi)
	for i := range d {
		s -= math.Log(g.l[i*d+i])
	}
	return s
}

// diagCov builds a diagonal covariance from standard deviations.
func diagCov(sd ...float64) []float64 {
	d := len(sd)
	c := make([]float64, d*d)
	for i, s := range sd {
		c[i*d+i] = s * s
	}
	return c
}

// equicorr builds s²·((1−ρ)I + ρ11ᵀ).
func equicorr(d int, s, rho float64) []float64 {
	c := make([]float64, d*d)
	for i := range d {
		for j := range d {
			c[i*d+j] = s * s * rho
		}
		c[i*d+i] = s * s
	}
	return c
}

func zeros(d int) []float64 { return make([]float64, d) }

func filled(d int, v float64) []float64 {
	x := make([]float64, d)
	for i := range x {
		x[i] = v
	}
	return x
}
