package gomlx

import (
	"github.com/gomlx/gomlx/core/graph"
)

// The Gaussian head: pooling and the Gaussian decoder (App. B.3), as an
// inference program (μ, Λ) and as the training loss. Heads stay in
// float32 under bf16 training.

// gaussianHead maps the merged tokens to each task's mean (B,d) and
// precision (B,d,d).
func gaussianHead() *block {
	return &block{
		name: "gaussian_decoder", modules: []string{"gaussian_decoder"},
		acts: []slot{slotP, slotX}, aux: []slot{slotTokens, slotCoords, slotDReal},
		forward: func(n *net, in map[slot]*graph.Node) []*graph.Node {
			mu, lam := n.gaussianDecoder(pooling(in[slotP], in[slotX], in[slotTokens]))
			return []*graph.Node{mu, lam}
		},
	}
}

// gaussianLoss is the training loss on the merged tokens: Σ_t w_t·(−log
// q(z_t)/d_t), each task at its own d, and each task's log q. With w =
// 1/B on real tasks and 0 on padding, a chunk's loss is its share of the
// batch mean.
func gaussianLoss() *block {
	return &block{
		name: "gaussian_loss", shares: "gaussian_decoder", loss: true,
		acts: []slot{slotP, slotX}, aux: []slot{slotTokens, slotCoords, slotDReal, slotZ, slotWeight},
		forward: func(n *net, in map[slot]*graph.Node) []*graph.Node {
			mu, lam := n.gaussianDecoder(pooling(in[slotP], in[slotX], in[slotTokens]))
			return weightedLoss(n.gaussLogQ(mu, lam, in[slotZ]), in[slotDReal], in[slotWeight])
		},
	}
}

// weightedLoss is [Σ w·(−log q/d), log q] over a chunk's tasks.
func weightedLoss(lq, dr, w *graph.Node) []*graph.Node {
	return []*graph.Node{graph.Neg(graph.ReduceAllSum(graph.Mul(w, graph.Div(lq, dr)))), lq}
}
