package cpu

import (
	"context"
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/gemm"
)

// flowGrad is one task's flow-decoder backward state: the inverse pass's
// saved values per coupling, and gradients of the per-task context terms.
type flowGrad struct {
	vin, sh, shat, ls [][]float32 // per coupling t: input points, shift, raw and bounded log-scale
	v0                []float32   // points after inverting the final affine
	dCn, dCp          [][]float32 // per coupling: gradients of the context first-layer terms
	dcNode, dcPair    []float32
	// Conditioner recomputation and backward buffers.
	sx, zn, an, zp, ap, node, pair, node2      []float32
	dhead, dnode2, dnode, dpair, dan, dap, dsx []float32
	tmp                                        []float32
}

// flowTaskGrad runs one task through the encoder and the flow's inverse
// at its target z (batch.Z) with flow strength s, backpropagates dlq,
// and returns log q(z).
func (n *Net) flowTaskGrad(ctx context.Context, w *workspace, st *trainState, batch *arch.Batch, t task, s float32, dlq float64) (float64, error) {
	d := batch.D
	K, err := n.trainEncode(ctx, w, st, batch, t)
	if err != nil {
		return 0, err
	}
	n.flowContext(w, d)
	fg := &st.flow
	lq, err := n.flowInverseKeep(ctx, w, fg, batch.Z[t.b*d:(t.b+1)*d], s, d)
	if err != nil {
		return 0, err
	}
	daff, err := n.flowInverseBackward(ctx, w, st, fg, s, float32(dlq), d)
	if err != nil {
		return 0, err
	}
	dPool, dXPool := n.flowContextBackward(w, st, fg, daff, d)
	return lq, n.backFromPool(ctx, w, st, batch, t, K, d, dPool, dXPool)
}

// flowInverseKeep inverts the flow at one point z (strength s), keeping
// each coupling's input and conditioner outputs, and returns log q(z).
func (n *Net) flowInverseKeep(ctx context.Context, w *workspace, fg *flowGrad, z []float32, s float32, d int) (float64, error) {
	f := &w.flow
	T := len(n.flow.couplings)
	for len(fg.vin) < T {
		fg.vin, fg.sh, fg.shat, fg.ls = append(fg.vin, nil), append(fg.sh, nil), append(fg.shat, nil), append(fg.ls, nil)
	}
	f.x = grow(f.x, d)
	var logdet float64
	for i := 0; i < d; i++ {
		f.x[i] = (z[i] - s*f.tau[i]) * float32(math.Exp(-float64(s*f.ell[i])))
		logdet -= float64(s * f.ell[i])
	}
	fg.v0 = keep(fg.v0, f.x)
	for t := T - 1; t >= 0; t-- {
		m := arch.FlowMask(d, t)
		fg.vin[t] = keep(fg.vin[t], f.x)
		if err := n.step(ctx, w, t, m, 1, d); err != nil {
			return 0, err
		}
		fg.sh[t], fg.ls[t] = keep(fg.sh[t], f.shift[:d]), keep(fg.ls[t], f.ls[:d])
		fg.shat[t] = grow(fg.shat[t], d)
		for i := 0; i < d; i++ {
			fg.shat[t][i] = f.head[2*i+1]
			if m[i] == 0 {
				sl := s * f.ls[i]
				f.x[i] = (f.x[i] - s*f.shift[i]) * float32(math.Exp(-float64(sl)))
				logdet -= float64(sl)
			}
		}
	}
	return float64(stdNormalLogPDF(f.x[:d])) + logdet, nil
}

// tanhGrad is d/dx of b·tanh(x/b) with b the flow's log-scale bound.
func tanhGrad(x float32) float32 {
	th := math.Tanh(float64(x) / arch.FlowMaxLogScale)
	return float32(1 - th*th)
}

// flowInverseBackward backpropagates dlq through the inverse pass: the
// couplings' parameters and context terms, and returns the gradient of
// the final affine's raw outputs (d×2: shift, raw log-scale).
func (n *Net) flowInverseBackward(ctx context.Context, w *workspace, st *trainState, fg *flowGrad, s, dlq float32, d int) ([]float32, error) {
	f := &w.flow
	T := len(n.flow.couplings)
	dv := make([]float32, d)
	for i := range dv {
		dv[i] = -f.x[i] * dlq // ∂ log N(v)/∂v = −v
	}
	dsh, dshat := make([]float32, d), make([]float32, d)
	for t := 0; t < T; t++ {
		m := arch.FlowMask(d, t)
		vin, sh, ls := fg.vin[t], fg.sh[t], fg.ls[t]
		for i := 0; i < d; i++ {
			dsh[i], dshat[i] = 0, 0
			if m[i] == 0 {
				e := float32(math.Exp(-float64(s * ls[i])))
				dsls := -dv[i]*(vin[i]-s*sh[i])*e - dlq
				dsh[i] = -dv[i] * s * e
				dshat[i] = s * dsls * tanhGrad(fg.shat[t][i])
				dv[i] *= e
			}
		}
		dvk, err := n.conditionBackward(ctx, w, st, fg, t, m, d, dsh, dshat)
		if err != nil {
			return nil, err
		}
		for i := 0; i < d; i++ {
			dv[i] += dvk[i] * m[i]
		}
	}
	daff := make([]float32, 2*d)
	for i := 0; i < d; i++ {
		e := float32(math.Exp(-float64(s * f.ell[i])))
		daff[2*i] = -s * e * dv[i]
		dl := -s*fg.v0[i]*dv[i] - s*dlq
		daff[2*i+1] = dl * tanhGrad(f.aff[2*i+1])
	}
	return daff, nil
}

