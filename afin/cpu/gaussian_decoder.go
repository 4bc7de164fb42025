package cpu

import (
	"context"
	"fmt"
	"math"

	"github.com/afin-bench/afin/afin/arch"
)

// The paper's Gaussian decoder (App. B.3): forward (gaussianDecoder,
// through Net.Gaussian at inference), its log density's gradient
// (gaussLogQGrad) and backward (gaussianDecoderBackward).

// gaussDec is the Gaussian decoder's packed heads.
type gaussDec struct{ offdiag, diag, mean *mlp }

// Gaussian runs the network with the Gaussian decoder on every task of
// batch and returns the means (B×d) and precisions (B×d×d, row-major,
// symmetric and diagonally dominant), as afin's GoMLX forward does. It
// checks ctx between layers and stops with ctx's error.
func (n *Net) Gaussian(ctx context.Context, batch *arch.Batch) (mean, precision []float32, err error) {
	if n.gaussian == nil {
		return nil, nil, fmt.Errorf("cpu: network has no Gaussian decoder (decoder %q)", n.cfg.Decoder)
	}
	if err := checkBatch(batch); err != nil {
		return nil, nil, err
	}
	w, _ := n.pool.Get().(*workspace)
	if w == nil {
		w = &workspace{}
	}
	defer n.pool.Put(w)
	d := batch.D
	mean = make([]float32, batch.B*d)
	precision = make([]float32, batch.B*d*d)
	for b := 0; b < batch.B; b++ {
		t, err := locate(w, batch, b)
		if err != nil {
			return nil, nil, fmt.Errorf("cpu: %w", err)
		}
		if _, err := n.embed(ctx, w, batch, t, nil); err != nil {
			return nil, nil, fmt.Errorf("cpu: task %d: %w", b, err)
		}
		n.gaussianDecoder(w, d, mean[b*d:(b+1)*d], precision[b*d*d:(b+1)*d*d])
	}
	return mean, precision, nil
}

// gaussianDecoder maps the pooled tokens to the mean and the diagonally
// dominant precision (App. B.3): A = sym(s·offdiag(P)) off the diagonal,
// Λ_ii = Σ_{j≠i}|A_ij| + softplus(diag(X_i)) + 1e-4.
func (n *Net) gaussianDecoder(w *workspace, d int, mean, prec []float32) {
	g := n.gaussian
	w.dec1, w.dec2, w.dec3 = grow(w.dec1, d*d), grow(w.dec2, d), grow(w.dec3, d)
	g.offdiag.run(w, w.dec1, w.poolP, d*d)
	g.diag.run(w, w.dec2, w.poolX, d)
	n.richFeatures(w, d)
	g.mean.run(w, w.dec3, w.rich, d)
	s := 0.5 * n.cfg.OffdiagMul
	for i := 0; i < d; i++ {
		var a float64
		for j := 0; j < d; j++ {
			if i == j {
				continue
			}
			v := s * (float64(w.dec1[i*d+j]) + float64(w.dec1[j*d+i]))
			prec[i*d+j] = float32(v)
			a += math.Abs(v)
		}
		prec[i*d+i] = float32(a + softplus(float64(w.dec2[i])) + 1e-4)
		mean[i] = w.dec3[i]
	}
}

// richFeatures builds [X_i, ½(row_i+col_i), diag_i, gN, gP] (d×5C) from
// the pooled tokens.
func (n *Net) richFeatures(w *workspace, d int) {
	c := n.cfg.C
	w.rich = grow(w.rich, d*5*c)
	clear(w.rich)
	inv, inv2 := 1/float32(d), 1/float32(d*d)
	gN, gP := w.rich[3*c:4*c], w.rich[4*c:5*c] // row 0's, copied to the others below
	for i := 0; i < d; i++ {
		r := w.rich[i*5*c : (i+1)*5*c]
		copy(r[:c], w.poolX[i*c:(i+1)*c])
		copy(r[2*c:3*c], w.poolP[(i*d+i)*c:(i*d+i+1)*c])
		for ch, v := range w.poolX[i*c : (i+1)*c] {
			gN[ch] += v * inv
		}
		for j := 0; j < d; j++ {
			pij, pji := w.poolP[(i*d+j)*c:(i*d+j+1)*c], w.poolP[(j*d+i)*c:(j*d+i+1)*c]
			for ch := 0; ch < c; ch++ {
				r[c+ch] += 0.5 * (pij[ch] + pji[ch]) * inv
				gP[ch] += pij[ch] * inv2
			}
		}
	}
	for i := 1; i < d; i++ {
		copy(w.rich[i*5*c+3*c:(i+1)*5*c], w.rich[3*c:5*c])
	}
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// gaussLogQGrad returns log N(z; μ, Λ⁻¹) and dlq times its gradients
// with respect to μ and Λ (entry-wise, Λ symmetric): Λr and
// ½Λ⁻¹ − ½rrᵀ, in float64.
func gaussLogQGrad(mu, lam, z []float32, dlq float64) (lq float64, dmu, dlam []float64, err error) {
	d := len(mu)
	L := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			s := 0.5 * (float64(lam[i*d+j]) + float64(lam[j*d+i]))
			for k := 0; k < j; k++ {
				s -= L[i*d+k] * L[j*d+k]
			}
			if i == j {
				if s <= 0 {
					return 0, nil, nil, fmt.Errorf("precision not positive definite")
				}
				L[i*d+i] = math.Sqrt(s)
			} else {
				L[i*d+j] = s / L[j*d+j]
			}
		}
	}
	inv := make([]float64, d*d) // Λ⁻¹ column by column: solve L Lᵀ x = e_j
	for j := 0; j < d; j++ {
		x := make([]float64, d)
		x[j] = 1
		for i := 0; i < d; i++ {
			for k := 0; k < i; k++ {
				x[i] -= L[i*d+k] * x[k]
			}
			x[i] /= L[i*d+i]
		}
		for i := d - 1; i >= 0; i-- {
			for k := i + 1; k < d; k++ {
				x[i] -= L[k*d+i] * x[k]
			}
			x[i] /= L[i*d+i]
		}
		for i := 0; i < d; i++ {
			inv[i*d+j] = x[i]
		}
	}
	r := make([]float64, d)
	for i := range r {
		r[i] = float64(z[i]) - float64(mu[i])
	}
	dmu, dlam = make([]float64, d), make([]float64, d*d)
	var quad, logdet float64
	for i := 0; i < d; i++ {
		logdet += 2 * math.Log(L[i*d+i])
		var lr float64
		for j := 0; j < d; j++ {
			lr += float64(lam[i*d+j]) * r[j]
			dlam[i*d+j] = dlq * 0.5 * (inv[i*d+j] - r[i]*r[j])
		}
		quad += r[i] * lr
		dmu[i] = dlq * lr
	}
	lq = 0.5*(logdet-quad) - 0.5*float64(d)*math.Log(2*math.Pi)
	return lq, dmu, dlam, nil
}

