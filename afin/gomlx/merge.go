package gomlx

import (
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
