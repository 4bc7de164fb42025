package gomlx

import (
	"slices"

	"github.com/gomlx/gomlx/pkg/core/graph"
)

// GoMLX v0.26 differentiates DotGeneral by broadcasting both operands to
// batch×cross×cross×contracted and reducing: for a linear layer on a
// (tokens, in) input that materialises tokens·in·out floats. The gradient
// of a contraction is itself a contraction, so afin's graphs compute it
// that way.
//
// GoMLX picks a gradient rule by node type from its process-wide
// VJPRegistration; the only per-node rule it lets a caller attach is on
// an Identity (IdentityWithCustomGradient), whose rule sees only the
// adjoint of that identity. Replacing the registered rule would change
// every GoMLX graph in the process, so dot wires three identities of its
// own, none larger than what it already holds:
//
//	l', r' = IdentityWithCustomGradient(lhs), (rhs)
//	s      = l'[0…0] + r'[0…0]                      (a scalar)
//	c      = IdentityWithCustomGradient(broadcast(s) to out's shape)
//	out    = DotGeneral(stop(l'), stop(r')) + (c − stop(c))
//
// c − stop(c) is an exact zero (s is finite whenever the operands are);
// it fuses into the elementwise work that follows the product (a bias),
// and s reads one entry of each operand, so the forward holds and reads
// nothing new.
// In the backward, out's adjoint v reaches c, whose rule keeps v and
// hands back a zero; that zero reaches l' and r' through s (their only
// differentiable consumer), which makes GoMLX call their rules, and those
// return the two contractions of v instead of what arrived. GoMLX runs
// the rules in decreasing node order, so c's rule (created after l' and
// r') has run when theirs do.
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
	stopL, stopR := graph.StopGradient(lhs), graph.StopGradient(rhs)
	var v, gl, gr *graph.Node // out's adjoint (set by c's rule) and the operands' gradients
	grads := func() {
		if gl == nil {
			gl, gr = dotGrads(v, stopL, lc, lb, lx, stopR, rc, rb, rx)
		}
	}
	l := graph.IdentityWithCustomGradient(lhs, func(_, arrived *graph.Node) *graph.Node {
		if v == nil { // out had no adjoint: nothing to pass on
			return arrived
		}
		grads()
		return gl
	})
	r := graph.IdentityWithCustomGradient(rhs, func(_, arrived *graph.Node) *graph.Node {
		if v == nil {
			return arrived
		}
		grads()
		return gr
	})
	out := graph.DotGeneral(graph.StopGradient(l), lc, lb, graph.StopGradient(r), rc, rb)
	return carry(out, entrySum(l, r), func(adj *graph.Node) { v = adj })
}

// carry is out (whose own gradient is stopped) plus c − stop(c), c being
// s broadcast to out's shape under a rule that hands out's adjoint to
// got and passes a zero on to s: the exact zero through which the
// backward reaches the custom rules of the identities s reads (entrySum),
// after got has run.
func carry(out, s *graph.Node, got func(adj *graph.Node)) *graph.Node {
	c := graph.IdentityWithCustomGradient(graph.BroadcastToDims(s, out.Shape().Dimensions...), func(_, adj *graph.Node) *graph.Node {
		got(adj)
		return graph.ZerosLike(adj)
	})
	return graph.Add(out, graph.Sub(c, graph.StopGradient(c)))
}

// entrySum is the sum of the nodes' first entries: a scalar that reads
// one entry of each.
func entrySum(xs ...*graph.Node) *graph.Node {
	var s *graph.Node
	for _, x := range xs {
		s = addOrSet(s, firstEntry(x))
	}
	return s
}

// firstEntry is x's first entry as a scalar, read with a Gather: its
// gradient (a scatter into zeros) is never used, and unlike Slice's (a
// Pad) every backend builds it.
func firstEntry(x *graph.Node) *graph.Node {
	flat := graph.Reshape(x, x.Shape().Size())
	idx := graph.Const(x.Graph(), [][]int32{{0}})
	return graph.Reshape(graph.Gather(flat, idx))
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
