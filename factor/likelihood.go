package factor

import "math"

// Likelihood is one likelihood factor p(y_n | z) of a task.
type Likelihood interface {
	// Family is the factor's JSON type name.
	Family() string
	// Covariate is the design row x_n, or nil for the vector gaussian
	// factor, which has none. Not a copy: do not modify.
	Covariate() []float64
	// LogProb is the normalised log density of the observation given z.
	LogProb(z []float64) float64
	// LogKernelGrad returns LogProb(z) − LogNormalizer() and adds its
	// gradient with respect to z into grad.
	LogKernelGrad(z, grad []float64) float64
	// LogNormalizer is the z-independent part of LogProb.
	LogNormalizer() float64
}

// Gaussian is the vector observation Y = z + Sigma·ε, ε ~ N(0, I_d).
type Gaussian struct {
	Y     []float64
	Sigma float64
}

// Family is "gaussian", the factor's JSON type.
func (f *Gaussian) Family() string { return GaussianFamily }

// Covariate is nil: the vector observation reads z directly, with no
// design row.
func (f *Gaussian) Covariate() []float64 { return nil }

// LogNormalizer is −d·(½log 2π + log σ), the Gaussian constant of the d
// observed coordinates.
func (f *Gaussian) LogNormalizer() float64 {
	return -float64(len(f.Y)) * (0.5*log2Pi + math.Log(f.Sigma))
}

// LogKernelGrad returns −‖y − z‖²/(2σ²) and adds its gradient (y − z)/σ²
// into grad.
func (f *Gaussian) LogKernelGrad(z, grad []float64) float64 {
	s2 := f.Sigma * f.Sigma
	var lp float64
	for i, y := range f.Y {
		r := y - z[i]
		lp -= 0.5 * r * r / s2
		grad[i] += r / s2
	}
	return lp
}

// LogProb is log N(y; z, σ²I) in nats.
func (f *Gaussian) LogProb(z []float64) float64 { return f.logKernel(z) + f.LogNormalizer() }

// LinGaussian is the scalar regression observation Y = xᵀz + Sigma·ε.
type LinGaussian struct {
	X     []float64
	Y     float64
	Sigma float64
}

// Family is "lin_gaussian", the factor's JSON type.
func (f *LinGaussian) Family() string { return LinGaussianFamily }

// Covariate is the design row x (not a copy).
func (f *LinGaussian) Covariate() []float64 { return f.X }

// LogNormalizer is −½log 2π − log σ.
func (f *LinGaussian) LogNormalizer() float64 { return -0.5*log2Pi - math.Log(f.Sigma) }

// LogKernelGrad returns −r²/(2σ²) for the residual r = y − xᵀz and adds
// its gradient (r/σ²)·x into grad.
func (f *LinGaussian) LogKernelGrad(z, grad []float64) float64 {
	s2 := f.Sigma * f.Sigma
	r := f.Y - dot(f.X, z)
	axpy(r/s2, f.X, grad)
	return -0.5 * r * r / s2
}

// LogProb is log N(y; xᵀz, σ²) in nats.
func (f *LinGaussian) LogProb(z []float64) float64 { return f.logKernel(z) + f.LogNormalizer() }

// BernoulliLogit is the binary observation Y ∈ {0,1} with
// P(Y=1) = sigmoid(xᵀz).
type BernoulliLogit struct {
	X []float64
	Y float64
}

// Family is "bernoulli_logit", the factor's JSON type.
func (f *BernoulliLogit) Family() string { return BernoulliLogitFamily }

// Covariate is the design row x (not a copy).
func (f *BernoulliLogit) Covariate() []float64 { return f.X }

// LogNormalizer is 0: the Bernoulli kernel y·η − log(1 + eᶯ) is already
// normalised.
func (f *BernoulliLogit) LogNormalizer() float64 { return 0 }

// LogKernelGrad returns y·η − softplus(η) for η = xᵀz, computed without
// overflow for large |η|, and adds its gradient (y − sigmoid(η))·x into
// grad.
func (f *BernoulliLogit) LogKernelGrad(z, grad []float64) float64 {
	eta := dot(f.X, z)
	axpy(f.Y-Sigmoid(eta), f.X, grad)
	return f.Y*eta - Softplus(eta)
}

// LogProb is log P(Y = y | z) in nats.
func (f *BernoulliLogit) LogProb(z []float64) float64 { return f.logKernel(z) + f.LogNormalizer() }

// BinomialLogit is Y successes out of Trials with success probability
// sigmoid(xᵀz).
type BinomialLogit struct {
	X      []float64
	Y      float64
	Trials int
}

// Family is "binomial_logit", the factor's JSON type.
func (f *BinomialLogit) Family() string { return BinomialLogitFamily }

// Covariate is the design row x (not a copy).
func (f *BinomialLogit) Covariate() []float64 { return f.X }

// LogNormalizer is log C(Trials, Y).
func (f *BinomialLogit) LogNormalizer() float64 {
	n := float64(f.Trials)
	a, _ := math.Lgamma(n + 1)
	b, _ := math.Lgamma(f.Y + 1)
	c, _ := math.Lgamma(n - f.Y + 1)
	return a - b - c
}

// LogKernelGrad returns y·η − n·softplus(η) for η = xᵀz and n = Trials,
// and adds its gradient (y − n·sigmoid(η))·x into grad. It stays finite
// for y at 0 or n whatever |η| (no log of a rounded probability).
func (f *BinomialLogit) LogKernelGrad(z, grad []float64) float64 {
	eta := dot(f.X, z)
	n := float64(f.Trials)
	axpy(f.Y-n*Sigmoid(eta), f.X, grad)
	return f.Y*eta - n*Softplus(eta)
}

// LogProb is log P(Y = y | z) in nats, binomial coefficient included.
func (f *BinomialLogit) LogProb(z []float64) float64 { return f.logKernel(z) + f.LogNormalizer() }

// LinStudentT is the robust regression observation Y = xᵀz + Sigma·t_DF.
type LinStudentT struct {
	X     []float64
	Y     float64
	Sigma float64
	DF    float64
}

// Family is "lin_student_t", the factor's JSON type.
func (f *LinStudentT) Family() string { return LinStudentTFamily }

// Covariate is the design row x (not a copy).
func (f *LinStudentT) Covariate() []float64 { return f.X }

// LogNormalizer is the Student-t constant log Γ((ν+1)/2) − log Γ(ν/2) −
// ½log(νπ) − log σ.
func (f *LinStudentT) LogNormalizer() float64 { return studentTLogNorm(f.DF, f.Sigma) }

// LogKernelGrad returns −(ν+1)/2·log(1 + r²/(νσ²)) for the residual
// r = y − xᵀz and adds its gradient (ν+1)r/(νσ² + r²)·x into grad.
func (f *LinStudentT) LogKernelGrad(z, grad []float64) float64 {
	r := f.Y - dot(f.X, z)
	q := f.DF * f.Sigma * f.Sigma
	axpy((f.DF+1)*r/(q+r*r), f.X, grad)
	return -0.5 * (f.DF + 1) * math.Log1p(r*r/q)
}

// LogProb is the log density of y under xᵀz + σ·t_ν, in nats.
func (f *LinStudentT) LogProb(z []float64) float64 { return f.logKernel(z) + f.LogNormalizer() }
