// Package optim holds Adam (Kingma & Ba 2015) with optional decoupled
// weight decay (AdamW, Loshchilov & Hutter 2019, as PyTorch writes it):
// the one update behind afin's training, the VI and flow baselines and
// C2ST's classifier.
//
// The arithmetic is float64 whatever the parameters' type: float32
// parameters and moments (afin's network) store the rounded results of
// a float64 update, so a float32 run and its checkpointed resume agree
// bit for bit, and float64 callers get the plain update.
package optim

import "math"

// Float is a parameter, gradient or moment element.
type Float interface{ ~float32 | ~float64 }

// The moment decay rates and ε are the usual ones (Kingma & Ba's, and
// PyTorch's and scikit-learn's defaults), and every caller uses them.
// They are untyped constants on purpose: 1−Beta1 is then the float64
// nearest 0.1, as afin's checkpoints were trained with, where a variable
// would give 1−0.9 = 0.09999999999999998.
const (
	Beta1 = 0.9
	Beta2 = 0.999
	Eps   = 1e-8
)

// Settings are the learning rate and weight decay of an update.
type Settings struct {
	LR float64
	// WeightDecay shrinks each parameter by the factor 1 − LR·WeightDecay
	// before the Adam step (decoupled, not added to the gradient); 0 is
	// plain Adam.
	WeightDecay float64
}

// Step applies update number t (1 for the first) to params from the
// gradient grad·scale (scale < 1 is gradient clipping; 1 leaves grad as
// it is), advancing the moment estimates m and v in place:
//
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²
//	θ ← θ(1 − lr·wd) − lr·(m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε)
//
// params, grad, m and v have one length; grad is not changed.
func Step[T Float](s Settings, t int, params, grad, m, v []T, scale float64) {
	c1 := 1 - math.Pow(Beta1, float64(t))
	c2 := 1 - math.Pow(Beta2, float64(t))
	decay := 1 - s.LR*s.WeightDecay
	for k := range params {
		g := float64(grad[k]) * scale
		mk := Beta1*float64(m[k]) + (1-Beta1)*g
		vk := Beta2*float64(v[k]) + (1-Beta2)*g*g
		m[k], v[k] = T(mk), T(vk)
		p := float64(params[k]) * decay
		p -= s.LR * (mk / c1) / (math.Sqrt(vk/c2) + Eps)
		params[k] = T(p)
	}
}

// Adam is Step over one flat parameter vector that owns its moments and
// counts its updates.
type Adam[T Float] struct {
	Settings
	m, v []T
	t    int
}

// New returns Adam for n parameters.
func New[T Float](n int, s Settings) *Adam[T] {
	return &Adam[T]{Settings: s, m: make([]T, n), v: make([]T, n)}
}

// Step applies the next update to params from grad.
func (a *Adam[T]) Step(params, grad []T) {
	a.t++
	Step(a.Settings, a.t, params, grad, a.m, a.v, 1)
}

// Steps is the number of updates applied so far.
func (a *Adam[T]) Steps() int { return a.t }