// conditionBackward recomputes coupling t's conditioner on the kept
// coordinates vk = fg.vin[t]⊙m of one point, backpropagates the
// gradients of its shift and raw log-scale, accumulates its parameter
// and context-term gradients, and returns the gradient of vk.
func (n *Net) conditionBackward(ctx context.Context, w *workspace, st *trainState, fg *flowGrad, t int, m []float32, d int, dsh, dshat []float32) ([]float32, error) {
	fd := n.flow
	cp, g := &fd.couplings[t], fd.g
	h, f := cp.h, &w.flow
	vk := make([]float32, d)
	for i := range vk {
		vk[i] = fg.vin[t][i] * m[i]
	}
	fg.sx = grow(fg.sx, d)
	for i, v := range vk {
		fg.sx[i] = symlog32(v)
	}
	// Recompute the two streams' first-layer pre-activations.
	fg.zn, fg.zp = grow(fg.zn, d*h), grow(fg.zp, d*d*h)
	for i := 0; i < d; i++ {
		r := fg.zn[i*h : (i+1)*h]
		copy(r, f.cn[t][i*h:(i+1)*h])
		axpy(r, fg.sx[i], cp.nodeX)
		for j := 0; j < d; j++ {
			q := fg.zp[(i*d+j)*h : (i*d+j+1)*h]
			copy(q, f.cp[t][(i*d+j)*h:(i*d+j+1)*h])
			axpy(q, fg.sx[i], cp.pairXi)
			axpy(q, fg.sx[j], cp.pairXj)
		}
	}
	fg.an, fg.ap = keep(fg.an, fg.zn), keep(fg.ap, fg.zp)
	gemm.SiLU(fg.an)
	gemm.SiLU(fg.ap)
	fg.node, fg.pair = grow(fg.node, d*g), grow(fg.pair, d*d*g)
	fg.tmp = keep(fg.tmp, fg.an)
	f.h2 = grow(f.h2, d*d*max(h, cp.pair.hidden, cp.node.hidden))
	cp.node.tail(w, fg.node, fg.tmp, f.h2, d)
	fg.tmp = keep(fg.tmp, fg.ap)
	cp.pair.tail(w, fg.pair, fg.tmp, f.h2, d*d)
	fg.node2 = keep(fg.node2, fg.node)
	in := boxIn{p: fg.pair, x: fg.node, k: 1, d: d, nodeOnly: true}
	if err := n.runBox(ctx, w, cp.box, in, func(_, _ int, _, dX []float32) { addTo(fg.node2, dX) }); err != nil {
		return nil, err
	}
	// Backward: head, refining BoxMLP (node output only), stream tails.
	fg.dhead = grow(fg.dhead, 2*d)
	for i := 0; i < d; i++ {
		fg.dhead[2*i], fg.dhead[2*i+1] = dsh[i], dshat[i]
	}
	fg.dnode2 = grow(fg.dnode2, d*g)
	cp.head.backward(&st.gw, fg.node2, d, fg.dhead, fg.dnode2, st.g.mlpGradOf(cp.head))
	fg.dnode, fg.dpair = keep(fg.dnode, fg.dnode2), grow(fg.dpair, d*d*g)
	clear(fg.dpair)
	bin := boxBackIn{boxIn: in, gOutX: fg.dnode2, gInP: fg.dpair, gInX: fg.dnode}
	if err := n.boxBackward(ctx, w, &st.gw, cp.box, st.box(cp.box), bin); err != nil {
		return nil, err
	}
	fg.dan, fg.dap = grow(fg.dan, d*h), grow(fg.dap, d*d*h)
	cp.node.backwardFrom(&st.gw, 1, fg.an, d, fg.dnode, fg.dan, st.g.mlpGradOf(cp.node))
	cp.pair.backwardFrom(&st.gw, 1, fg.ap, d*d, fg.dpair, fg.dap, st.g.mlpGradOf(cp.pair))
	siluBackward(fg.dan, fg.dan, fg.zn)
	siluBackward(fg.dap, fg.dap, fg.zp)
	return n.firstLayersBackward(st, fg, t, vk, d), nil
}

