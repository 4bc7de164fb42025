package cpu

import (
	"context"
	"fmt"
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/gemm"
)

// The paper's flow decoder (App. B.3, conditional RealNVP): forward
// (flowContext, conditioner; Net.FlowSample and Net.FlowLogQ at
// inference, flowInverse in training) and backward (flowInverseBackward,
// conditionerBackward, flowContextBackward).

// coupling is one packed flow coupling. The first layers of the node and
// pair conditioner streams are split by input part: the context part
// (and, for the pair stream, the constant mask channels) is computed once
// per task, the sample-dependent part (symlog of the kept coordinates) is
// a rank-one update per sample.
type coupling struct {
	nodeCtx, pairCtx *gemm.Packed // context rows of the first layers, with bias
	nodeX, nodeM     []float32    // node first-layer rows for symlog(x_i), symlog(m_i)
	pairXi, pairXj   []float32    // pair first-layer rows for symlog(x_i), symlog(x_j)
	pairConst        []float32    // pair first-layer rows (4×H) for the mask channels
	node, pair       *mlp         // layers[0] unused: replaced by the split above
	box              *box
	head             *mlp
	h                int
	decl             arch.Coupling
}

type flowDec struct {
	ctxNode, ctxPair, affine *mlp
	couplings                []coupling
	g                        int
}

func packFlow(f *arch.FlowDecoder, g int) (*flowDec, error) {
	fd := &flowDec{g: g}
	var err error
	if fd.ctxNode, err = packMLP(f.ContextNode); err != nil {
		return nil, err
	}
	if fd.ctxPair, err = packMLP(f.ContextPair); err != nil {
		return nil, err
	}
	if fd.affine, err = packMLP(f.Affine); err != nil {
		return nil, err
	}
	for _, cp := range f.Couplings {
		c, err := packCoupling(cp, g)
		if err != nil {
			return nil, err
		}
		fd.couplings = append(fd.couplings, c)
	}
	return fd, nil
}

func packCoupling(cp arch.Coupling, g int) (coupling, error) {
	c := coupling{decl: cp}
	var err error
	if len(cp.Node.Layers) < 2 || len(cp.Pair.Layers) < 2 {
		return c, fmt.Errorf("flow coupling MLPs need ≥ 2 layers")
	}
	nl, pl := cp.Node.Layers[0], cp.Pair.Layers[0]
	c.h = nl.Out()
	if pl.Out() != c.h || nl.In() != g+2 || pl.In() != g+6 {
		return c, fmt.Errorf("flow coupling first layers %v, %v do not fit G=%d", nl.W.Shape, pl.W.Shape, g)
	}
	rows := func(w []float32, from, to int) []float32 { return w[from*c.h : to*c.h] }
	if c.nodeCtx, err = gemm.Pack(rows(nl.W.Data, 0, g), g, c.h, nl.B.Data); err != nil {
		return c, err
	}
	if c.pairCtx, err = gemm.Pack(rows(pl.W.Data, 0, g), g, c.h, pl.B.Data); err != nil {
		return c, err
	}
	c.nodeX, c.nodeM = rows(nl.W.Data, g, g+1), rows(nl.W.Data, g+1, g+2)
	c.pairXi, c.pairXj, c.pairConst = rows(pl.W.Data, g, g+1), rows(pl.W.Data, g+1, g+2), rows(pl.W.Data, g+2, g+6)
	if c.node, err = packMLP(cp.Node); err != nil {
		return c, err
	}
	if c.pair, err = packMLP(cp.Pair); err != nil {
		return c, err
	}
	if c.box, err = packBox(cp.Box, g); err != nil {
		return c, err
	}
	c.head, err = packMLP(cp.Head)
	return c, err
}

func symlog32(x float32) float32 {
	if x < 0 {
		return float32(-math.Log1p(-float64(x)))
	}
	return float32(math.Log1p(float64(x)))
}

func boundScale(x float32) float32 {
	return float32(arch.FlowMaxLogScale * math.Tanh(float64(x)/arch.FlowMaxLogScale))
}

