package vi

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// Gaussian is FRVI's q = N(Mean, LLᵀ): posterior.Gaussian with a
// covariance factor (PrecisionFactor false), the one full-rank Gaussian
// type of the module.
type Gaussian = posterior.Gaussian

// FRVIConfig configures one FRVI fit.
type FRVIConfig struct {
	LR      float64
	Budgets []int // nil means DefaultBudgets
	// MCSamples is the number of reparameterised draws per gradient step;
	// 0 means 4. Draws come in antithetic pairs (ε, −ε), which cancels
	// the gradient noise that is linear in ε at no extra cost.
	MCSamples int
	AvgFrac   float64 // see LoopConfig.AvgFrac
	Seed      uint64
	// TotalGradient selects the plain reparameterisation gradient instead
	// of the default sticking-the-landing estimator (see frviObjective).
	TotalGradient bool
}

// frviParams maps the flat parameter vector [μ | a | off-diagonal of L]
// to q, with L_ii = softplus(a_i) so that any real vector is valid.
type frviParams struct {
	d int
}

func (p frviParams) size() int { return 2*p.d + p.d*(p.d-1)/2 }

func (p frviParams) decode(theta []float64, g *Gaussian) {
	d := p.d
	copy(g.Mean, theta[:d])
	a := theta[d : 2*d]
	off := theta[2*d:]
	k := 0
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			g.L[i*d+j] = off[k]
			k++
		}
		g.L[i*d+i] = factor.Softplus(a[i])
	}
}

// PriorGaussian is the Gaussian FRVI starts from (and the flows' final
// affine layer): the prior's location as mean, and the Cholesky factor of
// its covariance as L, with the marginal scales for the non-Gaussian
// priors (√2·b for Laplace, whose variance is 2b²; the scale for
// Student-t, whose variance may be infinite).
func PriorGaussian(prior factor.Prior) (*Gaussian, error) {
	loc := prior.Location()
	d := len(loc)
	g := &Gaussian{Mean: append([]float64(nil), loc...), L: make([]float64, d*d)}
	diag := func(scale []float64, f float64) {
		for i, s := range scale {
			g.L[i*d+i] = f * s
		}
	}
	switch pr := prior.(type) {
	case *factor.DiagGaussian:
		diag(pr.Scale, 1)
	case *factor.DiagLaplace:
		diag(pr.Scale, math.Sqrt2)
	case *factor.DiagStudentT:
		diag(pr.Scale, 1)
	case *factor.FullRankGaussian:
		prec := mat.NewSymDense(d, nil)
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				prec.SetSym(i, j, pr.Precision[i*d+j])
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(prec) {
			return nil, fmt.Errorf("prior precision is not positive definite")
		}
		var cov mat.SymDense
		if err := ch.InverseTo(&cov); err != nil {
			return nil, fmt.Errorf("inverting prior precision: %w", err)
		}
		var cc mat.Cholesky
		if !cc.Factorize(&cov) {
			return nil, fmt.Errorf("prior covariance is not positive definite")
		}
		var lt mat.TriDense
		cc.LTo(&lt)
		for i := 0; i < d; i++ {
			for j := 0; j <= i; j++ {
				g.L[i*d+j] = lt.At(i, j)
			}
		}
	default:
		for i := 0; i < d; i++ {
			g.L[i*d+i] = 1
		}
	}
	return g, nil
}

// initial encodes PriorGaussian(prior) as FRVI's starting parameters.
func (p frviParams) initial(prior factor.Prior) ([]float64, error) {
	d := p.d
	g, err := PriorGaussian(prior)
	if err != nil {
		return nil, fmt.Errorf("frvi: %w", err)
	}
	theta := make([]float64, p.size())
	copy(theta, g.Mean)
	k := 0
	off := theta[2*d:]
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			off[k] = g.L[i*d+j]
			k++
		}
		theta[d+i] = softplusInv(g.L[i*d+i])
	}
	return theta, nil
}

// softplusInv is log(eˣ − 1), stable for large x.
func softplusInv(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log(math.Expm1(x))
}