// gaussianDecoderBackward backpropagates dmu, dlam through the Gaussian decoder
// to the pooled tokens: it returns their gradients (d×d×C, d×C).
func (n *Net) gaussianDecoderBackward(w *workspace, s *trainState, d int, dmu, dlam []float64) (dPool, dXPool []float32) {
	c, g := n.cfg.C, n.gaussian
	so := 0.5 * n.cfg.OffdiagMul
	dA := make([]float64, d*d)
	de := make([]float32, d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if i != j {
				a := so * (float64(w.dec1[i*d+j]) + float64(w.dec1[j*d+i]))
				sg := 0.0
				if a > 0 {
					sg = 1
				} else if a < 0 {
					sg = -1
				}
				dA[i*d+j] = dlam[i*d+j] + sg*dlam[i*d+i]
			}
		}
		e := float64(w.dec2[i])
		de[i] = float32(dlam[i*d+i] / (1 + math.Exp(-e)))
	}
	doff := make([]float32, d*d)
	dm := make([]float32, d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if i != j {
				doff[i*d+j] = float32(so * (dA[i*d+j] + dA[j*d+i]))
			}
		}
		dm[i] = float32(dmu[i])
	}
	dPool, dXPool = make([]float32, d*d*c), make([]float32, d*c)
	tmp := make([]float32, d*c)
	drich := make([]float32, d*5*c)
	g.offdiag.backward(&s.gw, w.poolP, d*d, doff, dPool, s.g.mlpGradOf(g.offdiag))
	g.diag.backward(&s.gw, w.poolX, d, de, tmp, s.g.mlpGradOf(g.diag))
	addTo(dXPool, tmp)
	g.mean.backward(&s.gw, w.rich, d, dm, drich, s.g.mlpGradOf(g.mean))
	richFeaturesBackward(drich, dPool, dXPool, d, c)
	return dPool, dXPool
}

// richFeaturesBackward spreads the gradient of the rich features
// [X_i, ½(row_i+col_i), diag_i, gN, gP] onto the pooled tokens.
func richFeaturesBackward(drich, dP, dX []float32, d, c int) {
	inv, inv2 := 1/float32(d), 1/float32(d*d)
	sN, sP := make([]float32, c), make([]float32, c)
	for i := 0; i < d; i++ {
		r := drich[i*5*c : (i+1)*5*c]
		addTo(dX[i*c:(i+1)*c], r[:c])
		addTo(dP[(i*d+i)*c:(i*d+i+1)*c], r[2*c:3*c])
		addTo(sN, r[3*c:4*c])
		addTo(sP, r[4*c:5*c])
		for j := 0; j < d; j++ {
			a, b := dP[(i*d+j)*c:(i*d+j+1)*c], dP[(j*d+i)*c:(j*d+i+1)*c]
			for ch := 0; ch < c; ch++ {
				v := 0.5 * r[c+ch] * inv
				a[ch] += v
				b[ch] += v
			}
		}
	}
	for i := 0; i < d; i++ {
		for ch := 0; ch < c; ch++ {
			dX[i*c+ch] += sN[ch] * inv
		}
	}
	for ij := 0; ij < d*d; ij++ {
		for ch := 0; ch < c; ch++ {
			dP[ij*c+ch] += sP[ch] * inv2
		}
	}
}

// gaussianDecoderWorkspaceFloats is the decoder's rich node inputs
// (d × 5C) and its outputs before assembly (d², d, d).
func gaussianDecoderWorkspaceFloats(cfg arch.Config, d int) int64 {
	dd := int64(d)
	return dd*5*int64(cfg.C) + dd*dd + 2*dd
}

// gaussianOutputBytes is what b tasks' answers hold: means and precisions
// in float32, then per task the float64 mean, precision and its Cholesky
// factor.
func gaussianOutputBytes(b int64, d int) int64 {
	dd := int64(d)
	return 4*b*(dd+dd*dd) + 8*b*(dd+2*dd*dd)
}

// gaussianDecoderFLOPs counts the decoder's three MLPs: off-diagonal
// entries (d² rows on C), diagonal (d rows on C) and mean (d rows on 5C).
func gaussianDecoderFLOPs(cfg arch.Config, d int) int64 {
	c := cfg.C
	return mlpFLOPs(d*d, c, 1, cfg.DecH, cfg.DecL) + mlpFLOPs(d, c, 1, cfg.DecH, cfg.DecL) +
		mlpFLOPs(d, 5*c, 1, cfg.DecH, cfg.DecL)
}
