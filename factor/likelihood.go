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

func (f *Gaussian) Family() string       { return GaussianFamily }
func (f *Gaussian) Covariate() []float64 { return nil }

func (f *Gaussian) LogNormalizer() float64 {
	return -float64(len(f.Y)) * (0.5*log2Pi + math.Log(f.Sigma))
}

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

func (f *Gaussian) LogProb(z []float64) float64 { return f.logKernel(z) + f.LogNormalizer() }

// LinGaussian is the scalar regression observation Y = xᵀz + Sigma·ε.
type LinGaussian struct {
	X     []float64
	Y     float64
	Sigma float64
}

func (f *LinGaussian) Family() string         { return LinGaussianFamily }
func (f *LinGaussian) Covariate() []float64   { return f.X }
func (f *LinGaussian) LogNormalizer() float64 { return -0.5*log2Pi - math.Log(f.Sigma) }

func (f *LinGaussian) LogKernelGrad(z, grad []float64) float64 {
	s2 := f.Sigma * f.Sigma
	r := f.Y - dot(f.X, z)
	axpy(r/s2, f.X, grad)
	return -0.5 * r * r / s2
}

func (f *LinGaussian) LogProb(z []float64) float64 { return f.logKernel(z) + f.LogNormalizer() }

// BernoulliLogit is the binary observation Y ∈ {0,1} with
// P(Y=1) = sigmoid(xᵀz).
type BernoulliLogit struct {
	X []float64
	Y float64
}

func (f *BernoulliLogit) Family() string         { return BernoulliLogitFamily }
func (f *BernoulliLogit) Covariate() []float64   { return f.X }
func (f *BernoulliLogit) LogNormalizer() float64 { return 0 }

func (f *BernoulliLogit) LogKernelGrad(z, grad []float64) float64 {
	eta := dot(f.X, z)
	axpy(f.Y-Sigmoid(eta), f.X, grad)
	return f.Y*eta - Softplus(eta)
}

func (f *BernoulliLogit) LogProb(z []float64) float64 { return f.logKernel(z) + f.LogNormalizer() }

// BinomialLogit is Y successes out of Trials with success probability
// sigmoid(xᵀz).
type BinomialLogit struct {
	X      []float64
	Y      float64
	Trials int
}

func (f *BinomialLogit) Family() string       { return BinomialLogitFamily }
func (f *BinomialLogit) Covariate() []float64 { return f.X }

// LogNormalizer is log C(Trials, Y).
func (f *BinomialLogit) LogNormalizer() float64 {
	n := float64(f.Trials)
	a, _ := math.Lgamma(n + 1)
	b, _ := math.Lgamma(f.Y + 1)
	c, _ := math.Lgamma(n - f.Y + 1)
	return a - b - c
}

func (f *BinomialLogit) LogKernelGrad(z, grad []float64) float64 {
	eta := dot(f.X, z)
	n := float64(f.Trials)
	axpy(f.Y-n*Sigmoid(eta), f.X, grad)
	return f.Y*eta - n*Softplus(eta)
}

func (f *BinomialLogit) LogProb(z []float64) float64 { return f.logKernel(z) + f.LogNormalizer() }

// LinStudentT is the robust regression observation Y = xᵀz + Sigma·t_DF.
type LinStudentT struct {
	X     []float64
	Y     float64
	Sigma float64
	DF    float64
}

func (f *LinStudentT) Family() string         { return LinStudentTFamily }
func (f *LinStudentT) Covariate() []float64   { return f.X }
func (f *LinStudentT) LogNormalizer() float64 { return studentTLogNorm(f.DF, f.Sigma) }

func (f *LinStudentT) LogKernelGrad(z, grad []float64) float64 {
	r := f.Y - dot(f.X, z)
	q := f.DF * f.Sigma * f.Sigma
	axpy((f.DF+1)*r/(q+r*r), f.X, grad)
	return -0.5 * (f.DF + 1) * math.Log1p(r*r/q)
}

func (f *LinStudentT) LogProb(z []float64) float64 { return f.logKernel(z) + f.LogNormalizer() }
