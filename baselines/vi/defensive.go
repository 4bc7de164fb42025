package vi

import (
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/afin-bench/afin/posterior"
)

// studentNu is the degrees of freedom of the defensive component: heavy
// enough tails to cover any Gaussian-tailed posterior q underdisperses,
// with a finite variance so its draws stay near q's scale.
const studentNu = 4

// logProber is an approximation whose density can be evaluated anywhere
// (Gaussian, and the flows through their inverse).
type logProber interface {
	LogProb(z []float64) float64
}

// defensiveDraws returns the draws of q (dq, with log q values lq) joined
// by as many draws of a multivariate Student-t with q's mean and
// covariance, and for each draw the log density of the equal mixture of q
// and that t. A q without LogProb gets its own draws and log q back.
func defensiveDraws(q Approx, dq *posterior.Draws, lq, mean, cov []float64, rng *rand.Rand) (z, lr []float64, err error) {
	lpq, ok := q.(logProber)
	if !ok {
		return dq.Z, lq, nil
	}
	d := dq.D
	t, err := newStudent(mean, cov)
	if err != nil {
		return nil, nil, err
	}
	n := len(lq)
	z = make([]float64, 2*n*d)
	copy(z, dq.Z)
	lr = make([]float64, 2*n)
	for s := 0; s < n; s++ {
		row := z[(n+s)*d : (n+s+1)*d]
		lt := t.rand(rng, row)
		lr[n+s] = logMix(lpq.LogProb(row), lt)
		lr[s] = logMix(lq[s], t.logProb(z[s*d:(s+1)*d]))
	}
	return z, lr, nil
}

// logMix is log(½eᵃ + ½eᵇ).
func logMix(a, b float64) float64 {
	m := math.Max(a, b)
	if math.IsInf(m, -1) {
		return m
	}
	return m + math.Log(0.5*(math.Exp(a-m)+math.Exp(b-m)))
}

// student is the multivariate t_ν(μ, LLᵀ).
type student struct {
	mu, l []float64
	norm  float64 // log normaliser
	u     []float64
}

func newStudent(mean, cov []float64) (*student, error) {
	d := len(mean)
	var ch mat.Cholesky
	if !ch.Factorize(symFrom(cov, d)) {
		return nil, errors.New("q's covariance is not positive definite")
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	s := &student{mu: mean, l: make([]float64, d*d), u: make([]float64, d)}
	nu, df := float64(studentNu), float64(d)
	a, _ := math.Lgamma((nu + df) / 2)
	b, _ := math.Lgamma(nu / 2)
	s.norm = a - b - 0.5*df*math.Log(nu*math.Pi)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			s.l[i*d+j] = lt.At(i, j)
		}
		s.norm -= math.Log(s.l[i*d+i])
	}
	return s, nil
}

// rand writes μ + Lε·√(ν/χ²_ν) into z and returns its log density.
func (s *student) rand(rng *rand.Rand, z []float64) float64 {
	d := len(s.mu)
	var chi float64
	for range studentNu {
		e := rng.NormFloat64()
		chi += e * e
	}
	f := math.Sqrt(studentNu / chi)
	for i := range s.u {
		s.u[i] = rng.NormFloat64()
	}
	for i := 0; i < d; i++ {
		v := 0.0
		for j := 0; j <= i; j++ {
			v += s.l[i*d+j] * s.u[j]
		}
		z[i] = s.mu[i] + f*v
	}
	return s.logProb(z)
}

// logProb is log t_ν(z; μ, LLᵀ).
func (s *student) logProb(z []float64) float64 {
	d := len(s.mu)
	var q float64
	for i := 0; i < d; i++ { // forward substitution: u = L⁻¹(z − μ)
		v := z[i] - s.mu[i]
		for j := 0; j < i; j++ {
			v -= s.l[i*d+j] * s.u[j]
		}
		s.u[i] = v / s.l[i*d+i]
		q += s.u[i] * s.u[i]
	}
	nu := float64(studentNu)
	return s.norm - 0.5*(nu+float64(d))*math.Log1p(q/nu)
}
