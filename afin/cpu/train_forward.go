package cpu

import (
	"context"

	"github.com/afin-bench/afin/internal/gemm"
)

// blockSave keeps what a merge block's backward needs.
type blockSave struct {
	p, x       []float32 // block input
	p2, x2     []float32 // after the attention residual (FFN input)
	qh, kh, vh []float32 // head-major Q (scaled), K, V
	a          []float32 // attention probabilities, heads×K×K
	mp, mx     []float32 // mixed values (the output map's input)
}

// taskSave keeps one task's forward activations for the backward pass:
// the inputs of every residual layer (the layers recompute the rest).
type taskSave struct {
	encP, encX [][]float32
	blocks     []blockSave
}

func keep(dst, src []float32) []float32 { return append(grow(dst, 0), src...) }

// trainForward is encode that also saves, in sv, the activations the
// backward pass needs. Attention is computed over all keys at once
// (probabilities kept), which suits training shapes.
func (n *Net) trainForward(ctx context.Context, w *workspace, sv *taskSave, K, d int) error {
	c := n.cfg.C
	for len(sv.encP) < len(n.encoder) {
		sv.encP, sv.encX = append(sv.encP, nil), append(sv.encX, nil)
	}
	for l, e := range n.encoder {
		sv.encP[l], sv.encX[l] = keep(sv.encP[l], w.p), keep(sv.encX[l], w.x)
		in := boxIn{p: w.p, x: w.x, k: K, d: d}
		err := n.runBox(ctx, w, e, in, func(k0, k1 int, dP, dX []float32) {
			addSym(w.p[k0*d*d*c:k1*d*d*c], dP, d, c, false)
			addTo(w.x[k0*d*c:k1*d*c], dX)
		})
		if err != nil {
			return err
		}
	}
	for len(sv.blocks) < len(n.merge) {
		sv.blocks = append(sv.blocks, blockSave{})
	}
	for bi := range n.merge {
		blk, bs := &n.merge[bi], &sv.blocks[bi]
		bs.p, bs.x = keep(bs.p, w.p), keep(bs.x, w.x)
		if err := n.qkv(ctx, w, blk, K, d); err != nil {
			return err
		}
		bs.qh, bs.kh, bs.vh = keep(bs.qh, w.qh), keep(bs.kh, w.kh), keep(bs.vh, w.vh)
		n.attendKeep(w, bs, K, d)
		bs.mp, bs.mx = keep(bs.mp, w.mp), keep(bs.mx, w.mx)
		if err := n.outResidual(ctx, w, blk, K, d); err != nil {
			return err
		}
		bs.p2, bs.x2 = keep(bs.p2, w.p), keep(bs.x2, w.x)
		if err := n.ffnResidual(ctx, w, blk, K, d); err != nil {
			return err
		}
	}
	return n.pool2(ctx, w, K, d)
}

// attendKeep is attend over all keys at once, keeping the probabilities
// in bs.a.
func (n *Net) attendKeep(w *workspace, bs *blockSave, K, d int) {
	c, h := n.cfg.C, n.cfg.Heads
	u := c / h
	D := (d + d*d) * u
	bs.a = grow(bs.a, h*K*K)
	w.outs = grow(w.outs, K*D)
	if len(w.pk) == 0 {
		w.pk, w.pv = append(w.pk, &gemm.Packed{}), append(w.pv, &gemm.Packed{})
	}
	for hd := 0; hd < h; hd++ {
		q, k, v := w.qh[hd*K*D:(hd+1)*K*D], w.kh[hd*K*D:(hd+1)*K*D], w.vh[hd*K*D:(hd+1)*K*D]
		a := bs.a[hd*K*K : (hd+1)*K*K]
		_ = w.pk[0].Repack(k, D, K, true)
		_ = w.pv[0].Repack(v, K, D, false)
		w.mul(w.pk[0], a, K, q, D, K, 0)
		for r := 0; r < K; r++ {
			row := a[r*K : (r+1)*K]
			mx := row[0]
			for _, s := range row {
				mx = max(mx, s)
			}
			inv := 1 / gemm.ExpSum(row, mx)
			for i := range row {
				row[i] *= inv
			}
		}
		w.mul(w.pv[0], w.outs, D, a, K, K, 0)
		fromHead(w, w.outs, 0, K, d, c, hd*u, u)
	}
}
