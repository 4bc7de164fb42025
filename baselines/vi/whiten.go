package vi

import "context"

// GradDensity is an unnormalised log density with its gradient written
// (not added) into grad; *factor.Task and *factor.Packed satisfy it.
type GradDensity interface {
	LogDensityGrad(z, grad []float64) float64
}

// Whitened is the target seen in the coordinates u of a reference
// Gaussian N(μ₀, L₀L₀ᵀ): p̃_u(u) = p̃(μ₀ + L₀u), with ∇_u = L₀ᵀ∇_z. Fitting
// q in u from N(0, I) is the scale-aware parameterisation: Adam moves
// each parameter by about the learning rate per step, so in u a step is a
// fraction of the posterior's own width in every direction, whether that
// width is 10⁻⁴ or 10. Densities differ from p̃ by the constant log|L₀|,
// which no ELBO comparison between fits in the same u sees.
type Whitened struct {
	Base GradDensity
	Ref  *Gaussian
	z, g []float64
}

// NewWhitened returns base in the coordinates of ref.
func NewWhitened(base GradDensity, ref *Gaussian) *Whitened {
	d := ref.Dim()
	return &Whitened{Base: base, Ref: ref, z: make([]float64, d), g: make([]float64, d)}
}

// LogDensityGrad is log p̃(μ₀ + L₀u), with its gradient in u written into
// grad. Not safe for concurrent use (it reuses scratch space).
func (w *Whitened) LogDensityGrad(u, grad []float64) float64 {
	r := w.Ref
	d := len(r.Mean)
	for i := 0; i < d; i++ {
		row := r.L[i*d : i*d+i+1]
		v := r.Mean[i]
		for j, l := range row {
			v += l * u[j]
		}
		w.z[i] = v
	}
	lp := w.Base.LogDensityGrad(w.z, w.g)
	// grad = L₀ᵀ g: column i of L₀ has its entries in rows i..d−1.
	for i := 0; i < d; i++ {
		var s float64
		for k := i; k < d; k++ {
			s += r.L[k*d+i] * w.g[k]
		}
		grad[i] = s
	}
	return lp
}

// unwhiten maps q_u = N(m, CCᵀ) fitted in the coordinates of ref back to
// z: N(μ₀ + L₀m, (L₀C)(L₀C)ᵀ). L₀C is lower triangular with a positive
// diagonal, so the result is again a Gaussian in FRVI's form. The product
// is O(d³) (10¹⁰ flops at d = 4096), so it looks at ctx every row.
func unwhiten(ctx context.Context, ref, qu *Gaussian) (*Gaussian, error) {
	d := len(ref.Mean)
	out := &Gaussian{Mean: make([]float64, d), L: make([]float64, d*d)}
	for i := 0; i < d; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v := ref.Mean[i]
		for j := 0; j <= i; j++ {
			v += ref.L[i*d+j] * qu.Mean[j]
		}
		out.Mean[i] = v
		for j := 0; j <= i; j++ {
			var s float64
			for k := j; k <= i; k++ {
				s += ref.L[i*d+k] * qu.L[k*d+j]
			}
			out.L[i*d+j] = s
		}
	}
	return out, nil
}
