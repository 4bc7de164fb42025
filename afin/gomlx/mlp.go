package gomlx

import (
	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/core/graph"
)

// MLPs (paper eq. (mlp_hidden)): affine layers with SiLU between them,
// and stacked MLPs, several maps of the same widths run as one product
// per layer.

func silu(x *graph.Node) *graph.Node { return graph.Mul(x, graph.Logistic(x)) }

// matmul contracts the last axis of x with the first axis of w (in, out).
func (n *net) matmul(x, w *graph.Node) *graph.Node {
	return graph.DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{0}, nil)
}

func (n *net) linear(x *graph.Node, l arch.Linear) *graph.Node {
	y := n.matmul(x, n.t(l.W))
	return graph.Add(y, bcastTo(n.t(l.B), y.Rank()))
}

// mlpFrom finishes an MLP given its first layer's output h (bias
// included, before the activation): SiLU between layers, none after the
// last (paper eq. (mlp_hidden)).
func (n *net) mlpFrom(h *graph.Node, m arch.MLP) *graph.Node {
	for _, l := range m.Layers[1:] {
		h = n.linear(silu(h), l)
	}
	return h
}

func (n *net) mlp(x *graph.Node, m arch.MLP) *graph.Node {
	return n.mlpFrom(n.linear(x, m.Layers[0]), m)
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
