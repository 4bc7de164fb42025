package gomlx

import (
	"slices"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// GoMLX v0.26 differentiates DotGeneral by broadcasting both operands to
// batch×cross×cross×contracted and reducing: for a linear layer on a
// (tokens, in) input that materialises tokens·in·out floats, which made a
// training step of even a tiny batch take seconds. The gradient of a
// contraction is itself a contraction, so afin's graphs compute it that
// way.
//
// GoMLX picks a gradient rule by node type from its process-wide
// VJPRegistration; the only per-node rule it lets a caller attach is on
// an Identity (IdentityWithCustomGradient). Replacing the registered rule
// would change the gradient of every GoMLX graph in the process, so
// instead dot routes the gradient through an Identity of its own:
//
//	carrier = IdentityWithCustomGradient(slabs(lhs) ‖ slabs(rhs))
//	out     = DotGeneral(stop(lhs), stop(rhs)) + Σ_k (carrier − stop(carrier))_k
//
// slabs lays an operand's entries out as k slabs of out's shape
// (zero-padded), so the sum adds exact zeros and out has the product's
// value; the product's own (broadcasting) rule never runs because its
// operands stop the gradient. The adjoint v of out reaches every slab of
// the carrier, and the carrier's rule returns the two contractions laid
// out as slabs in the places of lhs and rhs, which Concatenate's and
// Reshape's rules hand back to the operands. (Slicing the carrier instead
// of summing would need Pad in its gradient, which GoMLX's pure Go
// backend lacks.)
//
// Either GoMLX change would let this go: a DotGeneral rule that contracts
// the adjoint with the other operand instead of broadcasting, or a way to
// attach a rule to any node.

// dot is graph.DotGeneral; in a graph whose gradient will be taken
// (n.grad), its gradient is computed as two contractions.
func (n *net) dot(lhs *graph.Node, lc, lb []int, rhs *graph.Node, rc, rb []int) *graph.Node {
	if !n.grad {
		return graph.DotGeneral(lhs, lc, lb, rhs, rc, rb)
	}
	lx := crossAxes(lhs.Rank(), lc, lb)
	rx := crossAxes(rhs.Rank(), rc, rb)
	if len(lx) == 0 || len(rx) == 0 {
		// No blow-up in the library's rule when one side has no free axes.
		return graph.DotGeneral(lhs, lc, lb, rhs, rc, rb)
	}
	out := graph.DotGeneral(graph.StopGradient(lhs), lc, lb, graph.StopGradient(rhs), rc, rb)
	dims := out.Shape().Dimensions
	stopL, stopR := graph.StopGradient(lhs), graph.StopGradient(rhs)
	carrier := graph.Concatenate([]*graph.Node{slabs(lhs, out), slabs(rhs, out)}, 0)
	carrier = graph.IdentityWithCustomGradient(carrier, func(_, adj *graph.Node) *graph.Node {
		v := graph.Reshape(graph.Slice(adj, graph.AxisRange(0, 1)), dims...)
		gl, gr := dotGrads(v, stopL, lc, lb, lx, stopR, rc, rb, rx)
		return graph.Concatenate([]*graph.Node{slabs(gl, out), slabs(gr, out)}, 0)
	})
	zero := graph.ReduceSum(graph.Sub(carrier, graph.StopGradient(carrier)), 0)
	return graph.Add(out, zero)
}

// slabCount is the number of out-shaped slabs x's entries fill.
func slabCount(x, out *graph.Node) int {
	no := out.Shape().Size()
	return (x.Shape().Size() + no - 1) / no
}

// slabs lays x's entries out as (k, out's dims...), zero-padded.
func slabs(x, out *graph.Node) *graph.Node {
	no, nx := out.Shape().Size(), x.Shape().Size()
	k := slabCount(x, out)
	flat := graph.Reshape(x, nx)
	if pad := k*no - nx; pad > 0 {
		flat = graph.Concatenate([]*graph.Node{flat, graph.Zeros(x.Graph(), shapes.Make(x.DType(), pad))}, 0)
	}
	return graph.Reshape(flat, append([]int{k}, out.Shape().Dimensions...)...)
}

func crossAxes(rank int, contract, batch []int) []int {
	var out []int
	for a := 0; a < rank; a++ {
		if !slices.Contains(contract, a) && !slices.Contains(batch, a) {
			out = append(out, a)
		}
	}
	return out
}

// dotGrads returns the gradients of DotGeneral(lhs, lc, lb, rhs, rc, rb)
// with respect to both operands for the adjoint v, laid out as
// [batch, lhs free, rhs free]: each is v contracted with the other operand
// over that operand's free axes, then transposed into place.
func dotGrads(v, lhs *graph.Node, lc, lb, lx []int, rhs *graph.Node, rc, rb, rx []int) (gl, gr *graph.Node) {
	nb := len(lb)
	vb := axisSeq(0, nb)
	vl := axisSeq(nb, len(lx))
	vr := axisSeq(nb+len(lx), len(rx))
	gl = graph.DotGeneral(v, vr, vb, rhs, rx, rb)
	gl = graph.TransposeAllAxes(gl, placeAxes(lhs.Rank(), lb, lx, lc, rc, nb)...)
	gr = graph.DotGeneral(v, vl, vb, lhs, lx, lb)
	gr = graph.TransposeAllAxes(gr, placeAxes(rhs.Rank(), rb, rx, rc, lc, nb)...)
	return gl, gr
}

func axisSeq(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

// placeAxes returns the permutation that turns a gradient laid out as
// [batch, this operand's free axes, other operand's contracted axes in
// increasing order] back into this operand's axis order. thisC[k] is
// contracted against otherC[k].
func placeAxes(rank int, thisB, thisX, thisC, otherC []int, nb int) []int {
	perm := make([]int, rank)
	for k, a := range thisB {
		perm[a] = k
	}
	for m, a := range thisX {
		perm[a] = nb + m
	}
	sorted := slices.Clone(otherC)
	slices.Sort(sorted)
	for k, a := range thisC {
		perm[a] = nb + len(thisX) + slices.Index(sorted, otherC[k])
	}
	return perm
}
