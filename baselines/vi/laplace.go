package vi

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/cholesky"
)

// LaplaceInfo describes how the Laplace approximation was found.
type LaplaceInfo struct {
	// Iterations and GradEvals count the quasi-Newton search and the
	// Newton polish together (GradEvals includes the Hessian's).
	Iterations, GradEvals int
	// Decrement is the final Newton decrement ½gᵀH⁻¹g in nats: how much
	// log p̃ could still rise by one more Newton step (0 at the mode).
	Decrement float64
}

// Laplace returns the Laplace approximation N(ẑ, H⁻¹) of task's posterior:
// ẑ maximises log p̃ (gonum's BFGS with the analytic gradient of factor,
// then Newton steps with the Hessian to polish), and H is the Hessian of
// −log p̃ at ẑ, by central differences of the analytic gradient with steps
// scaled to the posterior's own width (a first pass at the location's
// scale gives the widths, a second pass at 10⁻³ of them gives H), so that
// posteriors of width 10⁻⁴ and of width 10 are differenced alike.
//
// It is the start a careful practitioner gives VI: the fit then only has
// to correct the Gaussian's shape, not travel from the prior. An error
// means no usable mode (the search diverged, or H is not positive
// definite there).
func Laplace(ctx context.Context, task *factor.Task) (*Gaussian, LaplaceInfo, error) {
	return laplace(ctx, task.Packed(), task.Prior.Location())
}

// density is what the mode search evaluates.
type density interface {
	GradDensity
	LogDensity(z []float64) float64
}

// laplace is Laplace for any density, from start.
func laplace(ctx context.Context, dens density, start []float64) (*Gaussian, LaplaceInfo, error) {
	var info LaplaceInfo
	d := len(start)
	g := make([]float64, d)
	prob := optimize.Problem{
		Func: func(z []float64) float64 {
			info.GradEvals++ // counted with gradients: same cost order
			return -dens.LogDensity(z)
		},
		Grad: func(grad, z []float64) {
			info.GradEvals++
			dens.LogDensityGrad(z, grad)
			for i := range grad {
				grad[i] = -grad[i]
			}
		},
	}
	start = append([]float64(nil), start...)
	settings := &optimize.Settings{MajorIterations: 2000, FuncEvaluations: 50000, Recorder: ctxRecorder{ctx}}
	res, err := optimize.Minimize(prob, start, settings, &optimize.BFGS{})
	if err := ctx.Err(); err != nil {
		return nil, info, err
	}
	// BFGS commonly stops on a failed line search within rounding of the
	// mode; the Newton polish below decides whether the point is usable.
	if res == nil {
		return nil, info, fmt.Errorf("laplace: mode search: %w", err)
	}
	info.Iterations = res.Stats.MajorIterations
	z := append([]float64(nil), res.X...)
	if !allFinite(z) {
		return nil, info, errors.New("laplace: mode search diverged")
	}
	q, err := newtonPolish(ctx, dens, z, g, &info)
	if err != nil {
		return nil, info, err
	}
	return q, info, nil
}

// newtonPolish takes up to 20 damped Newton steps from z (updated in
// place) until the Newton decrement is below 10⁻¹⁰ nats, and returns
// N(z, H⁻¹) with H the Hessian of −log p̃ at the final z. The step H⁻¹g
// comes from the covariance factor (LLᵀg), which the answer needs anyway.
func newtonPolish(ctx context.Context, dens GradDensity, z, g []float64, info *LaplaceInfo) (*Gaussian, error) {
	d := len(z)
	step := make([]float64, d)
	trial := make([]float64, d)
	for it := 0; ; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := scaledHessian(ctx, dens, z, info)
		if err != nil {
			return nil, err
		}
		q, err := gaussianFromPrecision(ctx, z, h)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("laplace: the Hessian of −log p̃ at the mode: %w", err)
		}
		lp := dens.LogDensityGrad(z, g)
		info.GradEvals++
		covTimes(q.L, g, step, trial)
		info.Decrement = 0.5 * dot(g, step)
		if info.Decrement < 1e-10 || it == 20 {
			return q, nil
		}
		// Backtrack until log p̃ rises: far from the mode the quadratic
		// model may overshoot.
		moved := false
		for t := 1.0; t > 1e-6 && !moved; t /= 2 {
			for i := range z {
				trial[i] = z[i] + t*step[i]
			}
			info.GradEvals++
			if dens.LogDensityGrad(trial, g) > lp {
				copy(z, trial)
				moved = true
			}
		}
		if !moved { // at the mode to rounding: no step raises log p̃
			return q, nil
		}
		info.Iterations++
	}
}

