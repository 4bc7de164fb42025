package factor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/afin-bench/afin/posterior"
)

// Prior is the prior factor p(z) of a task.
type Prior interface {
	// Family is the prior's JSON type name.
	Family() string
	// Dim is the latent dimension d.
	Dim() int
	// Location is the prior location μ (not a copy: do not modify).
	Location() []float64
	// LogProb is the normalised log density at z.
	LogProb(z []float64) float64
	// LogKernelGrad returns LogProb(z) − LogNormalizer() and adds its
	// gradient with respect to z into grad.
	LogKernelGrad(z, grad []float64) float64
	// LogNormalizer is the z-independent part of LogProb.
	LogNormalizer() float64
	// Rand writes one draw from the prior into z.
	Rand(rng *rand.Rand, z []float64)
}

// DiagGaussian is the prior N(Loc, diag(Scale²)).
type DiagGaussian struct {
	Loc, Scale []float64
}

// Family is "diag_gaussian", the prior's JSON type.
func (p *DiagGaussian) Family() string { return DiagGaussianFamily }

// Dim is d, the length of Loc.
func (p *DiagGaussian) Dim() int { return len(p.Loc) }

// Location is the mean Loc (not a copy).
func (p *DiagGaussian) Location() []float64 { return p.Loc }

// LogNormalizer is −(d/2)·log 2π − Σ log sᵢ.
func (p *DiagGaussian) LogNormalizer() float64 {
	c := -0.5 * float64(len(p.Loc)) * log2Pi
	for _, s := range p.Scale {
		c -= math.Log(s)
	}
	return c
}

// LogKernelGrad returns −½Σ((zᵢ−μᵢ)/sᵢ)² and adds its gradient
// −(zᵢ−μᵢ)/sᵢ² into grad.
func (p *DiagGaussian) LogKernelGrad(z, grad []float64) float64 {
	var lp float64
	for i, m := range p.Loc {
		s := p.Scale[i]
		r := (z[i] - m) / s
		lp -= 0.5 * r * r
		grad[i] -= r / s
	}
	return lp
}

// LogProb is log N(z; Loc, diag(Scale²)) in nats.
func (p *DiagGaussian) LogProb(z []float64) float64 { return p.logKernel(z) + p.LogNormalizer() }

// Rand writes zᵢ = μᵢ + sᵢεᵢ, εᵢ standard normal, into z.
func (p *DiagGaussian) Rand(rng *rand.Rand, z []float64) {
	for i, m := range p.Loc {
		z[i] = m + p.Scale[i]*rng.NormFloat64()
	}
}

// DiagLaplace is the prior with independent Laplace(Loc_i, Scale_i)
// coordinates, density ∏ exp(−|z_i−μ_i|/b_i)/(2b_i).
type DiagLaplace struct {
	Loc, Scale []float64
}

// Family is "diag_laplace", the prior's JSON type.
func (p *DiagLaplace) Family() string { return DiagLaplaceFamily }

// Dim is d, the length of Loc.
func (p *DiagLaplace) Dim() int { return len(p.Loc) }

// Location is the location (median and mode) Loc, not a copy.
func (p *DiagLaplace) Location() []float64 { return p.Loc }

// LogNormalizer is −Σ log(2bᵢ).
func (p *DiagLaplace) LogNormalizer() float64 {
	var c float64
	for _, b := range p.Scale {
		c -= math.Log(2 * b)
	}
	return c
}

// LogKernelGrad returns −Σ|zᵢ−μᵢ|/bᵢ and adds its (sub)gradient
// −sign(zᵢ−μᵢ)/bᵢ into grad, 0 at the kink.
func (p *DiagLaplace) LogKernelGrad(z, grad []float64) float64 {
	var lp float64
	for i, m := range p.Loc {
		b := p.Scale[i]
		r := z[i] - m
		lp -= math.Abs(r) / b
		// The subgradient at r = 0 is taken as 0, the midpoint of [−1/b, 1/b].
		switch {
		case r > 0:
			grad[i] -= 1 / b
		case r < 0:
			grad[i] += 1 / b
		}
	}
	return lp
}

