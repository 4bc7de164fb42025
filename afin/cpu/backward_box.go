package cpu

import (
	"context"
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/gemm"
)

// gradSet accumulates one gradient array per declared tensor.
type gradSet map[*arch.Tensor][]float32

func (g gradSet) of(t *arch.Tensor) []float32 {
	a := g[t]
	if a == nil {
		a = make([]float32, t.Size())
		g[t] = a
	}
	return a
}

// mlpGradOf points an mlpGrad at the gradient arrays of m's tensors.
func (g gradSet) mlpGradOf(m *mlp) *mlpGrad {
	mg := &mlpGrad{}
	for _, l := range m.decl.Layers {
		mg.dW, mg.dB = append(mg.dW, g.of(l.W)), append(mg.dB, g.of(l.B))
	}
	return mg
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

// boxBackward accumulates a BoxMLP's parameter gradients and input
// gradients, token chunk by token chunk, recomputing the forward.
func (n *Net) boxBackward(ctx context.Context, w *workspace, gw *gradWS, b *box, bg *boxGrad, in boxBackIn) error {
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
		summariesBackward(gw, t, d, c)
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

// summariesBackward spreads the summary gradients (row, col, diag, gP,
// gN) back onto the tokens' gradients gw.dps, gw.dxs.
func summariesBackward(gw *gradWS, t, d, c int) {
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