// covTimes writes LLᵀg into out (L lower triangular, row-major), using
// tmp for Lᵀg: O(d²), the Newton step H⁻¹g without another factorisation.
func covTimes(l, g, out, tmp []float64) {
	d := len(g)
	clear(tmp)
	for k := 0; k < d; k++ {
		row := l[k*d : k*d+k+1]
		for i, v := range row { // (Lᵀg)ᵢ += L_ki g_k
			tmp[i] += v * g[k]
		}
	}
	for i := 0; i < d; i++ {
		out[i] = dot(l[i*d:i*d+i+1], tmp[:i+1])
	}
}

// scaledHessian returns the Hessian of −log p̃ at z by central
// differences of the analytic gradient, in two passes: steps of 10⁻⁴ of
// the location's scale give the posterior widths σⱼ = √(H⁻¹)ⱼⱼ, then
// steps of 10⁻³σⱼ give H. The second pass keeps the truncation error of
// a curved log density at 10⁻⁶ relative whatever the posterior's width.
func scaledHessian(ctx context.Context, dens GradDensity, z []float64, info *LaplaceInfo) ([]float64, error) {
	d := len(z)
	h := make([]float64, d)
	for j := range h {
		h[j] = 1e-4 * math.Max(1, math.Abs(z[j]))
	}
	rough, err := fdHessian(ctx, dens, z, h, info)
	if err != nil {
		return nil, err
	}
	first, err := gaussianFromPrecision(ctx, z, rough)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("laplace: the Hessian of −log p̃ at the mode: %w", err)
	}
	for j := range h {
		// σⱼ² = (LLᵀ)ⱼⱼ, the squared norm of row j of the covariance factor.
		row := first.L[j*d : j*d+j+1]
		h[j] = 1e-3 * math.Sqrt(dot(row, row))
	}
	return fdHessian(ctx, dens, z, h, info)
}

// fdHessian differences the gradient of log p̃ at z ± hⱼeⱼ and returns the
// symmetrised Hessian of −log p̃, row-major. It looks at ctx before each
// column (two gradients): at d = 4096, N = 256 the whole takes a minute.
func fdHessian(ctx context.Context, dens GradDensity, z, h []float64, info *LaplaceInfo) ([]float64, error) {
	d := len(z)
	x := append([]float64(nil), z...)
	gp, gm := make([]float64, d), make([]float64, d)
	hess := make([]float64, d*d)
	for j := 0; j < d; j++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		x[j] = z[j] + h[j]
		dens.LogDensityGrad(x, gp)
		x[j] = z[j] - h[j]
		dens.LogDensityGrad(x, gm)
		x[j] = z[j]
		info.GradEvals += 2
		for i := 0; i < d; i++ {
			hess[i*d+j] = -(gp[i] - gm[i]) / (2 * h[j])
		}
	}
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			v := 0.5 * (hess[i*d+j] + hess[j*d+i])
			hess[i*d+j], hess[j*d+i] = v, v
		}
	}
	return hess, nil
}

// gaussianFromPrecision returns N(mu, prec⁻¹) with L the lower Cholesky
// factor of the covariance (what Gaussian stores), in blocks that look
// at ctx (internal/cholesky): at d = 4096 this is seconds of work.
func gaussianFromPrecision(ctx context.Context, mu, prec []float64) (*Gaussian, error) {
	d := len(mu)
	l, ok, err := cholesky.CovarianceFactor(ctx, prec, d)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("not positive definite")
	}
	return &Gaussian{Mean: append([]float64(nil), mu...), L: l}, nil
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// ctxRecorder stops the mode search when ctx is done: gonum's optimizer
// calls Record after every evaluation, and an error from it ends the run.
type ctxRecorder struct{ ctx context.Context }

func (r ctxRecorder) Init() error { return r.ctx.Err() }

func (r ctxRecorder) Record(*optimize.Location, optimize.Operation, *optimize.Stats) error {
	return r.ctx.Err()
}
