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
	if err := n.qkv(ctx, w, blk, K, d); err != nil {
		return err
	}
	if err := n.attend(ctx, w, K, d); err != nil {
		return err
	}
	if err := n.outResidual(ctx, w, blk, K, d); err != nil {
		return err
	}
	return n.ffnResidual(ctx, w, blk, K, d)
}

// qkv fills w.qh, w.kh, w.vh from LN(tokens) through the Q, K, V maps,
// head-major; the score scales (mix weights, 1/d or 1/d², 1/√u) are
// folded into Q.
func (n *Net) qkv(ctx context.Context, w *workspace, blk *block, K, d int) error {
	c := n.cfg.C
	h := n.cfg.Heads
	u := c / h
	D := (d + d*d) * u
	size := h * K * D
	w.qh, w.kh, w.vh = grow(w.qh, size), grow(w.kh, size), grow(w.vh, size)
	in := boxIn{p: w.p, x: w.x, k: K, d: d, lnP: &blk.lnAttnPair, lnX: &blk.lnAttnNode}
	sx, sp := blk.scales(d, u)
	emit := func(dst []float32, sx, sp float32) boxEmit {
		return func(k0, k1 int, dP, dX []float32) { toHeads(dst, dP, dX, k0, k1, K, d, c, h, sx, sp) }
	}
	maps := []*box{blk.q, blk.k, blk.v}
	emits := []boxEmit{emit(w.qh, sx, sp), emit(w.kh, 1, 1), emit(w.vh, 1, 1)}
	if err := n.runBoxes(ctx, w, maps, in, emits); err != nil {
		return err
	}
	w.mx, w.mp = grow(w.mx, K*d*c), grow(w.mp, K*d*d*c)
	return nil
}

// scales are the factors of the node and pair parts of the scores:
// mix weight / (d or d²) / √u.
func (blk *block) scales(d, u int) (sx, sp float32) {
	su := 1 / math.Sqrt(float64(u))
	return float32(blk.mix[0] / float64(d) * su), float32(blk.mix[1] / float64(d*d) * su)
}

// outResidual adds the output map's increment on the mixed values.
func (n *Net) outResidual(ctx context.Context, w *workspace, blk *block, K, d int) error {
	c := n.cfg.C
	resid := func(k0, k1 int, dP, dX []float32) {
		addSym(w.p[k0*d*d*c:k1*d*d*c], dP, d, c, true)
		addTo(w.x[k0*d*c:k1*d*c], dX)
	}
	return n.runBox(ctx, w, blk.out, boxIn{p: w.mp, x: w.mx, k: K, d: d}, resid)
}

// ffnResidual adds the FFN increment on LN(tokens). The FFN reads
// LN(token) and then its own token is updated: safe, because runBox
// finishes reading a chunk before emitting it.
func (n *Net) ffnResidual(ctx context.Context, w *workspace, blk *block, K, d int) error {
	c := n.cfg.C
	resid := func(k0, k1 int, dP, dX []float32) {
		addSym(w.p[k0*d*d*c:k1*d*d*c], dP, d, c, true)
		addTo(w.x[k0*d*c:k1*d*c], dX)
	}
	ffn := boxIn{p: w.p, x: w.x, k: K, d: d, lnP: &blk.lnFFNPair, lnX: &blk.lnFFNNode}
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

// attend computes, head by head, softmax attention over all K tokens
// and scatters the mixed values into w.mx, w.mp. Queries go in chunks of
// queryChunk and keys in blocks of keyBlock with an online softmax (a
// running maximum and sum per query, earlier partial outputs rescaled
// when the maximum grows), so memory does not grow as K² and each key
// block's packed K and V are reused from cache by a whole query chunk.
// Scores are Q·Kᵀ and outputs A·V, both through the packed kernel.
func (n *Net) attend(ctx context.Context, w *workspace, K, d int) error {
	c := n.cfg.C
	h := n.cfg.Heads
	u := c / h
	D := (d + d*d) * u
	kb := min(K, keyBlock)
	// In high d a query chunk is cut so one (query chunk, key block) tile,
	// the work between two looks at ctx, stays near attendTileMACs.
	bq := min(K, queryChunk, max(1, attendTileMACs/(kb*D)))
	nb := (K + kb - 1) / kb
	w.scores, w.outs = grow(w.scores, bq*kb), grow(w.outs, bq*D)
	w.rowMax, w.rowSum = grow(w.rowMax, bq), grow(w.rowSum, bq)
	for len(w.pk) < nb {
		w.pk, w.pv = append(w.pk, &gemm.Packed{}), append(w.pv, &gemm.Packed{})
	}
	for hd := 0; hd < h; hd++ {
		kh, vh := w.kh[hd*K*D:(hd+1)*K*D], w.vh[hd*K*D:(hd+1)*K*D]
		for b := 0; b < nb; b++ {
			k0, k1 := b*kb, min(K, (b+1)*kb)
			if err := w.pk[b].Repack(kh[k0*D:k1*D], D, k1-k0, true); err != nil {
				return err
			}
			if err := w.pv[b].Repack(vh[k0*D:k1*D], k1-k0, D, false); err != nil {
				return err
			}
		}
		q := w.qh[hd*K*D : (hd+1)*K*D]
		for q0 := 0; q0 < K; q0 += bq {
			m := min(bq, K-q0)
			if err := w.attendChunk(ctx, q[q0*D:], m, D, nb); err != nil {
				return err
			}
			fromHead(w, w.outs, q0, m, d, c, hd*u, u)
		}
	}
	return nil
}

// attendChunk leaves in w.outs the attention outputs of m queries (rows
// of q) over all nb key blocks, looking at ctx before each block.
func (w *workspace) attendChunk(ctx context.Context, q []float32, m, D, nb int) error {
	for r := 0; r < m; r++ {
		w.rowMax[r] = float32(math.Inf(-1))
		w.rowSum[r] = 0
	}
	for b := 0; b < nb; b++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		nk := w.pk[b].N
		w.mul(w.pk[b], w.scores, nk, q, D, m, 0)
		for r := 0; r < m; r++ {
			s := w.scores[r*nk : (r+1)*nk]
			mx := w.rowMax[r]
			for _, v := range s {
				mx = max(mx, v)
			}
			sum := gemm.ExpSum(s, mx)
			if b > 0 && mx > w.rowMax[r] { // rescale what earlier blocks added
				f := float32(math.Exp(float64(w.rowMax[r] - mx)))
				w.rowSum[r] *= f
				o := w.outs[r*D : (r+1)*D]
				for i := range o {
					o[i] *= f
				}
			}
			w.rowMax[r] = mx
			w.rowSum[r] += sum
		}
		op := gemm.Accumulate
		if b == 0 {
			op = 0
		}
		w.mul(w.pv[b], w.outs, D, w.scores, nk, m, op)
	}
	for r := 0; r < m; r++ {
		inv := 1 / w.rowSum[r]
		o := w.outs[r*D : (r+1)*D]
		for i := range o {
			o[i] *= inv
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