// firstLayersBackward takes the gradients of coupling t's first-layer
// pre-activations (fg.dan node, fg.dap pair), accumulates the gradients
// of the sample-dependent weight rows and of the context terms, and
// returns the gradient of the kept coordinates.
func (n *Net) firstLayersBackward(st *trainState, fg *flowGrad, t int, vk []float32, d int) []float32 {
	cp := &n.flow.couplings[t]
	h, G := cp.h, n.flow.g
	nw, pw := st.g.of(cp.decl.Node.Layers[0].W), st.g.of(cp.decl.Pair.Layers[0].W)
	dNodeX, dPairXi, dPairXj := nw[G*h:(G+1)*h], pw[G*h:(G+1)*h], pw[(G+1)*h:(G+2)*h]
	for len(fg.dCn) <= t {
		fg.dCn, fg.dCp = append(fg.dCn, nil), append(fg.dCp, nil)
	}
	fg.dCn[t], fg.dCp[t] = keep(fg.dCn[t], fg.dan), keep(fg.dCp[t], fg.dap)
	fg.dsx = grow(fg.dsx, d)
	for i := 0; i < d; i++ {
		dz := fg.dan[i*h : (i+1)*h]
		axpy(dNodeX, fg.sx[i], dz)
		fg.dsx[i] = dot(dz, cp.nodeX)
		for j := 0; j < d; j++ {
			dz := fg.dap[(i*d+j)*h : (i*d+j+1)*h]
			axpy(dPairXi, fg.sx[i], dz)
			axpy(dPairXj, fg.sx[j], dz)
			fg.dsx[i] += dot(dz, cp.pairXi)
			fg.dsx[j] += dot(dz, cp.pairXj)
		}
	}
	dvk := make([]float32, d)
	for i, v := range vk {
		dvk[i] = fg.dsx[i] / (1 + float32(math.Abs(float64(v)))) // symlog'
	}
	return dvk
}

func dot(a, b []float32) float32 {
	var s float32
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// flowContextBackward backpropagates the couplings' context-term
// gradients and the final affine's gradient daff through the context
// MLPs to the pooled tokens, returning their gradients.
func (n *Net) flowContextBackward(w *workspace, st *trainState, fg *flowGrad, daff []float32, d int) (dPool, dXPool []float32) {
	fd, f, c := n.flow, &w.flow, n.cfg.C
	G := fd.g
	fg.dcNode, fg.dcPair = grow(fg.dcNode, d*G), grow(fg.dcPair, d*d*G)
	clear(fg.dcNode)
	clear(fg.dcPair)
	tmpN, tmpP := make([]float32, d*G), make([]float32, d*d*G)
	for t := range fd.couplings {
		cp := &fd.couplings[t]
		h := cp.h
		m := arch.FlowMask(d, t)
		nl, pl := cp.decl.Node.Layers[0], cp.decl.Pair.Layers[0]
		nw, pw := st.g.of(nl.W), st.g.of(pl.W)
		st.gw.dz = keep(st.gw.dz, fg.dCn[t])
		layerGrads(&st.gw, cp.nodeCtx, f.cNode, d, nw[:G*h], st.g.of(nl.B))
		st.gw.transposed(cp.nodeCtx).Mul(tmpN, G, fg.dCn[t], h, d, 0)
		addTo(fg.dcNode, tmpN)
		st.gw.dz = keep(st.gw.dz, fg.dCp[t])
		layerGrads(&st.gw, cp.pairCtx, f.cPair, d*d, pw[:G*h], st.g.of(pl.B))
		st.gw.transposed(cp.pairCtx).Mul(tmpP, G, fg.dCp[t], h, d*d, 0)
		addTo(fg.dcPair, tmpP)
		for i := 0; i < d; i++ {
			axpy(nw[(G+1)*h:(G+2)*h], symlog32(m[i]), fg.dCn[t][i*h:(i+1)*h])
			for j := 0; j < d; j++ {
				ch := [4]float32{symlog32(m[i]), symlog32(m[j]), symlog32(m[i] * m[j]), 0}
				if i == j {
					ch[3] = symlog32(1)
				}
				for k, v := range ch {
					axpy(pw[(G+2+k)*h:(G+3+k)*h], v, fg.dCp[t][(i*d+j)*h:(i*d+j+1)*h])
				}
			}
		}
	}
	dPool, dXPool = make([]float32, d*d*c), make([]float32, d*c)
	symInPlace(fg.dcPair, d, G) // cPair = sym(MLP(pool P))
	fd.ctxPair.backward(&st.gw, w.poolP, d*d, fg.dcPair, dPool, st.g.mlpGradOf(fd.ctxPair))
	dNodeIn, drich, tmp := make([]float32, d*3*c), make([]float32, d*5*c), make([]float32, d*5*c)
	fd.ctxNode.backward(&st.gw, f.nodeIn, d, fg.dcNode, dNodeIn, st.g.mlpGradOf(fd.ctxNode))
	for i := 0; i < d; i++ {
		copy(drich[i*5*c:i*5*c+3*c], dNodeIn[i*3*c:(i+1)*3*c])
	}
	fd.affine.backward(&st.gw, w.rich, d, daff, tmp, st.g.mlpGradOf(fd.affine))
	addTo(drich, tmp)
	richBackward(drich, dPool, dXPool, d, c)
	return dPool, dXPool
}
