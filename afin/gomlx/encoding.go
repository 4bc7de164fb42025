package gomlx

import (
	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

// The Encoding block's programs (paper App. B.1): the adapters, which
// turn each factor's descriptors into tokens, and one layer of the shared
// residual BoxMLP encoder, which refines every token on its own. The
// encoder's layers share one program.

// adaptersBlock maps the batch's descriptors to tokens P, X. Every
// family's adapter is in the program, so one program serves any mixture.
func adaptersBlock() *block {
	return &block{
		name: "adapters", modules: []string{"adapters"},
		aux: append(batchSlots(), slotCoords, slotDReal), adjoints: 2, lowp: true,
		forward: func(n *net, in map[slot]*graph.Node) []*graph.Node {
			P, X := n.adapters(batchNodesOf(in))
			return []*graph.Node{P, X}
		},
	}
}

// encoderLayerBlock is one residual BoxMLP layer of the encoder.
func encoderLayerBlock() *block {
	return &block{
		name: "encoder_layer", modules: []string{"encoder"}, count: func(c arch.Config) int { return c.EncLayers },
		acts: []slot{slotP, slotX}, aux: []slot{slotCoords, slotDReal}, adjoints: 2, lowp: true,
		forward: func(n *net, in map[slot]*graph.Node) []*graph.Node {
			P, X := n.encoderLayer(in[slotP], in[slotX], n.decl.Encoder[0])
			return []*graph.Node{P, X}
		},
	}
}

// adapter applies one family's descriptor MLPs (App. B.1, "Factor-type
// adapters"), masked to the tokens of that family; pair outputs are
// symmetrised.
func (n *net) adapter(node, pair, m *graph.Node, a arch.Adapter) (x, p *graph.Node) {
	x = graph.Mul(n.mlp(node, a.Node), graph.InsertAxes(m, -1))
	p = graph.Mul(sym(n.mlp(pair, a.Pair)), graph.InsertAxes(m, -1, -1))
	return n.coords.maskTokens(x, false), n.coords.maskTokens(p, true)
}

// adapters maps the batch descriptors to tokens: P (B,K,d,d,C) and
// X (B,K,d,C), token 0 being the prior (paper eq. (node-pair)).
func (n *net) adapters(in *batchNodes) (P, X *graph.Node) {
	xp, pp := n.adapterSum(in.priorNode, in.priorPair, in.priorMask, n.decl.PriorAdapter)
	xl, pl := n.adapterSum(in.likNode, in.likPair, in.likMask, n.decl.LikAdapter)
	if xl == nil { // no likelihood factor in the whole batch: padding tokens only
		dims := xp.Shape().Dimensions // (B,d,C)
		np := in.likMask.Shape().Dimensions[1]
		xl = graph.Zeros(xp.Graph(), shapes.Make(xp.DType(), dims[0], np, dims[1], dims[2]))
		pl = graph.Zeros(xp.Graph(), shapes.Make(xp.DType(), dims[0], np, dims[1], dims[1], dims[2]))
	}
	X = graph.Concatenate([]*graph.Node{graph.InsertAxes(xp, 1), xl}, 1)
	P = graph.Concatenate([]*graph.Node{graph.InsertAxes(pp, 1), pl}, 1)
	return P, X
}

// adapterSum is the tokens of one group of families (prior or
// likelihood): each present family's adapter, masked to its tokens by
// masks (…, F), summed. nil when no family of the group is present.
func (n *net) adapterSum(nodes, pairs []*graph.Node, masks *graph.Node, as []arch.Adapter) (x, p *graph.Node) {
	var present []int
	for f := range as {
		if nodes[f] != nil {
			present = append(present, f)
		}
	}
	if len(present) > 1 && n.grad && !n.unfactorised {
		return n.adaptersStacked(nodes, pairs, masks, as, present)
	}
	for _, f := range present {
		xn, pn := n.adapter(nodes[f], pairs[f], graph.SliceAxis(masks, masks.Rank()-1, graph.AxisElem(f)), as[f])
		x, p = addOrSet(x, xn), addOrSet(p, pn)
	}
	return x, p
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

// batchNodesOf are the adapters' inputs by family.
func batchNodesOf(in map[slot]*graph.Node) *batchNodes {
	b := &batchNodes{
		priorNode: make([]*graph.Node, len(arch.PriorFamilies)), priorPair: make([]*graph.Node, len(arch.PriorFamilies)),
		likNode: make([]*graph.Node, len(arch.LikFamilies)), likPair: make([]*graph.Node, len(arch.LikFamilies)),
		priorMask: in[slotPriorMask], likMask: in[slotLikMask],
	}
	for f := range arch.PriorFamilies {
		b.priorNode[f], b.priorPair[f] = in[priorNodeSlot(f)], in[priorPairSlot(f)]
	}
	for f := range arch.LikFamilies {
		b.likNode[f], b.likPair[f] = in[likNodeSlot(f)], in[likPairSlot(f)]
	}
	return b
}

// encoderLayer is one layer of the shared BoxMLP encoder (App. B.1,
// "Shared BoxMLP encoder"): a residual increment, the pair part
// symmetrised.
func (n *net) encoderLayer(P, X *graph.Node, layer arch.BoxMLP) (*graph.Node, *graph.Node) {
	dP, dX := n.boxMLP(P, X, layer, false)
	return graph.Add(P, sym(dP)), graph.Add(X, dX)
}
