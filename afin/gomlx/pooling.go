package gomlx

import "github.com/gomlx/gomlx/core/graph"

// pooling is the paper's Pooling: the tokens summed over factors, the
// prior included (App. B.2): node (B,d,C) and symmetrised pair (B,d,d,C).
// Padded tokens are masked out.
func pooling(P, X, mask *graph.Node) (pp, xp *graph.Node) {
	xp = graph.ReduceSum(graph.Mul(X, graph.InsertAxes(mask, -1, -1)), 1)
	pp = sym(graph.ReduceSum(graph.Mul(P, graph.InsertAxes(mask, -1, -1, -1)), 1))
	return pp, xp
}
