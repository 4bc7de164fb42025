package cpu

import (
	"context"

	"github.com/afin-bench/afin/internal/gemm"
)

// boxEmit receives a BoxMLP's outputs for tokens [k0, k1): dP (raw pair
// branch, not symmetrised; nil when nodeOnly) and dX, both chunk-local.
type boxEmit func(k0, k1 int, dP, dX []float32)

// boxIn is a BoxMLP's input: tokens P, X of K tokens in dimension d,
// optionally layer-normalised on the fly (so no normalised copy of all
// tokens is kept).
type boxIn struct {
	p, x     []float32
	k, d     int
	lnP, lnX *layerNorm
	nodeOnly bool // skip the pair branch (dP is nil): its output is unused
}

// runBox evaluates BoxMLP b token chunk by token chunk (each token's
// output depends on that token only), handing each chunk to emit. emit
// may overwrite the chunk's input tokens: they are not read again.
func (n *Net) runBox(ctx context.Context, w *workspace, b *box, in boxIn, emit boxEmit) error {
	return n.runBoxes(ctx, w, []*box{b}, in, []boxEmit{emit})
}

// runBoxes is runBox for several BoxMLPs on the same input (the merge
// blocks' Q, K and V maps): each chunk's LayerNorm, summaries and
// gathered first-layer inputs are computed once for all of them. With
// several maps, emit must not modify the input.
func (n *Net) runBoxes(ctx context.Context, w *workspace, bs []*box, in boxIn, emits []boxEmit) error {
	c, d := bs[0].c, in.d
	tc := tokensPerChunk(d)
	for k0 := 0; k0 < in.k; k0 += tc {
		if err := ctx.Err(); err != nil {
			return err
		}
		k1 := min(in.k, k0+tc)
		t := k1 - k0
		xs, ps := in.x[k0*d*c:k1*d*c], in.p[k0*d*d*c:k1*d*d*c]
		if in.lnX != nil {
			w.xc, w.pc = grow(w.xc, len(xs)), grow(w.pc, len(ps))
			in.lnX.normalise(w.xc, xs, c)
			in.lnP.normalise(w.pc, ps, c)
			xs, ps = w.xc, w.pc
		}
		summarise(w, ps, xs, t, d, c)
		gatherNode(w, xs, t, d, c)
		if !in.nodeOnly {
			gatherUV(w, xs, t, d, c)
		}
		for i, b := range bs {
			w.dx = grow(w.dx, t*d*c)
			b.node.run(w, w.dx, w.nodeIn, t*d)
			if in.nodeOnly {
				emits[i](k0, k1, nil, w.dx)
				continue
			}
			w.dp = grow(w.dp, t*d*d*c)
			boxPair(w, b, ps, t, d)
			emits[i](k0, k1, w.dp, w.dx)
		}
	}
	return nil
}

// summarise fills the per-token summaries of t tokens (paper App. B.1):
// row_i = mean_j P_ij, col_j = mean_i P_ij, diag_i = P_ii, gP, gN.
func summarise(w *workspace, p, x []float32, t, d, c int) {
	w.row, w.col, w.diag = grow(w.row, t*d*c), grow(w.col, t*d*c), grow(w.diag, t*d*c)
	w.gp, w.gn = grow(w.gp, t*c), grow(w.gn, t*c)
	clear(w.row)
	clear(w.col)
	clear(w.gp)
	clear(w.gn)
	inv, inv2 := 1/float32(d), 1/float32(d*d)
	for k := 0; k < t; k++ {
		pt := p[k*d*d*c:]
		gp := w.gp[k*c : (k+1)*c]
		for i := 0; i < d; i++ {
			row := w.row[(k*d+i)*c : (k*d+i+1)*c]
			for j := 0; j < d; j++ {
				v := pt[(i*d+j)*c : (i*d+j+1)*c]
				col := w.col[(k*d+j)*c : (k*d+j+1)*c]
				for ch, e := range v {
					row[ch] += e
					col[ch] += e
				}
			}
			copy(w.diag[(k*d+i)*c:], pt[(i*d+i)*c:(i*d+i+1)*c])
			for ch := range row {
				gp[ch] += row[ch]
				row[ch] *= inv
			}
		}
		gn := w.gn[k*c : (k+1)*c]
		for i := 0; i < d; i++ {
			for ch, e := range x[(k*d+i)*c : (k*d+i+1)*c] {
				gn[ch] += e
			}
		}
		for ch := range gp {
			gp[ch] *= inv2
			gn[ch] *= inv
		}
	}
	for i := range w.col {
		w.col[i] *= inv
	}
}