// flowWS holds the flow decoder's buffers for one task.
type flowWS struct {
	nodeIn, cNode, cPair, aff, tau, ell []float32
	cn, cp                              [][]float32 // per coupling: context part of the first layers
	x, xk, sx, shift, ls                []float32   // per sample chunk (ns×d)
	hn, hp, h2, node, pair, head        []float32
}

// samplesPerChunk bounds the pair-stream rows (samples × d²) processed
// together.
func samplesPerChunk(d int) int { return max(1, 1024/(d*d)) }

// flowContext computes the per-task conditioning from the pooled tokens:
// node and pair contexts, the final affine's shift and bounded log-scale,
// and every coupling's sample-independent first-layer terms.
func (n *Net) flowContext(w *workspace, d int) {
	fd, f, c := n.flow, &w.flow, n.cfg.C
	g := fd.g
	n.richFeatures(w, d)
	f.nodeIn = grow(f.nodeIn, d*3*c)
	for i := 0; i < d; i++ {
		copy(f.nodeIn[i*3*c:(i+1)*3*c], w.rich[i*5*c:i*5*c+3*c])
	}
	f.cNode, f.cPair, f.aff = grow(f.cNode, d*g), grow(f.cPair, d*d*g), grow(f.aff, d*2)
	fd.ctxNode.run(w, f.cNode, f.nodeIn, d)
	fd.ctxPair.run(w, f.cPair, w.poolP, d*d)
	symInPlace(f.cPair, d, g)
	fd.affine.run(w, f.aff, w.rich, d)
	f.tau, f.ell = grow(f.tau, d), grow(f.ell, d)
	for i := 0; i < d; i++ {
		f.tau[i], f.ell[i] = f.aff[2*i], boundScale(f.aff[2*i+1])
	}
	for len(f.cn) < len(fd.couplings) {
		f.cn, f.cp = append(f.cn, nil), append(f.cp, nil)
	}
	for t := range fd.couplings {
		cp := &fd.couplings[t]
		m := arch.FlowMask(d, t)
		f.cn[t], f.cp[t] = grow(f.cn[t], d*cp.h), grow(f.cp[t], d*d*cp.h)
		w.mul(cp.nodeCtx, f.cn[t], cp.h, f.cNode, g, d, gemm.WithBias)
		w.mul(cp.pairCtx, f.cp[t], cp.h, f.cPair, g, d*d, gemm.WithBias)
		for i := 0; i < d; i++ {
			axpy(f.cn[t][i*cp.h:(i+1)*cp.h], symlog32(m[i]), cp.nodeM)
			for j := 0; j < d; j++ {
				ch := [4]float32{symlog32(m[i]), symlog32(m[j]), symlog32(m[i] * m[j]), 0}
				if i == j {
					ch[3] = symlog32(1)
				}
				row := f.cp[t][(i*d+j)*cp.h : (i*d+j+1)*cp.h]
				for k, v := range ch {
					axpy(row, v, cp.pairConst[k*cp.h:(k+1)*cp.h])
				}
			}
		}
	}
}

// axpy adds a·x to y.
func axpy(y []float32, a float32, x []float32) {
	for i, v := range x {
		y[i] += a * v
	}
}

