package gomlx

import (
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/core/graph"
)

// The flow decoder (App. B.3, "Flow decoder"): a conditional RealNVP whose
// conditioners see the pooled tokens through a context projection.
// Samples are z = A(T_{S−1}(…T_0(ε))), A the final per-coordinate affine;
// the density follows by change of variables. "strength" scales every
// shift and log-scale (0 = identity flow), ramped in during training.

func symlogNode(x *graph.Node) *graph.Node {
	return graph.Mul(graph.Sign(x), graph.Log1p(graph.Abs(x)))
}

func boundScale(x *graph.Node) *graph.Node {
	return graph.MulScalar(graph.Tanh(graph.DivScalar(x, arch.FlowMaxLogScale)), arch.FlowMaxLogScale)
}

// rowsOf returns rows [from, to) of a weight matrix (R, H), as a
// contraction with a selection matrix (differentiable on every backend).
func (n *net) rowsOf(w *graph.Node, from, to int) *graph.Node {
	r := w.Shape().Dimensions[0]
	sel := make([]float32, (to-from)*r)
	for k := range to - from {
		sel[k*r+from+k] = 1
	}
	s := graph.ConvertDType(graph.Reshape(graph.Const(w.Graph(), sel), to-from, r), w.DType())
	return graph.DotGeneral(s, []int{1}, nil, w, []int{0}, nil)
}

// column returns x[..., k] of a (..., n) tensor as (...).
func (n *net) column(x *graph.Node, k int) *graph.Node {
	m := x.Shape().Dimensions[x.Rank()-1]
	e := graph.Reshape(oneHot(x.Graph(), x.DType(), k, m), m, 1)
	y := n.matmul(x, e)
	return graph.Reshape(y, y.Shape().Dimensions[:y.Rank()-1]...)
}

// flowCtx holds the per-task conditioning of the flow.
type flowCtx struct {
	cNode, cPair *graph.Node // (B,1,d,G), (B,1,d,d,G): broadcast over samples
	tau, ell     *graph.Node // (B,1,d): final affine shift and bounded log-scale
}

// flowContext projects the pooled tokens to the couplings' node context
// (from [X_i, ½(row_i+col_i), diag_i]) and symmetrised pair context, and
// computes the final affine from the rich features.
func (n *net) flowContext(P, X *graph.Node) flowCtx {
	f := n.decl.Flow
	row := graph.ReduceMean(P, 2)
	col := graph.ReduceMean(P, 1)
	nodeIn := graph.Concatenate([]*graph.Node{X, graph.MulScalar(graph.Add(row, col), 0.5), diagOf(P)}, -1)
	var c flowCtx
	c.cNode = graph.InsertAxes(n.mlp(nodeIn, f.ContextNode), 1)
	c.cPair = graph.InsertAxes(sym(n.mlp(P, f.ContextPair)), 1)
	aff := n.mlp(n.richFeatures(P, X), f.Affine) // (B,d,2)
	c.tau = graph.InsertAxes(n.column(aff, 0), 1)
	c.ell = graph.InsertAxes(boundScale(n.column(aff, 1)), 1)
	return c
}

func slog32(v float32) float32 { return float32(math.Log1p(float64(v))) }

