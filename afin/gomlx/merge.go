package gomlx

import (
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/core/graph"
)

// mergeBlockBlock is one BoxTransformer block of the Merge (paper Sec.
// 3.2; App. B.2), in which the factor tokens attend to each other; the
// blocks share one program.
func mergeBlockBlock() *block {
	return &block{
		name: "merge_block", modules: []string{"merge"}, count: func(c arch.Config) int { return c.Blocks },
		acts: []slot{slotP, slotX}, aux: []slot{slotTokens, slotCoords, slotDReal}, adjoints: 2, lowp: true,
		forward: func(n *net, in map[slot]*graph.Node) []*graph.Node {
			P, X := n.boxTransformer(in[slotP], in[slotX], in[slotTokens], n.decl.Merge[0])
			return []*graph.Node{P, X}
		},
	}
}

// layerNorm normalises over the channel axis only (App. B.2), with the
// PyTorch epsilon.
func (n *net) layerNorm(x *graph.Node, ln arch.LayerNorm, pair bool) *graph.Node {
	r := x.Rank()
	mean := graph.ReduceAndKeep(x, graph.ReduceMean, -1)
	xc := graph.Sub(x, mean)
	v := graph.ReduceAndKeep(graph.Square(xc), graph.ReduceMean, -1)
	y := graph.Div(xc, graph.Sqrt(graph.AddScalar(v, arch.LayerNormEps)))
	// A padded coordinate's zero token would come out as the bias.
	return n.coords.maskTokens(graph.Add(graph.Mul(y, bcastTo(n.t(ln.G), r)), bcastTo(n.t(ln.B), r)), pair)
}

// attention is the factor-axis multi-head attention of a BoxTransformer
// block (paper eqs. (boxtransformer-qkv), (attention_v_tilde); App. B.2,
// eq. (merge-scores)) on normalised tokens; it returns the mixed values
// before the output map. Heads split the channels into contiguous groups.
func (n *net) attention(P, X, mask *graph.Node, blk arch.MergeBlock) (mp, mx *graph.Node) {
	h := n.cfg.Heads
	dims := X.Shape().Dimensions
	B, K, d, C := dims[0], dims[1], dims[2], dims[3]
	u := C / h
	ps, xs := n.boxMLPs(P, X, []arch.BoxMLP{blk.Q, blk.K, blk.V})
	qp, kp, vp := sym(ps[0]), sym(ps[1]), sym(ps[2])
	qx, kx, vx := xs[0], xs[1], xs[2]
	// Heads: (B,K,n,h,u) → (B,h,K,n·u), with n = d for nodes and d² for pairs.
	heads := func(v *graph.Node, nd int) *graph.Node {
		v = graph.Reshape(v, B, K, nd, h, u)
		return graph.Reshape(graph.TransposeAllAxes(v, 0, 3, 1, 2, 4), B, h, K, nd*u)
	}
	unheads := func(v *graph.Node, nd int) *graph.Node { // (B,h,K,n·u) → (B,K,n,C)
		v = graph.Reshape(v, B, h, K, nd, u)
		return graph.Reshape(graph.TransposeAllAxes(v, 0, 2, 3, 1, 4), B, K, nd, C)
	}
	score := func(q, k *graph.Node) *graph.Node {
		return graph.DotGeneral(q, []int{3}, []int{0, 1}, k, []int{3}, []int{0, 1})
	}
	sNode := n.coords.scaleByCount(score(heads(qx, d), heads(kx, d)), d, 1)
	sPair := n.coords.scaleByCount(score(heads(qp, d*d), heads(kp, d*d)), d, 2)
	w := softmax(n.t(blk.Mix), 0)
	s := graph.MulScalar(graph.Add(graph.Mul(sNode, pick(w, 0)), graph.Mul(sPair, pick(w, 1))), 1/math.Sqrt(float64(u)))
	// Padded keys get a −1e9 offset: their weight underflows to exactly 0.
	keyOff := graph.MulScalar(graph.OneMinus(graph.Reshape(mask, B, 1, 1, K)), -1e9)
	a := softmax(graph.Add(s, keyOff), -1) // (B,h,K,K)
	mix := func(v *graph.Node) *graph.Node {
		return graph.DotGeneral(a, []int{3}, []int{0, 1}, v, []int{2}, []int{0, 1})
	}
	mx = unheads(mix(heads(vx, d)), d)
	mp = graph.Reshape(unheads(mix(heads(vp, d*d)), d*d), B, K, d, d, C)
	return mp, mx
}

// boxTransformer is one merge block (paper eqs. (boxtransformer-output),
// (boxtransformer-ffn); App. B.2): pre-norm attention, the output map's
// increment added to the un-normalised tokens, then the FFN increment.
func (n *net) boxTransformer(P, X, mask *graph.Node, blk arch.MergeBlock) (*graph.Node, *graph.Node) {
	mp, mx := n.attention(n.layerNorm(P, blk.LNAttnPair, true), n.layerNorm(X, blk.LNAttnNode, false), mask, blk)
	dP, dX := n.boxMLP(mp, mx, blk.Out, false)
	P = sym(graph.Add(P, sym(dP)))
	X = graph.Add(X, dX)
	dP, dX = n.boxMLP(n.layerNorm(P, blk.LNFFNPair, true), n.layerNorm(X, blk.LNFFNNode, false), blk.FFN, false)
	P = sym(graph.Add(P, sym(dP)))
	X = graph.Add(X, dX)
	return P, X
}
