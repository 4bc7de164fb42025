package gomlx

import (
	"github.com/gomlx/gomlx/core/graph"
)

// coords is what a graph needs when its tasks' latent coordinates are
// padded to a bucket (see shapes.go): m (B, dB) marks each task's real
// coordinates and dr (B,) counts them. Padded coordinates' tokens are
// kept at exact zero (every block's output is masked), so a sum over
// coordinates is the sum over the real ones and a mean divides it by dr;
// the decoder gives a padded coordinate mean 0 and unit precision with
// no coupling, which adds nothing to log q. A graph without coords (nil)
// is the unpadded network, node for node.
type coords struct {
	m, dr *graph.Node
}

// maskTokens zeroes padded coordinates of node (…, d, C) or pair
// (…, d, d, C) tensors whose leading axis is the batch; pair tells which.
func (c *coords) maskTokens(x *graph.Node, pair bool) *graph.Node {
	if c == nil {
		return x
	}
	r := x.Rank()
	B, d := c.m.Shape().Dimensions[0], c.m.Shape().Dimensions[1]
	dims := make([]int, r)
	for i := range dims {
		dims[i] = 1
	}
	dims[0] = B
	if !pair {
		dims[r-2] = d
		return graph.Mul(x, graph.Reshape(c.m, dims...))
	}
	dims[r-3], dims[r-2] = d, d
	mm := graph.Mul(graph.InsertAxes(c.m, 2), graph.InsertAxes(c.m, 1)) // (B,d,d)
	return graph.Mul(x, graph.Reshape(mm, dims...))
}

// perTask reshapes a (B,) tensor to broadcast against a rank-r tensor
// whose leading axis is the batch.
func perTask(v *graph.Node, r int) *graph.Node {
	dims := make([]int, r)
	for i := range dims {
		dims[i] = 1
	}
	dims[0] = v.Shape().Dimensions[0]
	return graph.Reshape(v, dims...)
}

// meanCoords is the mean over k coordinate axes of a tensor whose padded
// coordinates are zero: ReduceMean without coords, the sum over dr^k with.
func (c *coords) meanCoords(x *graph.Node, axes ...int) *graph.Node {
	if c == nil {
		return graph.ReduceMean(x, axes...)
	}
	s := graph.ReduceSum(x, axes...)
	div := c.dr
	for range len(axes) - 1 {
		div = graph.Mul(div, c.dr)
	}
	return graph.Div(s, perTask(div, s.Rank()))
}

// scaleByCount multiplies x (leading axis the batch) by 1/dr^k, or by
// the constant 1/d^k without coords.
func (c *coords) scaleByCount(x *graph.Node, d, k int) *graph.Node {
	if c == nil {
		den := 1
		for range k {
			den *= d
		}
		return graph.MulScalar(x, 1/float64(den))
	}
	div := c.dr
	for range k - 1 {
		div = graph.Mul(div, c.dr)
	}
	return graph.Div(x, perTask(div, x.Rank()))
}
