package nuts

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/afin-bench/afin/posterior"
)

// metric is the Euclidean metric of the kinetic energy ½ pᵀ M⁻¹ p. Only
// the inverse mass matrix M⁻¹ (the adapted posterior covariance estimate)
// is stored, plus, for the dense case, its Cholesky factor for drawing
// momenta p ~ N(0, M).
type metric struct {
	d     int
	dense bool
	inv   []float64 // diagonal: len d; dense: d×d row-major
	chol  []float64 // dense only: lower L with L Lᵀ = M⁻¹
}

func newMetric(d int, dense bool) *metric {
	m := &metric{d: d, dense: dense}
	if dense {
		m.inv = make([]float64, d*d)
		m.chol = make([]float64, d*d)
		for i := 0; i < d; i++ {
			m.inv[i*d+i] = 1
			m.chol[i*d+i] = 1
		}
	} else {
		m.inv = make([]float64, d)
		for i := range m.inv {
			m.inv[i] = 1
		}
	}
	return m
}

// setDense installs a new dense inverse metric and refactors it.
func (m *metric) setDense(cov []float64) error {
	d := m.d
	sym := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			sym[i*d+j] = 0.5 * (cov[i*d+j] + cov[j*d+i])
		}
	}
	l, ok := posterior.Cholesky(sym, d, 0)
	if !ok {
		return fmt.Errorf("adapted covariance is not positive definite")
	}
	copy(m.inv, sym)
	copy(m.chol, l)
	return nil
}

// velocity writes dτ/dp = M⁻¹ p into v.
func (m *metric) velocity(p, v []float64) {
	d := m.d
	if !m.dense {
		for i, s := range m.inv {
			v[i] = s * p[i]
		}
		return
	}
	for i := 0; i < d; i++ {
		row := m.inv[i*d : (i+1)*d]
		var s float64
		for j, a := range row {
			s += a * p[j]
		}
		v[i] = s
	}
}

// kinetic is ½ pᵀ M⁻¹ p.
func (m *metric) kinetic(p []float64) float64 {
	d := m.d
	var k float64
	if !m.dense {
		for i, s := range m.inv {
			k += s * p[i] * p[i]
		}
		return 0.5 * k
	}
	for i := 0; i < d; i++ {
		row := m.inv[i*d : (i+1)*d]
		var s float64
		for j, a := range row {
			s += a * p[j]
		}
		k += p[i] * s
	}
	return 0.5 * k
}

// sampleMomentum draws p ~ N(0, M). With M⁻¹ = L Lᵀ, p = L⁻ᵀ u has
// covariance L⁻ᵀ L⁻¹ = M.
func (m *metric) sampleMomentum(rng *rand.Rand, p []float64) {
	d := m.d
	if !m.dense {
		for i, s := range m.inv {
			p[i] = rng.NormFloat64() / math.Sqrt(s)
		}
		return
	}
	for i := range p[:d] {
		p[i] = rng.NormFloat64()
	}
	posterior.SolveLowerT(m.chol, p[:d], p)
}