// gather writes, for each of rows rows, the concatenation of the given
// C-wide parts (each a function of the row index) into dst.
func gather(dst []float32, rows, c int, parts ...func(r int) []float32) {
	w := len(parts) * c
	for r := 0; r < rows; r++ {
		for q, part := range parts {
			copy(dst[r*w+q*c:r*w+(q+1)*c], part(r))
		}
	}
}

// gatherNode builds the node branch's input rows
// [X_i, diag_i, row_i, col_i, gP, gN] in w.nodeIn.
func gatherNode(w *workspace, x []float32, t, d, c int) {
	at := func(s []float32) func(r int) []float32 { return func(r int) []float32 { return s[r*c : (r+1)*c] } }
	perTok := func(s []float32) func(r int) []float32 {
		return func(r int) []float32 { return s[(r/d)*c : (r/d+1)*c] }
	}
	w.nodeIn = grow(w.nodeIn, t*d*6*c)
	gather(w.nodeIn, t*d, c, at(x), at(w.diag), at(w.row), at(w.col), perTok(w.gp), perTok(w.gn))
}

// gatherUV builds the inputs of the pair branch's per-i and per-j
// first-layer terms: [row_i, X_i, gP] in w.uIn and [col_j, X_j] in w.vIn.
func gatherUV(w *workspace, x []float32, t, d, c int) {
	at := func(s []float32) func(r int) []float32 { return func(r int) []float32 { return s[r*c : (r+1)*c] } }
	perTok := func(s []float32) func(r int) []float32 {
		return func(r int) []float32 { return s[(r/d)*c : (r/d+1)*c] }
	}
	w.uIn, w.vIn = grow(w.uIn, t*d*3*c), grow(w.vIn, t*d*2*c)
	gather(w.uIn, t*d, c, at(w.row), at(x), perTok(w.gp))
	gather(w.vIn, t*d, c, at(w.col), at(x))
}

// boxPair runs the pair branch with its first layer factorised:
// h_ij = SiLU(P_ij·W0 + U_i + V_j), then the remaining layers, into w.dp
// (inputs of U and V from gatherUV).
func boxPair(w *workspace, b *box, p []float32, t, d int) {
	c, h := b.c, b.h
	w.u, w.v = grow(w.u, t*d*h), grow(w.v, t*d*h)
	w.mul(b.wU, w.u, h, w.uIn, 3*c, t*d, gemm.WithBias)
	w.mul(b.wV, w.v, h, w.vIn, 2*c, t*d, 0)
	rows := t * d * d
	hid := max(h, b.pair.hidden)
	w.h1, w.h2 = grow(w.h1, rows*hid), grow(w.h2, rows*hid)
	w.mul(b.w0, w.h1, h, p, c, rows, 0)
	for k := 0; k < t; k++ {
		for i := 0; i < d; i++ {
			ui := w.u[(k*d+i)*h : (k*d+i+1)*h]
			for j := 0; j < d; j++ {
				r := (k*d+i)*d + j
				gemm.AddSiLU(w.h1[r*h:(r+1)*h], ui, w.v[(k*d+j)*h:(k*d+j+1)*h])
			}
		}
	}
	b.pair.tail(w, w.dp, w.h1, w.h2, rows)
}