// conditioner returns the shift and bounded log-scale (B,S,d) of coupling
// cp from the kept coordinates xk (B,S,d) under keep mask m. Node stream
// input: [c_node_i, symlog(xk_i), symlog(m_i)]; pair stream input:
// [c_pair_ij, symlog of (xk_i, xk_j, m_i, m_j, m_i·m_j, δ_ij)].
func (n *net) conditioner(cp arch.Coupling, xk *graph.Node, m []float32, c flowCtx) (shift, logScale *graph.Node) {
	g := xk.Graph()
	dt := xk.DType()
	dims := xk.Shape().Dimensions
	B, S, d := dims[0], dims[1], dims[2]
	G := n.cfg.FlowG
	sx := symlogNode(xk) // (B,S,d)
	// First layers factorised over their inputs: the context part is
	// computed once per task and broadcast over the samples.
	wn, bn := n.t(cp.Node.Layers[0].W), n.t(cp.Node.Layers[0].B)
	mcol := make([]float32, d)
	for i := range d {
		mcol[i] = slog32(m[i])
	}
	hn := n.matmul(c.cNode, n.rowsOf(wn, 0, G))                                               // (B,1,d,H)
	hn = graph.Add(hn, graph.Mul(graph.InsertAxes(sx, -1), bcastTo(n.rowsOf(wn, G, G+1), 4))) // + x_i·w
	mc := graph.ConvertDType(graph.Reshape(graph.Const(g, mcol), 1, 1, d, 1), dt)             // symlog m_i
	hn = graph.Add(hn, graph.Mul(mc, bcastTo(n.rowsOf(wn, G+1, G+2), 4)))
	hn = graph.Add(hn, bcastTo(bn, 4))
	node := n.mlpFrom(graph.BroadcastToDims(hn, B, S, d, hn.Shape().Dimensions[3]), cp.Node) // (B,S,d,G)

	wp, bp := n.t(cp.Pair.Layers[0].W), n.t(cp.Pair.Layers[0].B)
	cst := make([]float32, d*d*4)
	for i := range d {
		for j := range d {
			o := (i*d + j) * 4
			cst[o], cst[o+1], cst[o+2] = slog32(m[i]), slog32(m[j]), slog32(m[i]*m[j])
			if i == j {
				cst[o+3] = slog32(1)
			}
		}
	}
	hp := n.matmul(c.cPair, n.rowsOf(wp, 0, G))                                                                 // (B,1,d,d,H)
	xi := graph.Mul(graph.InsertAxes(sx, -1, -1), bcastTo(n.rowsOf(wp, G, G+1), 5))                             // (B,S,d,1,H)
	xj := graph.Mul(graph.InsertAxes(sx, 2, -1), bcastTo(n.rowsOf(wp, G+1, G+2), 5))                            // (B,S,1,d,H)
	cc := n.matmul(graph.ConvertDType(graph.Reshape(graph.Const(g, cst), d, d, 4), dt), n.rowsOf(wp, G+2, G+6)) // (d,d,H)
	hp = graph.Add(graph.Add(hp, graph.Add(xi, xj)), graph.Add(bcastTo(cc, 5), bcastTo(bp, 5)))
	pair := n.mlpFrom(hp, cp.Pair) // (B,S,d,d,G)

	// The refining BoxMLP mixes the pair stream into the node stream;
	// only its node output is used, so its pair branch is not evaluated.
	_, dX := n.boxMLP(pair, node, cp.Box, true)
	node = graph.Add(node, dX)
	head := n.mlp(node, cp.Head) // (B,S,d,2)
	return n.column(head, 0), boundScale(n.column(head, 1))
}

func maskNode(g *graph.Graph, m []float32, like *graph.Node) *graph.Node {
	d := len(m)
	return graph.ConvertDType(graph.Reshape(graph.Const(g, m), 1, 1, d), like.DType())
}

// flowSample maps base draws eps (B,S,d) to z and returns log q(z) (B,S).
func (n *net) flowSample(c flowCtx, eps, strength *graph.Node) (z, logq *graph.Node) {
	g := eps.Graph()
	d := eps.Shape().Dimensions[2]
	logq = stdNormalLogPDF(eps)
	x := eps
	for t, cp := range n.decl.Flow.Couplings {
		mv := arch.FlowMask(d, t)
		m := maskNode(g, mv, x)
		xk := graph.Mul(x, m)
		sh, ls := n.conditioner(cp, xk, mv, c)
		sls := graph.Mul(ls, strength)
		x = graph.Add(xk, graph.Mul(graph.OneMinus(m), graph.Add(graph.Mul(x, graph.Exp(sls)), graph.Mul(sh, strength))))
		logq = graph.Sub(logq, graph.ReduceSum(graph.Mul(graph.OneMinus(m), sls), 2))
	}
	sell := graph.Mul(c.ell, strength)
	z = graph.Add(graph.Mul(x, graph.Exp(sell)), graph.Mul(c.tau, strength))
	logq = graph.Sub(logq, graph.ReduceSum(graph.BroadcastToDims(sell, z.Shape().Dimensions...), 2))
	return z, logq
}

