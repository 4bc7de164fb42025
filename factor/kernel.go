package factor

import "math"

// kerneler is the gradient-free log kernel of the built-in families. Task
// LogDensity uses it so that evaluating log p̃ needs no gradient buffer:
// passing a buffer through the interface methods would move it to the
// heap on every call. Each method repeats the value arithmetic of its
// LogKernelGrad exactly, so the two agree to the last bit; LogProb is
// logKernel plus LogNormalizer.
type kerneler interface {
	logKernel(z []float64) float64
}

func (p *DiagGaussian) logKernel(z []float64) float64 {
	var lp float64
	for i, m := range p.Loc {
		r := (z[i] - m) / p.Scale[i]
		lp -= 0.5 * r * r
	}
	return lp
}

func (p *DiagLaplace) logKernel(z []float64) float64 {
	var lp float64
	for i, m := range p.Loc {
		lp -= math.Abs(z[i]-m) / p.Scale[i]
	}
	return lp
}

func (p *DiagStudentT) logKernel(z []float64) float64 { return p.eval(z, nil) }

func (p *FullRankGaussian) logKernel(z []float64) float64 { return p.quadForm(z, nil) }

func (f *Gaussian) logKernel(z []float64) float64 {
	s2 := f.Sigma * f.Sigma
	var lp float64
	for i, y := range f.Y {
		r := y - z[i]
		lp -= 0.5 * r * r / s2
	}
	return lp
}

func (f *LinGaussian) logKernel(z []float64) float64 {
	s2 := f.Sigma * f.Sigma
	r := f.Y - dot(f.X, z)
	return -0.5 * r * r / s2
}

func (f *BernoulliLogit) logKernel(z []float64) float64 {
	eta := dot(f.X, z)
	return f.Y*eta - Softplus(eta)
}

func (f *BinomialLogit) logKernel(z []float64) float64 {
	eta := dot(f.X, z)
	return f.Y*eta - float64(f.Trials)*Softplus(eta)
}

func (f *LinStudentT) logKernel(z []float64) float64 {
	r := f.Y - dot(f.X, z)
	q := f.DF * f.Sigma * f.Sigma
	return -0.5 * (f.DF + 1) * math.Log1p(r*r/q)
}
