package afin

import (
	"slices"
	"sync"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// GoMLX v0.26 differentiates DotGeneral by broadcasting both operands to
// batch×cross×cross×contracted and reducing: for a linear layer on a
// (tokens, in) input that materialises tokens·in·out floats, which made a
// training step of even a tiny batch take seconds. The gradient of a
// contraction is itself a contraction, so for the DotGeneral nodes this
// package creates it is computed that way; every other DotGeneral keeps
// the library's rule.
//
// GoMLX selects a gradient by node type from its global VJPRegistration
// (a per-node rule, Node.customVJP, can only be set on an Identity), so the
// rule is installed there once and asks, per node, whether afin recorded
// it. The records are scoped to the graph being built and dropped by
// releaseDots once its construction (gradient included) is done, so no
// compiled or evicted graph stays reachable from here.
//
// Either GoMLX change would let this file go: a DotGeneral VJP that
// contracts the adjoint with the other operand (as dotGeneralVJP does)
// instead of broadcasting, or an exported way to attach a custom VJP to
// any node.
var (
	dotScopes   sync.Map // *graph.Graph → *sync.Map of *graph.Node → dotSpec
	origDotVJP  graph.VJP
	installOnce sync.Once
)

type dotSpec struct{ lc, lb, rc, rb []int }

func installDotVJP() {
	installOnce.Do(func() {
		origDotVJP = graph.VJPRegistration[graph.NodeTypeDotGeneral]
		graph.VJPRegistration[graph.NodeTypeDotGeneral] = dotGeneralVJP
	})
}

// dotg is graph.DotGeneral with an efficient gradient.
func dotg(lhs *graph.Node, lc, lb []int, rhs *graph.Node, rc, rb []int) *graph.Node {
	installDotVJP()
	out := graph.DotGeneral(lhs, lc, lb, rhs, rc, rb)
	scope, _ := dotScopes.LoadOrStore(out.Graph(), &sync.Map{})
	scope.(*sync.Map).Store(out, dotSpec{lc: lc, lb: lb, rc: rc, rb: rb})
	return out
}

// releaseDots forgets the DotGeneral nodes recorded for g; call it when
// g's construction, gradient included, is complete.
func releaseDots(g *graph.Graph) { dotScopes.Delete(g) }

func lookupDot(n *graph.Node) (dotSpec, bool) {
	scope, ok := dotScopes.Load(n.Graph())
	if !ok {
		return dotSpec{}, false
	}
	s, ok := scope.(*sync.Map).Load(n)
	if !ok {
		return dotSpec{}, false
	}
	return s.(dotSpec), true
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

func dotGeneralVJP(node *graph.Node, vjps []*graph.Node, outShape shapes.Shape) []*graph.Node {
	sp, ok := lookupDot(node)
	in := node.Inputs()
	if !ok {
		return origDotVJP(node, vjps, outShape)
	}
	lhs, rhs := in[0], in[1]
	lx := crossAxes(lhs.Rank(), sp.lc, sp.lb)
	rx := crossAxes(rhs.Rank(), sp.rc, sp.rb)
	if len(lx) == 0 || len(rx) == 0 {
		// No blow-up in the library's rule when one side has no free axes.
		return origDotVJP(node, vjps, outShape)
	}
	v := vjps[0]
	nb := len(sp.lb)
	vb := axisSeq(0, nb)
	vl := axisSeq(nb, len(lx))
	vr := axisSeq(nb+len(lx), len(rx))
	gl := graph.DotGeneral(v, vr, vb, rhs, rx, sp.rb)
	gl = graph.TransposeAllAxes(gl, placeAxes(lhs.Rank(), sp.lb, lx, sp.lc, sp.rc, nb)...)
	gr := graph.DotGeneral(v, vl, vb, lhs, lx, sp.lb)
	gr = graph.TransposeAllAxes(gr, placeAxes(rhs.Rank(), sp.rb, rx, sp.rc, sp.lc, nb)...)
	return []*graph.Node{gl, gr}
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