// LogProb is the log density ∏ exp(−|zᵢ−μᵢ|/bᵢ)/(2bᵢ), in nats.
func (p *DiagLaplace) LogProb(z []float64) float64 { return p.logKernel(z) + p.LogNormalizer() }

// Rand writes one draw into z (each coordinate μᵢ + bᵢ·(E₁ − E₂) with
// E₁, E₂ unit exponentials).
func (p *DiagLaplace) Rand(rng *rand.Rand, z []float64) {
	for i, m := range p.Loc {
		// Difference of two unit exponentials is a standard Laplace variate.
		z[i] = m + p.Scale[i]*(rng.ExpFloat64()-rng.ExpFloat64())
	}
}

// DiagStudentT is the prior with independent scaled Student-t coordinates,
// z_i = Loc_i + Scale_i·t_DF, with one degrees-of-freedom value per task.
type DiagStudentT struct {
	Loc, Scale []float64
	DF         float64
}

// Family is "diag_student_t", the prior's JSON type.
func (p *DiagStudentT) Family() string { return DiagStudentTFamily }

// Dim is d, the length of Loc.
func (p *DiagStudentT) Dim() int { return len(p.Loc) }

// Location is the location (median and mode) Loc, not a copy.
func (p *DiagStudentT) Location() []float64 { return p.Loc }

// LogNormalizer is Σᵢ [log Γ((ν+1)/2) − log Γ(ν/2) − ½log(νπ) − log sᵢ].
func (p *DiagStudentT) LogNormalizer() float64 {
	var c float64
	for _, s := range p.Scale {
		c += studentTLogNorm(p.DF, s)
	}
	return c
}

// LogKernelGrad returns −(ν+1)/2·Σ log(1 + rᵢ²/(νsᵢ²)) for rᵢ = zᵢ − μᵢ
// and adds its gradient −(ν+1)rᵢ/(νsᵢ² + rᵢ²) into grad.
func (p *DiagStudentT) LogKernelGrad(z, grad []float64) float64 { return p.eval(z, grad) }

// eval is the log kernel, and its gradient added into grad when grad is
// not nil: one loop for both, so logKernel and LogKernelGrad agree to the
// last bit.
func (p *DiagStudentT) eval(z, grad []float64) float64 {
	nu := p.DF
	var lp float64
	for i, m := range p.Loc {
		s := p.Scale[i]
		r := z[i] - m
		q := nu * s * s
		lp -= 0.5 * (nu + 1) * math.Log1p(r*r/q)
		if grad != nil {
			grad[i] -= (nu + 1) * r / (q + r*r)
		}
	}
	return lp
}

// LogProb is the log density of independent μᵢ + sᵢ·t_ν coordinates, in
// nats.
func (p *DiagStudentT) LogProb(z []float64) float64 { return p.logKernel(z) + p.LogNormalizer() }

// Rand writes zᵢ = μᵢ + sᵢ·t_ν into z, t_ν drawn by StudentT.
func (p *DiagStudentT) Rand(rng *rand.Rand, z []float64) {
	for i, m := range p.Loc {
		z[i] = m + p.Scale[i]*StudentT(rng, p.DF)
	}
}

// FullRankGaussian is the prior N(Loc, Precision⁻¹) with a dense d×d
// precision stored row-major. Build it with NewFullRankGaussian, which
// checks that the precision is symmetric positive definite and keeps its
// Cholesky factor for sampling and the normaliser.
type FullRankGaussian struct {
	Loc       []float64
	Precision []float64 // d×d, row-major, symmetric positive definite

	chol    []float64 // lower Cholesky factor L of Precision, row-major
	logNorm float64
}