// flowDensity inverts the flow at z (B,S,d): log q(z) (B,S) and the base
// point (B,S,d).
func (n *net) flowDensity(c flowCtx, z, strength *graph.Node) (logq, base *graph.Node) {
	g := z.Graph()
	d := z.Shape().Dimensions[2]
	sell := graph.Mul(c.ell, strength)
	v := graph.Mul(graph.Sub(z, graph.Mul(c.tau, strength)), graph.Exp(graph.Neg(sell)))
	logdet := graph.Neg(graph.ReduceSum(graph.BroadcastToDims(sell, z.Shape().Dimensions...), 2))
	cps := n.decl.Flow.Couplings
	for t := len(cps) - 1; t >= 0; t-- {
		mv := arch.FlowMask(d, t)
		m := maskNode(g, mv, v)
		vk := graph.Mul(v, m)
		sh, ls := n.conditioner(cps[t], vk, mv, c)
		sls := graph.Mul(ls, strength)
		v = graph.Add(vk, graph.Mul(graph.OneMinus(m), graph.Mul(graph.Sub(v, graph.Mul(sh, strength)), graph.Exp(graph.Neg(sls)))))
		logdet = graph.Sub(logdet, graph.ReduceSum(graph.Mul(graph.OneMinus(m), sls), 2))
	}
	return graph.Add(stdNormalLogPDF(v), logdet), v
}

func stdNormalLogPDF(x *graph.Node) *graph.Node {
	d := x.Shape().Dimensions[x.Rank()-1]
	return graph.AddScalar(graph.MulScalar(graph.ReduceSum(graph.Square(x), -1), -0.5), -0.5*float64(d)*math.Log(2*math.Pi))
}

// The flow heads: pooling and the flow decoder over the merged tokens, as
// the training loss (log q of the targets), as draws (base draws mapped
// through each task's flow) and as a density (log q at given points).
// Flow programs run at each task's exact d: the couplings' masks are
// fixed per d (arch.FlowMask), so d is not padded; N and the tasks are.

// flowDensityHead returns the base points of the points draws (B,S,d)
// and log q there: points first, as flowSampleHead's.
func flowDensityHead() *block {
	return &block{
		name: "flow_density", modules: []string{"flow_context", "flow_affine", "couplings"},
		acts: []slot{slotP, slotX}, aux: []slot{slotTokens, slotCoords, slotDReal, slotDraws, slotStrength},
		forward: func(n *net, in map[slot]*graph.Node) []*graph.Node {
			lq, base := n.flowDensity(n.flowContext(pooling(in[slotP], in[slotX], in[slotTokens])), in[slotDraws], in[slotStrength])
			return []*graph.Node{base, lq}
		},
	}
}

// flowSampleHead maps base draws (B,S,d) through each task's flow: z and
// log q(z).
func flowSampleHead() *block {
	return &block{
		name: "flow_sample", shares: "flow_density",
		acts: []slot{slotP, slotX}, aux: []slot{slotTokens, slotCoords, slotDReal, slotDraws, slotStrength},
		forward: func(n *net, in map[slot]*graph.Node) []*graph.Node {
			z, lq := n.flowSample(n.flowContext(pooling(in[slotP], in[slotX], in[slotTokens])), in[slotDraws], in[slotStrength])
			return []*graph.Node{z, lq}
		},
	}
}

// flowLoss is the training loss of the flow decoder, weighted as
// gaussianLoss's.
func flowLoss() *block {
	return &block{
		name: "flow_loss", shares: "flow_density", loss: true,
		acts: []slot{slotP, slotX}, aux: []slot{slotTokens, slotCoords, slotDReal, slotZ, slotStrength, slotWeight},
		forward: func(n *net, in map[slot]*graph.Node) []*graph.Node {
			c := n.flowContext(pooling(in[slotP], in[slotX], in[slotTokens]))
			lq, _ := n.flowDensity(c, graph.InsertAxes(in[slotZ], 1), in[slotStrength])
			return weightedLoss(graph.Reshape(lq, lq.Shape().Dimensions[0]), in[slotDReal], in[slotWeight])
		},
	}
}
