package gomlx

import (
	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/core/graph"
)

// The BoxMLP layer (paper Sec. 3.1, eq. (boxmlp); App. B.1): a pair
// branch at every (i, j) and a node branch at every i, each reading the
// tokens' summaries. It is the encoder's layer, the merge blocks' Q, K,
// V, output and FFN maps and the flow couplings' refinement.

// boxSummaries are the per-token summaries of pair tokens P (B,K,d,d,C)
// and node tokens X (B,K,d,C) a BoxMLP branch sees (App. B.1, eqs.
// (boxmlp-encoder-pair-input), (boxmlp-encoder-node-input)): plain means,
// row and column kept apart.
type boxSummaries struct {
	row, col, diag *graph.Node // (B,K,d,C): mean over j of P_ij, mean over i of P_ij (indexed by j), P_ii
	gP, gN         *graph.Node // (B,K,C): mean of P over (i,j), mean of X over i
}

func (n *net) summarise(P, X *graph.Node) boxSummaries {
	c := n.coords
	return boxSummaries{row: c.meanCoords(P, 3), col: c.meanCoords(P, 2), diag: diagOf(P),
		gP: c.meanCoords(P, 2, 3), gN: c.meanCoords(X, 2)}
}

// boxMLP evaluates the two branches of a BoxMLP (paper Sec. 3.1, eq.
// (boxmlp)) on P (B,K,d,d,C), X (B,K,d,C): the pair branch at (i,j) on
// [P_ij, row_i, col_j, X_i, X_j, gP] and the node branch at i on
// [X_i, diag_i, row_i, col_i, gP, gN]. It returns the raw branch outputs
// (pair output not symmetrised). With nodeOnly the pair branch is skipped
// (dP is nil), for a layer whose pair output is discarded.
func (n *net) boxMLP(P, X *graph.Node, b arch.BoxMLP, nodeOnly bool) (dP, dX *graph.Node) {
	dP, dX = n.boxMLPRaw(P, X, b, nodeOnly)
	if dP != nil {
		dP = n.coords.maskTokens(dP, true)
	}
	return dP, n.coords.maskTokens(dX, false)
}

// boxMLPRaw is boxMLP before its outputs' padded coordinates are zeroed.
func (n *net) boxMLPRaw(P, X *graph.Node, b arch.BoxMLP, nodeOnly bool) (dP, dX *graph.Node) {
	s := n.summarise(P, X)
	if n.unfactorised {
		return n.boxMLPConcat(P, X, s, b, nodeOnly)
	}
	c := X.Shape().Dimensions[X.Rank()-1]
	in := boxInputsOf(X, s)
	if !nodeOnly {
		// The first layer is linear in the concatenation [P_ij, row_i,
		// col_j, X_i, X_j, gP], so it splits into a product at the pair
		// shape and two at the node shape, broadcast-added (boxInputs).
		// Three products, where the concatenation would cost 6× the pair
		// product, and where one per part made six.
		l0 := b.Pair.Layers[0]
		wp := n.t(l0.W)
		perI := graph.Add(n.matmul(in.perI, rowBlocks(wp, c, 1, 3, 5)), bcastTo(n.t(l0.B), 4)) // (B,K,d,H)
		perJ := n.matmul(in.perJ, rowBlocks(wp, c, 2, 4))                                      // (B,K,d,H)
		dP = n.mlpFrom(pairFirst(n.matmul(P, rowBlocks(wp, c, 0)), perI, perJ), b.Pair)
	}
	// The node branch runs at the node shape: its concatenated input is
	// small, and one product is fewer programs' kernels than six.
	return dP, n.mlp(in.node, b.Node)
}

// boxInputs are a BoxMLP's first-layer inputs at the node shape
// (B,K,d,·): the parts of the pair branch's input that vary with i alone
// ([row_i, X_i, gP]) and with j alone ([col_j, X_j]), and the node
// branch's whole input [X_i, diag_i, row_i, col_i, gP, gN].
type boxInputs struct{ perI, perJ, node *graph.Node }

func boxInputsOf(X *graph.Node, s boxSummaries) boxInputs {
	dims := X.Shape().Dimensions
	gP := graph.BroadcastToDims(graph.InsertAxes(s.gP, 2), dims...)
	gN := graph.BroadcastToDims(graph.InsertAxes(s.gN, 2), dims...)
	return boxInputs{
		perI: graph.Concatenate([]*graph.Node{s.row, X, gP}, -1),
		perJ: graph.Concatenate([]*graph.Node{s.col, X}, -1),
		node: graph.Concatenate([]*graph.Node{X, s.diag, s.row, s.col, gP, gN}, -1),
	}
}

// pairFirst is the pair branch's first layer from its parts: hp at the
// pair shape (B,K,d,d,…) plus perI (B,K,d,…) along j and perJ along i.
func pairFirst(hp, perI, perJ *graph.Node) *graph.Node {
	return graph.Add(hp, graph.Add(graph.InsertAxes(perI, 3), graph.InsertAxes(perJ, 2)))
}

// boxMLPConcat is boxMLP's literal form: concatenate the 6C inputs, then
// apply the MLP.
func (n *net) boxMLPConcat(P, X *graph.Node, s boxSummaries, b arch.BoxMLP, nodeOnly bool) (dP, dX *graph.Node) {
	dims := P.Shape().Dimensions
	if !nodeOnly {
		full := func(v *graph.Node, axis int) *graph.Node { // (B,K,d,C) → (B,K,d,d,C) along axis
			return graph.BroadcastToDims(graph.InsertAxes(v, axis), dims...)
		}
		glob := graph.BroadcastToDims(graph.InsertAxes(s.gP, 2, 2), dims...)
		inP := graph.Concatenate([]*graph.Node{P, full(s.row, 3), full(s.col, 2), full(X, 3), full(X, 2), glob}, -1)
		dP = n.mlp(inP, b.Pair)
	}
	ndims := X.Shape().Dimensions
	gl := func(v *graph.Node) *graph.Node { return graph.BroadcastToDims(graph.InsertAxes(v, 2), ndims...) }
	inX := graph.Concatenate([]*graph.Node{X, s.diag, s.row, s.col, gl(s.gP), gl(s.gN)}, -1)
	return dP, n.mlp(inX, b.Node)
}

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
