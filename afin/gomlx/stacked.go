package gomlx

import (
	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

// boxMLPs evaluates several BoxMLPs of the same widths on the same
// tokens, as the attention's Q, K and V maps are: their weights are
// stacked on a leading axis of S maps and every layer is one product
// over all of them, where separate maps would make S. On a GPU that is
// S× fewer matrix products for XLA to compile and launch, each S×
// larger. Only a graph whose gradient is taken stacks: it keeps every
// map's activations for the backward anyway, where a forward would hold
// S maps' at once instead of one's (2.4× the modelled peak of a paper
// inference program). It returns each map's outputs as boxMLP does.
func (n *net) boxMLPs(P, X *graph.Node, bs []arch.BoxMLP) (dPs, dXs []*graph.Node) {
	if len(bs) == 1 || n.unfactorised || !n.grad {
		for _, b := range bs {
			dP, dX := n.boxMLP(P, X, b, false)
			dPs, dXs = append(dPs, dP), append(dXs, dX)
		}
		return dPs, dXs
	}
	c := X.Shape().Dimensions[X.Rank()-1]
	in := boxInputsOf(X, n.summarise(P, X))
	pairs, nodes := make([]arch.MLP, len(bs)), make([]arch.MLP, len(bs))
	for i, b := range bs {
		pairs[i], nodes[i] = b.Pair, b.Node
	}
	blocks := func(ks ...int) *graph.Node {
		return n.stack(pairs, func(m arch.MLP) *graph.Node { return rowBlocks(n.t(m.Layers[0].W), c, ks...) })
	}
	bias := func(ms []arch.MLP) *graph.Node { // (1,1,1,S,H)
		return bcastTo(n.stack(ms, func(m arch.MLP) *graph.Node { return n.t(m.Layers[0].B) }), 5)
	}

	// The pair branch's first layer, split as in boxMLPRaw, for every map.
	perI := graph.Add(graph.DotGeneral(in.perI, []int{3}, nil, blocks(1, 3, 5), []int{1}, nil), bias(pairs)) // (B,K,d,S,H)
	perJ := graph.DotGeneral(in.perJ, []int{3}, nil, blocks(2, 4), []int{1}, nil)                            // (B,K,d,S,H)
	hp := pairFirst(graph.DotGeneral(P, []int{4}, nil, blocks(0), []int{1}, nil), perI, perJ)                // (B,K,d,d,S,H)
	outP := n.stackedMLPFrom(hp, 4, pairs)                                                                   // (S,B,K,d,d,C)

	wn := n.stack(nodes, func(m arch.MLP) *graph.Node { return n.t(m.Layers[0].W) })
	hn := graph.Add(graph.DotGeneral(in.node, []int{3}, nil, wn, []int{1}, nil), bias(nodes)) // (B,K,d,S,H)
	outX := n.stackedMLPFrom(hn, 3, nodes)                                                    // (S,B,K,d,C)

	for i := range bs {
		dPs = append(dPs, n.coords.maskTokens(take(outP, i), true))
		dXs = append(dXs, n.coords.maskTokens(take(outX, i), false))
	}
	return dPs, dXs
}

// stack stacks one node per MLP (a weight, read by pick) on a new
// leading axis.
func (n *net) stack(ms []arch.MLP, pick func(arch.MLP) *graph.Node) *graph.Node {
	parts := make([]*graph.Node, len(ms))
	for i, m := range ms {
		parts[i] = graph.InsertAxes(pick(m), 0)
	}
	return graph.Concatenate(parts, 0)
}

// stackedMLPFrom finishes stacked MLPs given their first layers' output h
// (bias included), whose axis sAxis runs over the maps: SiLU, then each
// further layer as one product with the maps as its batch axis. The
// result has the maps on its leading axis.
func (n *net) stackedMLPFrom(h *graph.Node, sAxis int, ms []arch.MLP) *graph.Node {
	for l := 1; l < len(ms[0].Layers); l++ {
		w := n.stack(ms, func(m arch.MLP) *graph.Node { return n.t(m.Layers[l].W) }) // (S,in,out)
		h = graph.DotGeneral(silu(h), []int{h.Rank() - 1}, []int{sAxis}, w, []int{1}, []int{0})
		sAxis = 0
		h = graph.Add(h, n.stackedBias(ms, l, h.Rank()))
	}
	if sAxis != 0 {
		perm := []int{sAxis}
		for a := 0; a < h.Rank(); a++ {
			if a != sAxis {
				perm = append(perm, a)
			}
		}
		h = graph.TransposeAllAxes(h, perm...)
	}
	return h
}

// stackedBias is layer l's biases of stacked MLPs, (S,1,…,1,out) to add
// to a rank-r tensor with the maps on its leading axis.
func (n *net) stackedBias(ms []arch.MLP, l, r int) *graph.Node {
	b := n.stack(ms, func(m arch.MLP) *graph.Node { return n.t(m.Layers[l].B) }) // (S,out)
	dims := make([]int, r)
	for i := range dims {
		dims[i] = 1
	}
	dims[0], dims[r-1] = len(ms), b.Shape().Dimensions[1]
	return graph.Reshape(b, dims...)
}

// take is entry i of x's leading axis, read with a Gather (differentiable
// on every backend, as rowBlocks explains).
func take(x *graph.Node, i int) *graph.Node {
	v := graph.Gather(x, graph.Const(x.Graph(), [][]int32{{int32(i)}}))
	return graph.Reshape(v, x.Shape().Dimensions[1:]...)
}

// adaptersStacked is adapterSum for a training graph: the present
// families' adapters run as stacked MLPs, one product per layer, their
// inputs zero-padded to the widest family's (the padding meets zero
// weight rows); each family's output is masked to its tokens and the
// families summed. Every family's adapter runs on every token, as apart.
func (n *net) adaptersStacked(nodes, pairs []*graph.Node, masks *graph.Node, as []arch.Adapter, present []int) (x, p *graph.Node) {
	perm := []int{masks.Rank() - 1} // (…, F) → (F, …)
	for a := 0; a < masks.Rank()-1; a++ {
		perm = append(perm, a)
	}
	idx := make([][]int32, len(present))
	nodeIn, pairIn := make([]*graph.Node, len(present)), make([]*graph.Node, len(present))
	nodeMLP, pairMLP := make([]arch.MLP, len(present)), make([]arch.MLP, len(present))
	for i, f := range present {
		idx[i] = []int32{int32(f)}
		nodeIn[i], pairIn[i] = nodes[f], pairs[f]
		nodeMLP[i], pairMLP[i] = as[f].Node, as[f].Pair
	}
	m := graph.Gather(graph.TransposeAllAxes(masks, perm...), graph.Const(masks.Graph(), idx)) // (F', …)
	x = n.stackedAdapter(nodeIn, nodeMLP, m)
	p = sym(n.stackedAdapter(pairIn, pairMLP, m))
	return n.coords.maskTokens(x, false), n.coords.maskTokens(p, true)
}

// stackedAdapter runs one MLP per input (…, w_f) as stacked MLPs and sums
// their outputs weighted by m (F, leading axes of the inputs).
func (n *net) stackedAdapter(ins []*graph.Node, ms []arch.MLP, m *graph.Node) *graph.Node {
	wmax := 0
	for _, x := range ins {
		wmax = max(wmax, x.Shape().Dimensions[x.Rank()-1])
	}
	g := m.Graph()
	pad := func(x *graph.Node, axis int) *graph.Node { // zeros up to wmax along axis
		dims := x.Shape().Clone().Dimensions
		if dims[axis] == wmax {
			return x
		}
		dims[axis] = wmax - dims[axis]
		return graph.Concatenate([]*graph.Node{x, graph.Zeros(g, shapes.Make(x.DType(), dims...))}, axis)
	}
	parts := make([]*graph.Node, len(ins))
	for i, x := range ins {
		parts[i] = graph.InsertAxes(pad(x, x.Rank()-1), 0)
	}
	xs := graph.Concatenate(parts, 0) // (F, …, wmax)
	w := n.stack(ms, func(l arch.MLP) *graph.Node { return pad(n.t(l.Layers[0].W), 0) })
	h := graph.DotGeneral(xs, []int{xs.Rank() - 1}, []int{0}, w, []int{1}, []int{0}) // (F, …, H)
	h = graph.Add(h, n.stackedBias(ms, 0, h.Rank()))
	out := n.stackedMLPFrom(h, 0, ms) // (F, …, C)
	mdims := make([]int, out.Rank())
	for i := range mdims {
		mdims[i] = 1
	}
	copy(mdims, m.Shape().Dimensions)
	return graph.ReduceSum(graph.Mul(out, graph.Reshape(m, mdims...)), 0)
}