// NewFullRankGaussian returns the prior N(loc, precision⁻¹). precision is
// row-major d×d; it must obey the task's precision rule (factorPrecision:
// symmetric to 1e-9 relative, positive definite, entries within
// MaxPrecision); a violation is a *ValidationError at path "precision".
func NewFullRankGaussian(loc, precision []float64) (*FullRankGaussian, error) {
	d := len(loc)
	if len(precision) != d*d {
		return nil, fmt.Errorf("precision has %d entries, want d×d = %d", len(precision), d*d)
	}
	chol, err := factorPrecision("precision", precision, d)
	if err != nil {
		return nil, err
	}
	return fullRankFromCholesky(slices.Clone(loc), slices.Clone(precision), chol), nil
}

// fullRankFromCholesky assembles the prior from an already factorised
// precision, skipping NewFullRankGaussian's checks and gonum allocations.
func fullRankFromCholesky(loc, prec, chol []float64) *FullRankGaussian {
	d := len(loc)
	var logDet float64
	for i := 0; i < d; i++ {
		logDet += 2 * math.Log(chol[i*d+i])
	}
	return &FullRankGaussian{
		Loc:       loc,
		Precision: prec,
		chol:      chol,
		logNorm:   0.5*logDet - 0.5*float64(d)*log2Pi,
	}
}

// Family is "fullrank_gaussian", the prior's JSON type.
func (p *FullRankGaussian) Family() string { return FullRankGaussianFamily }

// Dim is d, the length of Loc.
func (p *FullRankGaussian) Dim() int { return len(p.Loc) }

// Location is the mean Loc (not a copy).
func (p *FullRankGaussian) Location() []float64 { return p.Loc }

// LogNormalizer is ½log det Λ − (d/2)·log 2π, from the Cholesky factor
// kept at construction.
func (p *FullRankGaussian) LogNormalizer() float64 { return p.logNorm }

// CholeskyLower returns the lower Cholesky factor L of the precision
// (Λ = L Lᵀ), row-major. Do not modify it.
func (p *FullRankGaussian) CholeskyLower() []float64 { return p.chol }

// LogKernelGrad returns −½(z−μ)ᵀΛ(z−μ) and adds its gradient −Λ(z−μ) into
// grad.
func (p *FullRankGaussian) LogKernelGrad(z, grad []float64) float64 { return p.quadForm(z, grad) }

// quadForm returns −½(z−μ)ᵀΛ(z−μ), subtracting Λ(z−μ) from grad unless
// grad is nil; one body keeps the value of both paths bitwise equal.
func (p *FullRankGaussian) quadForm(z, grad []float64) float64 {
	d := len(p.Loc)
	var lp float64
	for i := 0; i < d; i++ {
		row := p.Precision[i*d : (i+1)*d]
		var g float64
		for j, v := range row {
			g += v * (z[j] - p.Loc[j])
		}
		lp -= 0.5 * (z[i] - p.Loc[i]) * g
		if grad != nil {
			grad[i] -= g
		}
	}
	return lp
}

// LogProb is log N(z; Loc, Λ⁻¹) in nats.
func (p *FullRankGaussian) LogProb(z []float64) float64 { return p.logKernel(z) + p.LogNormalizer() }

// Rand draws z = μ + L⁻ᵀε, whose covariance is (L Lᵀ)⁻¹ = Λ⁻¹.
func (p *FullRankGaussian) Rand(rng *rand.Rand, z []float64) {
	d := len(p.Loc)
	for i := range z[:d] {
		z[i] = rng.NormFloat64()
	}
	posterior.SolveLowerT(p.chol, z[:d], z)
	for i, m := range p.Loc {
		z[i] += m
	}
}

// StudentT draws a standard Student-t variate with df degrees of freedom as
// ε/√(χ²_ν/ν).
func StudentT(rng *rand.Rand, df float64) float64 {
	return rng.NormFloat64() / math.Sqrt(ChiSquare(rng, df)/df)
}

// ChiSquare draws a χ² variate with df (real, > 0) degrees of freedom, as
// 2·Gamma(df/2, 1).
func ChiSquare(rng *rand.Rand, df float64) float64 {
	return 2 * Gamma(rng, df/2)
}

// Gamma draws a Gamma(shape, 1) variate by Marsaglia and Tsang's method,
// with the usual U^{1/a} boost for shape < 1.
func Gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		return Gamma(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v
		}
		if math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
