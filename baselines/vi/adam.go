package vi

import "math"

// Adam is the Adam optimiser (Kingma & Ba 2015) for a flat parameter
// vector. It minimises: Step moves params against grad.
type Adam struct {
	LR, Beta1, Beta2, Eps float64

	m, v []float64
	t    int
	b1t  float64 // Beta1^t
	b2t  float64 // Beta2^t
}

// NewAdam returns Adam for n parameters with learning rate lr and the
// usual moments β₁ = 0.9, β₂ = 0.999, ε = 10⁻⁸.
func NewAdam(n int, lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, m: make([]float64, n), v: make([]float64, n), b1t: 1, b2t: 1}
}

// Step applies one bias-corrected update params −= lr·m̂/(√v̂ + ε).
func (a *Adam) Step(params, grad []float64) {
	a.t++
	a.b1t *= a.Beta1
	a.b2t *= a.Beta2
	c1 := 1 / (1 - a.b1t)
	c2 := 1 / (1 - a.b2t)
	for i, g := range grad {
		a.m[i] = a.Beta1*a.m[i] + (1-a.Beta1)*g
		a.v[i] = a.Beta2*a.v[i] + (1-a.Beta2)*g*g
		params[i] -= a.LR * (a.m[i] * c1) / (math.Sqrt(a.v[i]*c2) + a.Eps)
	}
}

// Steps is the number of updates applied so far.
func (a *Adam) Steps() int { return a.t }
