package gomlx

import (
	"github.com/afin-bench/afin/afin/arch"
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

// encoderLayer is one layer of the shared BoxMLP encoder (App. B.1,
// "Shared BoxMLP encoder"): a residual increment, the pair part
// symmetrised.
func (n *net) encoderLayer(P, X *graph.Node, layer arch.BoxMLP) (*graph.Node, *graph.Node) {
	dP, dX := n.boxMLP(P, X, layer, false)
	return graph.Add(P, sym(dP)), graph.Add(X, dX)
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