// FitFRVI maximises the ELBO of q = N(μ, LLᵀ) for task with Adam, from q
// at the prior, and returns one q per budget. The gradient is the
// reparameterised one built from the task's analytic ∇log p̃ (see
// frviObjective), chained through the softplus of L's diagonal. If the
// run diverges, the budgets reached are returned together with an error
// wrapping ErrDiverged.
func FitFRVI(ctx context.Context, task *factor.Task, cfg FRVIConfig) ([]*Gaussian, error) {
	d := task.D
	budgets := cfg.Budgets
	if budgets == nil {
		budgets = DefaultBudgets
	}
	S := cfg.MCSamples
	if S == 0 {
		S = 4
	}
	if S < 1 {
		return nil, fmt.Errorf("frvi: MC samples must be ≥ 1, got %d", S)
	}
	pz := frviParams{d}
	theta, err := pz.initial(task.Prior)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xf7f1))
	obj := newFRVIObjective(task, S, cfg.TotalGradient)
	noise := make([]float64, S*d)
	gradFn := func(step int, theta, grad []float64) (float64, error) {
		for s := 0; s < S; s++ {
			row := noise[s*d : (s+1)*d]
			if s%2 == 0 {
				for i := range row {
					row[i] = rng.NormFloat64()
				}
			} else {
				for i := range row {
					row[i] = -noise[(s-1)*d+i]
				}
			}
		}
		return obj.lossGrad(theta, grad, noise), nil
	}

	var out []*Gaussian
	snap := func(budget int, params []float64) error {
		s := &Gaussian{Mean: make([]float64, d), L: make([]float64, d*d)}
		pz.decode(params, s)
		out = append(out, s)
		return nil
	}
	err = Optimize(ctx, theta, LoopConfig{LR: cfg.LR, Budgets: budgets, AvgFrac: cfg.AvgFrac}, gradFn, snap)
	if err != nil {
		return out, fmt.Errorf("frvi: %w", err)
	}
	return out, nil
}

// frviObjective evaluates the negative ELBO (up to its constant) and a
// reparameterised estimate of its gradient for given noise draws,
// allocation-free.
//
// With z = μ + Lε and g = ∇log p̃(z), the total-derivative estimator is
// ∂/∂μ = g, ∂/∂L_ij = g_i ε_j (j ≤ i) plus the entropy's 1/L_ii on the
// diagonal. The default "sticking the landing" estimator (Roeder, Wu &
// Duvenaud 2017) instead uses h = g − ∇_z log q(z) = g + L⁻ᵀε in place
// of g and drops the analytic entropy term: the dropped part (the score
// of q) has expectation zero, so it is unbiased, and its variance
// vanishes when q equals the posterior, which is what lets FRVI converge
// to a Gaussian posterior's covariance instead of jittering around it.
type frviObjective struct {
	task  *factor.Task
	dens  *factor.Packed // task, packed for the per-sample gradients
	pz    frviParams
	s     int
	total bool // total-derivative estimator instead of sticking the landing
	q     *Gaussian
	z, g  []float64
	gL    []float64 // ∂(−ELBO)/∂L, lower part
}

func newFRVIObjective(task *factor.Task, s int, total bool) *frviObjective {
	d := task.D
	return &frviObjective{
		task: task, dens: task.Packed(), pz: frviParams{d}, s: s, total: total,
		q: &Gaussian{Mean: make([]float64, d), L: make([]float64, d*d)},
		z: make([]float64, d), g: make([]float64, d), gL: make([]float64, d*d),
	}
}

// lossGrad returns −(1/S Σ_s log p̃(μ + L ε_s) + Σ_i log L_ii) for the S
// noise rows ε_s (row-major S×d) and writes the gradient estimate in θ to
// grad.
func (o *frviObjective) lossGrad(theta, grad, noise []float64) float64 {
	d := o.pz.d
	q, z, g, gL := o.q, o.z, o.g, o.gL
	o.pz.decode(theta, q)
	clear(grad)
	clear(gL)
	inv := 1 / float64(o.s)
	var loss float64
	for s := 0; s < o.s; s++ {
		e := noise[s*d : (s+1)*d]
		for i := 0; i < d; i++ {
			row := q.L[i*d : i*d+i+1]
			v := q.Mean[i]
			for j, l := range row {
				v += l * e[j]
			}
			z[i] = v
		}
		lp := o.dens.LogDensityGrad(z, g)
		loss -= lp * inv
		if !o.total {
			// g += L⁻ᵀε; z is free to hold it.
			posterior.SolveLowerT(q.L, e, z)
			for i := range g {
				g[i] += z[i]
			}
		}
		for i := 0; i < d; i++ {
			gi := g[i] * inv
			grad[i] -= gi
			row := gL[i*d : i*d+i+1]
			for j := range row {
				row[j] -= gi * e[j]
			}
		}
	}
	off := grad[2*d:]
	k := 0
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			off[k] = gL[i*d+j]
			k++
		}
		lii := q.L[i*d+i]
		loss -= math.Log(lii)
		gii := gL[i*d+i]
		if o.total {
			gii -= 1 / lii
		}
		// d softplus(a)/da = sigmoid(a).
		grad[d+i] = gii * factor.Sigmoid(theta[d+i])
	}
	return loss
}

// FRVIFit adapts FitFRVI to a FitFunc for Sweep.
func FRVIFit(task *factor.Task, cfg FRVIConfig) FitFunc {
	return func(ctx context.Context, lr float64) ([]Approx, error) {
		c := cfg
		c.LR = lr
		qs, err := FitFRVI(ctx, task, c)
		out := make([]Approx, len(qs))
		for i, q := range qs {
			out[i] = q
		}
		return out, err
	}
}