// conditioner evaluates coupling t's conditioner on the kept coordinates of
// ns samples (f.xk, ns×d) and leaves the shifts in f.shift and bounded
// log-scales in f.ls.
func (n *Net) conditioner(ctx context.Context, w *workspace, t, ns, d int) error {
	fd, f := n.flow, &w.flow
	cp, g := &fd.couplings[t], fd.g
	h := cp.h
	f.sx = grow(f.sx, ns*d)
	for i, v := range f.xk[:ns*d] {
		f.sx[i] = symlog32(v)
	}
	rows := ns * d * d
	f.hn, f.hp = grow(f.hn, ns*d*h), grow(f.hp, rows*h)
	f.h2 = grow(f.h2, rows*max(h, cp.pair.hidden, cp.node.hidden))
	for s := 0; s < ns; s++ {
		for i := 0; i < d; i++ {
			r := f.hn[(s*d+i)*h : (s*d+i+1)*h]
			copy(r, f.cn[t][i*h:(i+1)*h])
			axpy(r, f.sx[s*d+i], cp.nodeX)
			for j := 0; j < d; j++ {
				q := f.hp[((s*d+i)*d+j)*h : ((s*d+i)*d+j+1)*h]
				copy(q, f.cp[t][(i*d+j)*h:(i*d+j+1)*h])
				axpy(q, f.sx[s*d+i], cp.pairXi)
				axpy(q, f.sx[s*d+j], cp.pairXj)
			}
		}
	}
	gemm.SiLU(f.hn)
	gemm.SiLU(f.hp)
	f.node, f.pair = grow(f.node, ns*d*g), grow(f.pair, rows*g)
	cp.node.tail(w, f.node, f.hn, f.h2, ns*d)
	cp.pair.tail(w, f.pair, f.hp, f.h2, rows)
	in := boxIn{p: f.pair, x: f.node, k: ns, d: d, nodeOnly: true}
	err := n.boxMLP(ctx, w, cp.box, in, func(k0, k1 int, _, dX []float32) {
		addTo(f.node[k0*d*g:k1*d*g], dX)
	})
	if err != nil {
		return err
	}
	f.head, f.shift, f.ls = grow(f.head, ns*d*2), grow(f.shift, ns*d), grow(f.ls, ns*d)
	cp.head.run(w, f.head, f.node, ns*d)
	for i := 0; i < ns*d; i++ {
		f.shift[i], f.ls[i] = f.head[2*i], boundScale(f.head[2*i+1])
	}
	return nil
}

// FlowSample maps base draws eps (B×S×d, standard normal) through each
// task's flow (at full strength, as at inference) and returns the draws z
// (B×S×d) and their log q (B×S). It checks ctx between layers.
func (n *Net) FlowSample(ctx context.Context, batch *arch.Batch, eps []float32, S int) (z, logq []float32, err error) {
	z = make([]float32, len(eps))
	logq = make([]float32, batch.B*S)
	err = n.flowEach(ctx, batch, eps, S, func(w *workspace, b, s0, ns, d int) error {
		f := &w.flow
		x := f.x[:ns*d]
		copy(x, eps[(b*S+s0)*d:])
		lq := logq[b*S+s0 : b*S+s0+ns]
		for s := range lq {
			lq[s] = stdNormalLogPDF(x[s*d : (s+1)*d])
		}
		for t := range n.flow.couplings {
			m := arch.FlowMask(d, t)
			if err := n.step(ctx, w, t, m, ns, d); err != nil {
				return err
			}
			for i, v := range x {
				if m[i%d] == 0 {
					x[i] = v*float32(math.Exp(float64(f.ls[i]))) + f.shift[i]
					lq[i/d] -= f.ls[i]
				}
			}
		}
		for i, v := range x {
			z[(b*S+s0)*d+i] = v*float32(math.Exp(float64(f.ell[i%d]))) + f.tau[i%d]
			lq[i/d] -= f.ell[i%d]
		}
		return nil
	})
	return z, logq, err
}

// FlowLogQ returns log q(z) (B×S) of points z (B×S×d) under each task's
// flow, by inverting it. It checks ctx between layers.
func (n *Net) FlowLogQ(ctx context.Context, batch *arch.Batch, z []float32, S int) (logq []float32, err error) {
	logq = make([]float32, batch.B*S)
	err = n.flowEach(ctx, batch, z, S, func(w *workspace, b, s0, ns, d int) error {
		f := &w.flow
		v := f.x[:ns*d]
		lq := logq[b*S+s0 : b*S+s0+ns]
		for i := range v {
			v[i] = (z[(b*S+s0)*d+i] - f.tau[i%d]) * float32(math.Exp(-float64(f.ell[i%d])))
			lq[i/d] -= f.ell[i%d]
		}
		for t := len(n.flow.couplings) - 1; t >= 0; t-- {
			m := arch.FlowMask(d, t)
			if err := n.step(ctx, w, t, m, ns, d); err != nil {
				return err
			}
			for i, e := range v {
				if m[i%d] == 0 {
					v[i] = (e - f.shift[i]) * float32(math.Exp(-float64(f.ls[i])))
					lq[i/d] -= f.ls[i]
				}
			}
		}
		for s := range lq {
			lq[s] += stdNormalLogPDF(v[s*d : (s+1)*d])
		}
		return nil
	})
	return logq, err
}

