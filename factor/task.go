package factor

// Task is one inference problem: a latent z ∈ R^D with a prior and N
// likelihood factors. Build tasks with the constructors or by parsing task
// JSON (which validates); methods assume a valid task.
type Task struct {
	Name    string
	D       int
	Prior   Prior
	Factors []Likelihood
	TrueZ   []float64 // optional: the z a simulated task was drawn with
}

// N is the number of likelihood factors.
func (t *Task) N() int { return len(t.Factors) }

// LogDensity is the unnormalised log posterior log p̃(z): the sum of every
// factor's log kernel (constants in z dropped). It allocates nothing for
// the built-in families.
func (t *Task) LogDensity(z []float64) float64 {
	lp := logKernelOf(t.Prior, t.D, z)
	for _, f := range t.Factors {
		lp += logKernelOf(f, t.D, z)
	}
	return lp
}

// logKernelOf evaluates one factor's log kernel without its gradient when
// the family offers that, and through LogKernelGrad with a scratch
// gradient otherwise (a Prior or Likelihood implemented elsewhere).
func logKernelOf(f interface {
	LogKernelGrad(z, grad []float64) float64
}, d int, z []float64) float64 {
	if k, ok := f.(kerneler); ok {
		return k.logKernel(z)
	}
	return f.LogKernelGrad(z, make([]float64, d))
}

// LogDensityGrad returns log p̃(z) and writes its gradient into grad
// (overwriting it). It makes one pass over the factors and allocates
// nothing.
func (t *Task) LogDensityGrad(z, grad []float64) float64 {
	for i := range grad[:t.D] {
		grad[i] = 0
	}
	lp := t.Prior.LogKernelGrad(z, grad)
	for _, f := range t.Factors {
		lp += f.LogKernelGrad(z, grad)
	}
	return lp
}

// LogNormalizer is the sum of every factor's z-independent constant, so
// that LogDensity(z) + LogNormalizer() = log p(z, y), the normalised log
// joint density.
func (t *Task) LogNormalizer() float64 {
	c := t.Prior.LogNormalizer()
	for _, f := range t.Factors {
		c += f.LogNormalizer()
	}
	return c
}

// LogJoint is the normalised log joint density log p(z) + Σ log p(y_n|z).
func (t *Task) LogJoint(z []float64) float64 {
	return t.LogDensity(z) + t.LogNormalizer()
}
