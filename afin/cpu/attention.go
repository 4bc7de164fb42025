package cpu

import (
	"context"
	"math"

	"github.com/afin-bench/afin/internal/gemm"
)

// mergeBlock is one BoxTransformer block (App. B.2): pre-norm
// factor-axis attention whose output map's increment is added to the
// un-normalised tokens, then the FFN increment; P is re-symmetrised after
// each, as the reference does.
func (n *Net) mergeBlock(ctx context.Context, w *workspace, blk *block, K, d int) error {
	c := n.cfg.C
	h := n.cfg.Heads
	u := c / h
	D := (d + d*d) * u
	size := h * K * D
	w.qh, w.kh, w.vh = grow(w.qh, size), grow(w.kh, size), grow(w.vh, size)
	in := boxIn{p: w.p, x: w.x, k: K, d: d, lnP: &blk.lnAttnPair, lnX: &blk.lnAttnNode}
	// The score scales (mix weights, 1/d or 1/d², 1/√u) are folded into Q.
	su := 1 / math.Sqrt(float64(u))
	sx, sp := float32(blk.mix[0]/float64(d)*su), float32(blk.mix[1]/float64(d*d)*su)
	for _, m := range []struct {
		b      *box
		dst    []float32
		sx, sp float32
	}{{blk.q, w.qh, sx, sp}, {blk.k, w.kh, 1, 1}, {blk.v, w.vh, 1, 1}} {
		err := n.runBox(ctx, w, m.b, in, func(k0, k1 int, dP, dX []float32) {
			toHeads(m.dst, dP, dX, k0, k1, K, d, c, h, m.sx, m.sp)
		})
		if err != nil {
			return err
		}
	}
	w.mx, w.mp = grow(w.mx, K*d*c), grow(w.mp, K*d*d*c)
	if err := n.attend(ctx, w, K, d); err != nil {
		return err
	}
	resid := func(k0, k1 int, dP, dX []float32) {
		addSym(w.p[k0*d*d*c:k1*d*d*c], dP, d, c, true)
		addTo(w.x[k0*d*c:k1*d*c], dX)
	}
	if err := n.runBox(ctx, w, blk.out, boxIn{p: w.mp, x: w.mx, k: K, d: d}, resid); err != nil {
		return err
	}
	ffn := boxIn{p: w.p, x: w.x, k: K, d: d, lnP: &blk.lnFFNPair, lnX: &blk.lnFFNNode}
	// The FFN reads LN(token) and then its own token is updated: safe,
	// because runBox finishes reading a chunk before emitting it.
	return n.runBox(ctx, w, blk.ffn, ffn, resid)
}

// toHeads writes a Q/K/V map's outputs for tokens [k0,k1) head-major:
// dst[head][token] = [node (d×u) scaled by sx, sym(pair) (d²×u) by sp].
func toHeads(dst, dP, dX []float32, k0, k1, K, d, c, h int, sx, sp float32) {
	u := c / h
	D := (d + d*d) * u
	for k := k0; k < k1; k++ {
		t := k - k0
		for hd := 0; hd < h; hd++ {
			o := dst[(hd*K+k)*D : (hd*K+k+1)*D]
			for i := 0; i < d; i++ {
				src := dX[(t*d+i)*c+hd*u : (t*d+i)*c+hd*u+u]
				for ch, v := range src {
					o[i*u+ch] = v * sx
				}
			}
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					a := dP[((t*d+i)*d+j)*c+hd*u:]
					b := dP[((t*d+j)*d+i)*c+hd*u:]
					q := o[d*u+(i*d+j)*u:]
					for ch := 0; ch < u; ch++ {
						q[ch] = 0.5 * (a[ch] + b[ch]) * sp
					}
				}
			}
		}
	}
}

// attend computes, head by head and query chunk by query chunk, the
// softmax attention over all K tokens and scatters the mixed values into
// w.mx, w.mp. Scores are Q·Kᵀ with both as packed products; the query
// chunk bounds the score matrix by scoreBudget floats.
func (n *Net) attend(ctx context.Context, w *workspace, K, d int) error {
	c := n.cfg.C
	h := n.cfg.Heads
	u := c / h
	D := (d + d*d) * u
	bq := max(1, min(K, scoreBudget/K))
	w.scores, w.outs = grow(w.scores, bq*K), grow(w.outs, bq*D)
	for hd := 0; hd < h; hd++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.pk.Repack(w.kh[hd*K*D:(hd+1)*K*D], D, K, true); err != nil {
			return err
		}
		if err := w.pv.Repack(w.vh[hd*K*D:(hd+1)*K*D], K, D, false); err != nil {
			return err
		}
		q := w.qh[hd*K*D : (hd+1)*K*D]
		for q0 := 0; q0 < K; q0 += bq {
			m := min(bq, K-q0)
			w.mul(&w.pk, w.scores, K, q[q0*D:], D, m, 0)
			for r := 0; r < m; r++ {
				softmaxRow(w.scores[r*K : (r+1)*K])
			}
			w.mul(&w.pv, w.outs, D, w.scores, K, m, 0)
			fromHead(w, w.outs, q0, m, d, c, hd*u, u)
		}
	}
	return nil
}

// fromHead scatters one head's outputs for queries [q0, q0+m) back into
// the channel slots [off, off+u) of w.mx and w.mp.
func fromHead(w *workspace, outs []float32, q0, m, d, c, off, u int) {
	D := (d + d*d) * u
	for r := 0; r < m; r++ {
		o := outs[r*D : (r+1)*D]
		k := q0 + r
		for i := 0; i < d; i++ {
			copy(w.mx[(k*d+i)*c+off:(k*d+i)*c+off+u], o[i*u:(i+1)*u])
		}
		for ij := 0; ij < d*d; ij++ {
			copy(w.mp[(k*d*d+ij)*c+off:(k*d*d+ij)*c+off+u], o[d*u+ij*u:d*u+(ij+1)*u])
		}
	}
}

func softmaxRow(s []float32) {
	m := s[0]
	for _, v := range s[1:] {
		m = max(m, v)
	}
	inv := 1 / gemm.ExpSum(s, m)
	for i := range s {
		s[i] *= inv
	}
}
