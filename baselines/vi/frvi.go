package vi

import (
	"context"
	"fmt"
	"math"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
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
	// Init, when set, is the Gaussian the fit starts from and whose
	// coordinates it works in (see Whitened): the scale-aware start of
	// RunFRVI's practitioner protocol, usually the Laplace approximation.
	// nil starts at PriorGaussian in z's own units, the paper's protocol.
	Init *Gaussian
	// Trace, when set, records the run for the convergence checks.
	Trace *Trace
	// OnSnapshot, when set, is called right after the snapshot of budget
	// index k is taken, so a caller can time the run up to each budget
	// (the cost a point of that budget is charged) without the scoring
	// that follows the run.
	OnSnapshot func(k int)
}

// frviParams maps the flat parameter vector [μ | a | off-diagonal of L]
// to q, with L_ii = softplus(a_i) so that any real vector is valid, or
// L_ii = exp(a_i) with logScale. In the paper's z units softplus keeps
// the paper's behaviour; in whitened units the log scale lets a start
// that is off in width by a factor 10⁴ (a Laplace approximation at a
// kink of a Laplace prior) be corrected in ~10 units of a rather than
// 10⁴, a few hundred Adam steps.
type frviParams struct {
	d        int
	logScale bool
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
		if p.logScale {
			g.L[i*d+i] = math.Exp(a[i])
		} else {
			g.L[i*d+i] = factor.Softplus(a[i])
		}
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
		fg, err := gaussianFromPrecision(context.Background(), loc, pr.Precision)
		if err != nil {
			return nil, fmt.Errorf("prior: %w", err)
		}
		g = fg
	default:
		for i := 0; i < d; i++ {
			g.L[i*d+i] = 1
		}
	}
	return g, nil
}

// initial encodes PriorGaussian(prior) as FRVI's starting parameters.
func (p frviParams) initial(prior factor.Prior) ([]float64, error) {
	g, err := PriorGaussian(prior)
	if err != nil {
		return nil, fmt.Errorf("frvi: %w", err)
	}
	return p.encode(g), nil
}

// encode is the inverse of decode: g as FRVI's flat parameters.
func (p frviParams) encode(g *Gaussian) []float64 {
	d := p.d
	theta := make([]float64, p.size())
	copy(theta, g.Mean)
	k := 0
	off := theta[2*d:]
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			off[k] = g.L[i*d+j]
			k++
		}
		if p.logScale {
			theta[d+i] = math.Log(g.L[i*d+i])
		} else {
			theta[d+i] = softplusInv(g.L[i*d+i])
		}
	}
	return theta
}

// identity returns the d×d identity, row-major.
func identity(d int) []float64 {
	l := make([]float64, d*d)
	for i := 0; i < d; i++ {
		l[i*d+i] = 1
	}
	return l
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
	pz := frviParams{d: d, logScale: cfg.Init != nil}
	var target GradDensity = task.Packed()
	var theta []float64
	if cfg.Init != nil {
		// N(0, I) in the coordinates of Init, which is Init itself.
		theta = pz.encode(&Gaussian{Mean: make([]float64, d), L: identity(d)})
		target = NewWhitened(target, cfg.Init)
	} else {
		var err error
		if theta, err = pz.initial(task.Prior); err != nil {
			return nil, err
		}
	}
	rng := streams.New(cfg.Seed, streams.FRVIGradient)
	obj := newFRVIObjective(target, pz, S, cfg.TotalGradient)
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
		if cfg.Init != nil {
			var err error
			if s, err = unwhiten(ctx, cfg.Init, s); err != nil {
				return err
			}
		}
		out = append(out, s)
		if cfg.OnSnapshot != nil {
			cfg.OnSnapshot(len(out) - 1)
		}
		return nil
	}
	err := Optimize(ctx, theta, LoopConfig{LR: cfg.LR, Budgets: budgets, AvgFrac: cfg.AvgFrac, Trace: cfg.Trace}, gradFn, snap)
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
	dens  GradDensity // the task (packed, or whitened) for the per-sample gradients
	pz    frviParams
	s     int
	total bool // total-derivative estimator instead of sticking the landing
	q     *Gaussian
	z, g  []float64
	gL    []float64 // ∂(−ELBO)/∂L, lower part
}

func newFRVIObjective(dens GradDensity, pz frviParams, s int, total bool) *frviObjective {
	d := pz.d
	return &frviObjective{
		dens: dens, pz: pz, s: s, total: total,
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
		// d softplus(a)/da = sigmoid(a); d exp(a)/da = exp(a) = L_ii.
		if o.pz.logScale {
			grad[d+i] = gii * lii
		} else {
			grad[d+i] = gii * factor.Sigmoid(theta[d+i])
		}
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
