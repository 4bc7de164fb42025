package factor

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/afin-bench/afin/posterior"
	"gonum.org/v1/gonum/mat"
)

// ErrNotConjugate is returned by ExactPosterior for a task whose posterior
// has no closed form here.
var ErrNotConjugate = errors.New("task is not conjugate: the exact posterior needs a diag_gaussian or fullrank_gaussian prior and only gaussian and lin_gaussian factors")

// IsConjugate reports whether t's posterior is Gaussian in closed form: a
// Gaussian prior (diagonal or full) with only gaussian and lin_gaussian
// likelihood factors.
func IsConjugate(t *Task) bool {
	if t == nil {
		return false
	}
	switch t.Prior.(type) {
	case *DiagGaussian, *FullRankGaussian:
	default:
		return false
	}
	for _, f := range t.Factors {
		switch f.(type) {
		case *Gaussian, *LinGaussian:
		default:
			return false
		}
	}
	return true
}

// ExactPosterior returns the Gaussian posterior of a conjugate task: mean
// and row-major covariance. It works in precision form, adding each
// factor's natural parameters to the prior's,
//
//	Λ_post = Λ_0 + Σ_lin x xᵀ/σ² + Σ_vec I/σ²,  h = Λ_0 μ + Σ_lin x y/σ² + Σ_vec y/σ²,
//
// then solves with one Cholesky factorisation: mean = Λ_post⁻¹ h, cov =
// Λ_post⁻¹. The task must be valid (see Validate).
func ExactPosterior(t *Task) (mean []float64, cov []float64, err error) {
	if !IsConjugate(t) {
		return nil, nil, ErrNotConjugate
	}
	d := t.D
	prec := mat.NewSymDense(d, nil)
	h := make([]float64, d)
	switch p := t.Prior.(type) {
	case *DiagGaussian:
		for i, s := range p.Scale {
			prec.SetSym(i, i, 1/(s*s))
			h[i] = p.Loc[i] / (s * s)
		}
	case *FullRankGaussian:
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				prec.SetSym(i, j, 0.5*(p.Precision[i*d+j]+p.Precision[j*d+i]))
			}
		}
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				h[i] += prec.At(i, j) * p.Loc[j]
			}
		}
	}
	for _, f := range t.Factors {
		switch f := f.(type) {
		case *Gaussian:
			w := 1 / (f.Sigma * f.Sigma)
			for i, y := range f.Y {
				prec.SetSym(i, i, prec.At(i, i)+w)
				h[i] += w * y
			}
		case *LinGaussian:
			w := 1 / (f.Sigma * f.Sigma)
			prec.SymRankOne(prec, w, mat.NewVecDense(d, f.X))
			for i, x := range f.X {
				h[i] += w * f.Y * x
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		return nil, nil, fmt.Errorf("exact posterior: posterior precision is not numerically positive definite")
	}
	var m mat.VecDense
	if err := ch.SolveVecTo(&m, mat.NewVecDense(d, h)); err != nil {
		return nil, nil, fmt.Errorf("exact posterior: %w", err)
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return nil, nil, fmt.Errorf("exact posterior: %w", err)
	}
	mean = make([]float64, d)
	cov = make([]float64, d*d)
	for i := 0; i < d; i++ {
		mean[i] = m.AtVec(i)
		for j := 0; j < d; j++ {
			cov[i*d+j] = inv.At(i, j)
		}
	}
	return mean, cov, nil
}

// GaussianDraws returns s draws (row-major s×d) from N(mean, cov), cov
// row-major d×d symmetric positive definite, as mean + Lε with cov = LLᵀ.
func GaussianDraws(rng *rand.Rand, mean, cov []float64, s int) ([]float64, error) {
	d := len(mean)
	if len(cov) != d*d {
		return nil, fmt.Errorf("gaussian draws: covariance has %d entries, want %d", len(cov), d*d)
	}
	l, ok := posterior.Cholesky(cov, d, 0)
	if !ok {
		return nil, errors.New("gaussian draws: covariance is not positive definite")
	}
	return (&posterior.Gaussian{Mean: mean, L: l}).Sample(rng, s), nil
}