// step masks the current points (f.x) with m into f.xk and runs coupling
// t's conditioner on them.
func (n *Net) step(ctx context.Context, w *workspace, t int, m []float32, ns, d int) error {
	f := &w.flow
	f.xk = grow(f.xk, ns*d)
	for i, v := range f.x[:ns*d] {
		f.xk[i] = v * m[i%d]
	}
	return n.conditioner(ctx, w, t, ns, d)
}

// flowEach embeds every task of batch, computes its flow context and
// calls fn on each chunk of its S points (pts is B×S×d).
func (n *Net) flowEach(ctx context.Context, batch *arch.Batch, pts []float32, S int,
	fn func(w *workspace, b, s0, ns, d int) error) error {
	if n.flow == nil {
		return fmt.Errorf("cpu: network has no flow decoder (decoder %q)", n.cfg.Decoder)
	}
	if err := checkBatch(batch); err != nil {
		return err
	}
	d := batch.D
	if S < 1 || len(pts) != batch.B*S*d {
		return fmt.Errorf("cpu: %d values for %d tasks × %d points × d=%d", len(pts), batch.B, S, d)
	}
	w, _ := n.pool.Get().(*workspace)
	if w == nil {
		w = &workspace{}
	}
	defer n.pool.Put(w)
	for b := 0; b < batch.B; b++ {
		t, err := locate(w, batch, b)
		if err != nil {
			return fmt.Errorf("cpu: %w", err)
		}
		if _, err := n.embed(ctx, w, batch, t, nil); err != nil {
			return fmt.Errorf("cpu: task %d: %w", b, err)
		}
		n.flowContext(w, d)
		sc := samplesPerChunk(d)
		w.flow.x = grow(w.flow.x, sc*d)
		for s0 := 0; s0 < S; s0 += sc {
			if err := fn(w, b, s0, min(sc, S-s0), d); err != nil {
				return fmt.Errorf("cpu: task %d: %w", b, err)
			}
		}
	}
	return nil
}

func stdNormalLogPDF(x []float32) float32 {
	var q float64
	for _, v := range x {
		q += float64(v) * float64(v)
	}
	return float32(-0.5*q - 0.5*float64(len(x))*math.Log(2*math.Pi))
}

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

// flowInverse inverts the flow at one point z (strength s), keeping
// each coupling's input and conditioner outputs, and returns log q(z).
func (n *Net) flowInverse(ctx context.Context, w *workspace, fg *flowGrad, z []float32, s float32, d int) (float64, error) {
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
		dvk, err := n.conditionerBackward(ctx, w, st, fg, t, m, d, dsh, dshat)
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

// conditionerBackward recomputes coupling t's conditioner on the kept
// coordinates vk = fg.vin[t]⊙m of one point, backpropagates the
// gradients of its shift and raw log-scale, accumulates its parameter
// and context-term gradients, and returns the gradient of vk.
func (n *Net) conditionerBackward(ctx context.Context, w *workspace, st *trainState, fg *flowGrad, t int, m []float32, d int, dsh, dshat []float32) ([]float32, error) {
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
	if err := n.boxMLP(ctx, w, cp.box, in, func(_, _ int, _, dX []float32) { addTo(fg.node2, dX) }); err != nil {
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
	if err := n.boxMLPBackward(ctx, w, &st.gw, cp.box, st.box(cp.box), bin); err != nil {
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
	richFeaturesBackward(drich, dPool, dXPool, d, c)
	return dPool, dXPool
}
