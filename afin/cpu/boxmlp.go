package cpu

import (
	"context"
	"fmt"
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/gemm"
)

// The paper's BoxMLP (Sec. 3.1, App. B.1), the building block of every
// other block, with the pre-norm LayerNorm it may apply on the fly: the
// forward (boxMLP, boxMLPs) and the backward (boxMLPBackward).

// box is an arch.BoxMLP with the first layer of each branch split by
// input part (paper's "exact shortcut", DESIGN.md): the pair branch's
// first layer is P_ij·W0 + U_i + V_j, with U_i = [row_i, X_i, gP]·W[1,3,5]
// + b (per token and i) and V_j = [col_j, X_j]·W[2,4] (per token and j),
// so the d² rows multiply C inputs instead of 6C.
type box struct {
	pair, node *mlp // pair.layers[0] is unused: replaced by w0, wU, wV
	w0, wU, wV *gemm.Packed
	c, h       int
	decl       arch.BoxMLP
}

func packBox(b arch.BoxMLP, c int) (*box, error) {
	if len(b.Pair.Layers) < 2 {
		return nil, fmt.Errorf("BoxMLP branches need ≥ 2 layers, got %d", len(b.Pair.Layers))
	}
	r := &box{c: c, h: b.Pair.Layers[0].Out(), decl: b}
	var err error
	if r.pair, err = packMLP(b.Pair); err != nil {
		return nil, err
	}
	if r.node, err = packMLP(b.Node); err != nil {
		return nil, err
	}
	l0 := b.Pair.Layers[0]
	if l0.In() != 6*c {
		return nil, fmt.Errorf("%s: %d inputs, want 6C = %d", l0.W.Name, l0.In(), 6*c)
	}
	rows := func(parts ...int) []float32 { // the C-row chunks of W0, stacked
		var w []float32
		for _, k := range parts {
			w = append(w, l0.W.Data[k*c*r.h:(k+1)*c*r.h]...)
		}
		return w
	}
	if r.w0, err = gemm.Pack(rows(0), c, r.h, nil); err != nil {
		return nil, err
	}
	if r.wU, err = gemm.Pack(rows(1, 3, 5), 3*c, r.h, l0.B.Data); err != nil {
		return nil, err
	}
	if r.wV, err = gemm.Pack(rows(2, 4), 2*c, r.h, nil); err != nil {
		return nil, err
	}
	return r, nil
}

// layerNorm is a LayerNorm over the channel axis, its gain and bias
// copied.
type layerNorm struct {
	g, b []float32
	decl arch.LayerNorm
}

// normalise writes LayerNorm(x) of each C-vector of x into dst (channel
// axis only, PyTorch's biased variance and epsilon). float32 sums are
// exact enough over C ≤ a few hundred channels and twice as fast.
func (ln *layerNorm) normalise(dst, x []float32, c int) {
	g, b := ln.g[:c], ln.b[:c]
	inv := 1 / float32(c)
	for o := 0; o+c <= len(x); o += c {
		v := x[o : o+c]
		var s float32
		for _, e := range v {
			s += e
		}
		mean := s * inv
		var q float32
		for _, e := range v {
			q += (e - mean) * (e - mean)
		}
		r := float32(1 / math.Sqrt(float64(q*inv+arch.LayerNormEps)))
		d := dst[o : o+c]
		for i, e := range v {
			d[i] = (e-mean)*r*g[i] + b[i]
		}
	}
}

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

// boxMLP evaluates BoxMLP b token chunk by token chunk (each token's
// output depends on that token only), handing each chunk to emit. emit
// may overwrite the chunk's input tokens: they are not read again.
func (n *Net) boxMLP(ctx context.Context, w *workspace, b *box, in boxIn, emit boxEmit) error {
	return n.boxMLPs(ctx, w, []*box{b}, in, []boxEmit{emit})
}

// boxMLPs is boxMLP for several BoxMLPs on the same input (the merge
// blocks' Q, K and V maps): each chunk's LayerNorm, summaries and
// gathered first-layer inputs are computed once for all of them. With
// several maps, emit must not modify the input.
func (n *Net) boxMLPs(ctx context.Context, w *workspace, bs []*box, in boxIn, emits []boxEmit) error {
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

// boxGrad is a BoxMLP's gradients; the pair branch's factorised first
// layer accumulates in dW0, dWU, dbU, dWV until finish folds them into
// the 6C-row tensor.
type boxGrad struct {
	node, pair         *mlpGrad
	dW0, dWU, dbU, dWV []float32
	b                  *box
}

func (g gradSet) boxGradOf(b *box) *boxGrad {
	c, h := b.c, b.h
	return &boxGrad{node: g.mlpGradOf(b.node), pair: g.mlpGradOf(b.pair), b: b,
		dW0: make([]float32, c*h), dWU: make([]float32, 3*c*h), dbU: make([]float32, h), dWV: make([]float32, 2*c*h)}
}

// finish adds the factorised first-layer gradients to the pair branch's
// first-layer tensors: input parts 0 (P_ij), 1 and 3 and 5 (U), 2 and 4 (V).
func (bg *boxGrad) finish(g gradSet) {
	c, h := bg.b.c, bg.b.h
	l0 := bg.b.decl.Pair.Layers[0]
	w, bias := g.of(l0.W), g.of(l0.B)
	add := func(part int, src []float32) { addTo(w[part*c*h:(part+1)*c*h], src) }
	add(0, bg.dW0)
	add(1, bg.dWU[:c*h])
	add(3, bg.dWU[c*h:2*c*h])
	add(5, bg.dWU[2*c*h:])
	add(2, bg.dWV[:c*h])
	add(4, bg.dWV[c*h:])
	addTo(bias, bg.dbU)
}

// lnGrad is a LayerNorm's gain and bias gradients.
type lnGrad struct{ g, b []float32 }

// backward adds to dx the gradient through LayerNorm at x for upstream
// dy, and accumulates the gain and bias gradients.
func (ln *layerNorm) backward(dx, x, dy []float32, c int, lg lnGrad) {
	inv := 1 / float64(c)
	for o := 0; o+c <= len(x); o += c {
		v, gy := x[o:o+c], dy[o:o+c]
		var s, q float64
		for _, e := range v {
			s += float64(e)
		}
		mean := s * inv
		for _, e := range v {
			q += (float64(e) - mean) * (float64(e) - mean)
		}
		r := 1 / math.Sqrt(q*inv+arch.LayerNormEps)
		var m1, m2 float64
		for i, e := range v {
			xh := (float64(e) - mean) * r
			lg.g[i] += gy[i] * float32(xh)
			lg.b[i] += gy[i]
			dxh := float64(gy[i]) * float64(ln.g[i])
			m1 += dxh
			m2 += dxh * xh
		}
		m1, m2 = m1*inv, m2*inv
		for i, e := range v {
			xh := (float64(e) - mean) * r
			dxh := float64(gy[i]) * float64(ln.g[i])
			dx[o+i] += float32(r * (dxh - m1 - xh*m2))
		}
	}
}

// boxBackIn is a BoxMLP's input for the backward pass: the input tokens,
// upstream gradients of the raw branch outputs (gOutP, gOutX), where to
// add the input gradients (gInP, gInX), and the LayerNorms' gradients
// when the input was normalised.
type boxBackIn struct {
	boxIn
	gOutP, gOutX, gInP, gInX []float32
	lgP, lgX                 lnGrad
}

// boxMLPBackward accumulates a BoxMLP's parameter gradients and input
// gradients, token chunk by token chunk, recomputing the forward.
func (n *Net) boxMLPBackward(ctx context.Context, w *workspace, gw *gradWS, b *box, bg *boxGrad, in boxBackIn) error {
	c, d := b.c, in.d
	tc := tokensPerChunk(d)
	for k0 := 0; k0 < in.k; k0 += tc {
		if err := ctx.Err(); err != nil {
			return err
		}
		k1 := min(in.k, k0+tc)
		t := k1 - k0
		xr, pr := in.x[k0*d*c:k1*d*c], in.p[k0*d*d*c:k1*d*d*c]
		xs, ps := xr, pr
		if in.lnX != nil {
			w.xc, w.pc = grow(w.xc, len(xs)), grow(w.pc, len(ps))
			in.lnX.normalise(w.xc, xs, c)
			in.lnP.normalise(w.pc, ps, c)
			xs, ps = w.xc, w.pc
		}
		summarise(w, ps, xs, t, d, c)
		gw.dxs, gw.dps = grow(gw.dxs, t*d*c), grow(gw.dps, t*d*d*c)
		clear(gw.dxs)
		clear(gw.dps)
		boxNodeBackward(w, gw, b, bg, xs, in.gOutX[k0*d*c:k1*d*c], t, d)
		if !in.nodeOnly {
			boxPairBackward(w, gw, b, bg, ps, xs, in.gOutP[k0*d*d*c:k1*d*d*c], t, d)
		}
		summariseBackward(gw, t, d, c)
		gx, gp := in.gInX[k0*d*c:k1*d*c], in.gInP[k0*d*d*c:k1*d*d*c]
		if in.lnX != nil {
			in.lnX.backward(gx, xr, gw.dxs, c, in.lgX)
			in.lnP.backward(gp, pr, gw.dps, c, in.lgP)
		} else {
			addTo(gx, gw.dxs)
			addTo(gp, gw.dps)
		}
	}
	return nil
}

// boxNodeBackward backpropagates the node branch: parameter gradients,
// and the input parts into gw.dxs and the summary gradients.
func boxNodeBackward(w *workspace, gw *gradWS, b *box, bg *boxGrad, x, gOut []float32, t, d int) {
	c := b.c
	gatherNode(w, x, t, d, c)
	gw.dNodeIn = grow(gw.dNodeIn, t*d*6*c)
	b.node.backward(gw, w.nodeIn, t*d, gOut, gw.dNodeIn, bg.node)
	gw.drow, gw.dcol, gw.ddiag = grow(gw.drow, t*d*c), grow(gw.dcol, t*d*c), grow(gw.ddiag, t*d*c)
	gw.dgp, gw.dgn = grow(gw.dgp, t*c), grow(gw.dgn, t*c)
	clear(gw.dgp)
	clear(gw.dgn)
	for r := 0; r < t*d; r++ {
		g := gw.dNodeIn[r*6*c : (r+1)*6*c]
		copy(gw.dxs[r*c:(r+1)*c], g[:c])
		copy(gw.ddiag[r*c:(r+1)*c], g[c:2*c])
		copy(gw.drow[r*c:(r+1)*c], g[2*c:3*c])
		copy(gw.dcol[r*c:(r+1)*c], g[3*c:4*c])
		addTo(gw.dgp[(r/d)*c:(r/d+1)*c], g[4*c:5*c])
		addTo(gw.dgn[(r/d)*c:(r/d+1)*c], g[5*c:6*c])
	}
}

// boxPairBackward backpropagates the factorised pair branch.
func boxPairBackward(w *workspace, gw *gradWS, b *box, bg *boxGrad, p, x, gOut []float32, t, d int) {
	c, h := b.c, b.h
	gatherUV(w, x, t, d, c)
	w.u, w.v = grow(w.u, t*d*h), grow(w.v, t*d*h)
	b.wU.Mul(w.u, h, w.uIn, 3*c, t*d, gemm.WithBias)
	b.wV.Mul(w.v, h, w.vIn, 2*c, t*d, 0)
	rows := t * d * d
	gw.z1, gw.a1 = grow(gw.z1, rows*h), grow(gw.a1, rows*h)
	b.w0.Mul(gw.z1, h, p, c, rows, 0)
	for r := 0; r < rows; r++ {
		k, i, j := r/(d*d), (r/d)%d, r%d
		z := gw.z1[r*h : (r+1)*h]
		addTo(z, w.u[(k*d+i)*h:(k*d+i+1)*h])
		addTo(z, w.v[(k*d+j)*h:(k*d+j+1)*h])
	}
	copy(gw.a1, gw.z1)
	gemm.SiLU(gw.a1)
	gw.da1 = grow(gw.da1, rows*h)
	b.pair.backwardFrom(gw, 1, gw.a1, rows, gOut, gw.da1, bg.pair)
	gw.dz = grow(gw.dz, rows*h)
	siluBackward(gw.dz, gw.da1, gw.z1)
	// dz is the gradient of the first layer's pre-activation.
	layerGrads(gw, b.w0, p, rows, bg.dW0, nil)
	gw.dpIn = grow(gw.dpIn, rows*c)
	gw.transposed(b.w0).Mul(gw.dpIn, c, gw.dz, h, rows, 0)
	addTo(gw.dps, gw.dpIn)
	gw.dU, gw.dV = grow(gw.dU, t*d*h), grow(gw.dV, t*d*h)
	clear(gw.dU)
	clear(gw.dV)
	for r := 0; r < rows; r++ {
		k, i, j := r/(d*d), (r/d)%d, r%d
		g := gw.dz[r*h : (r+1)*h]
		addTo(gw.dU[(k*d+i)*h:(k*d+i+1)*h], g)
		addTo(gw.dV[(k*d+j)*h:(k*d+j+1)*h], g)
	}
	gw.dz = append(gw.dz[:0], gw.dU...)
	layerGrads(gw, b.wU, w.uIn, t*d, bg.dWU, bg.dbU)
	gw.dz = append(gw.dz[:0], gw.dV...)
	layerGrads(gw, b.wV, w.vIn, t*d, bg.dWV, nil)
	gw.duIn, gw.dvIn = grow(gw.duIn, t*d*3*c), grow(gw.dvIn, t*d*2*c)
	gw.transposed(b.wU).Mul(gw.duIn, 3*c, gw.dU, h, t*d, 0)
	gw.transposed(b.wV).Mul(gw.dvIn, 2*c, gw.dV, h, t*d, 0)
	for r := 0; r < t*d; r++ {
		u, v := gw.duIn[r*3*c:(r+1)*3*c], gw.dvIn[r*2*c:(r+1)*2*c]
		addTo(gw.drow[r*c:(r+1)*c], u[:c])
		addTo(gw.dxs[r*c:(r+1)*c], u[c:2*c])
		addTo(gw.dgp[(r/d)*c:(r/d+1)*c], u[2*c:])
		addTo(gw.dcol[r*c:(r+1)*c], v[:c])
		addTo(gw.dxs[r*c:(r+1)*c], v[c:])
	}
}

// summariseBackward spreads the summary gradients (row, col, diag, gP,
// gN) back onto the tokens' gradients gw.dps, gw.dxs.
func summariseBackward(gw *gradWS, t, d, c int) {
	inv, inv2 := 1/float32(d), 1/float32(d*d)
	for k := 0; k < t; k++ {
		gp, gn := gw.dgp[k*c:(k+1)*c], gw.dgn[k*c:(k+1)*c]
		for i := 0; i < d; i++ {
			ri := gw.drow[(k*d+i)*c : (k*d+i+1)*c]
			for j := 0; j < d; j++ {
				cj := gw.dcol[(k*d+j)*c : (k*d+j+1)*c]
				dst := gw.dps[((k*d+i)*d+j)*c : ((k*d+i)*d+j+1)*c]
				for ch := range dst {
					dst[ch] += (ri[ch]+cj[ch])*inv + gp[ch]*inv2
				}
			}
			addTo(gw.dps[((k*d+i)*d+i)*c:((k*d+i)*d+i+1)*c], gw.ddiag[(k*d+i)*c:(k*d+i+1)*c])
			dx := gw.dxs[(k*d+i)*c : (k*d+i+1)*c]
			for ch := range dx {
				dx[ch] += gn[ch] * inv
			}
		}
	}
}

// boxFLOPs counts one BoxMLP on K tokens as this package evaluates it:
// the node branch on 6C inputs, the factorised pair branch (C inputs per
// (i,j) plus the per-i and per-j parts U and V on 3C and 2C inputs).
func boxFLOPs(K, d, c, h, l int) int64 {
	node := mlpFLOPs(K*d, 6*c, c, h, l)
	uv := 2 * int64(K*d) * int64(5*c*h)
	pair := mlpFLOPs(K*d*d, c, c, h, l)
	return node + uv + pair
}

// unfactorisedBoxFLOPs is boxFLOPs with the pair branch's first layer on
// the literal 6C concatenation, as the authors' PyTorch code runs it.
func unfactorisedBoxFLOPs(K, d, c, h, l int) int64 {
	return mlpFLOPs(K*d, 6*c, c, h, l) + mlpFLOPs(K*d*d, 6*c, c, h, l)
}

// boxWorkspaceFloats is a BoxMLP's chunk buffers for tc tokens: the
// gathered tokens and their deltas, the summaries (row, col, diag and the
// node inputs, U and V inputs: 3 + 6 + 5 widths), the pooled summaries,
// and U and V at the widest hidden width.
func boxWorkspaceFloats(cfg arch.Config, d int) int64 {
	dd, c, tc := int64(d), int64(cfg.C), int64(tokensPerChunk(d))
	hid := int64(max(cfg.BoxH, cfg.MergeH, cfg.AdapterH, cfg.DecH))
	return 2*tc*(dd+dd*dd)*c + tc*dd*c*(3+6+5) + 2*tc*c + 2*tc*dd*hid
}
