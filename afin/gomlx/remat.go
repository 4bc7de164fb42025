package gomlx

import (
	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/core/graph"
)

// Rematerialisation: a training graph whose encoder layers and merge
// blocks keep only their inputs and outputs for the backward, and run
// each block's forward again when the backward reaches it, as the
// authors' --encoder-checkpoint and --merge-checkpoint do. A block's
// activations (the BoxMLP hidden layers at the pair shape, the attention
// maps) then live one block at a time instead of all at once, for about
// a third more arithmetic.
//
// GoMLX attaches a custom gradient only to an Identity, so remat wires
// the block through identities and an exact zero (carry):
//
//	x', p'  = IdentityWithCustomGradient(inputs), (the block's weights)
//	y       = block(stop(x'), stop(p'))               (nothing kept for the backward)
//	c_k     = IdentityWithCustomGradient(broadcast(Σ x'[0…0] + Σ p'[0…0]))
//	out_k   = stop(y_k) + (c_k − stop(c_k))
//
// c_k's rule records out_k's adjoint v_k. The rules of x' and p' then
// build the block again, on copies of the inputs made to depend on the
// adjoints (an added 0·v[0…0], so the compiler can neither run the copy
// in the forward nor merge it with the forward's own), and return the
// gradient of Σ_k ⟨block_k, stop(v_k)⟩ with respect to the copies.

// remat evaluates block on ins. In a graph whose gradient will be taken
// with n.remat set, the block's forward is run again in the backward (see
// above); elsewhere it is block(n, ins). block must read its weights
// through m.t and no graph node of the outer net but ins and the
// non-differentiable masks.
func (n *net) remat(ins []*graph.Node, block func(m *net, ins []*graph.Node) []*graph.Node) []*graph.Node {
	if !n.grad || !n.rematerialise {
		return block(n, ins)
	}
	r := &rematBlock{n: n, block: block, ins: ins, wrapped: map[*arch.Tensor]*graph.Node{}}
	xs := make([]*graph.Node, len(ins))
	for i, x := range ins {
		w := r.wrap(x, i)
		r.carriers = append(r.carriers, w)
		xs[i] = graph.StopGradient(w)
	}
	fwd := n.derived(false, func(t *arch.Tensor) *graph.Node {
		if w, ok := r.wrapped[t]; ok {
			return graph.StopGradient(w)
		}
		w := r.wrap(n.t(t), -1-len(r.params))
		r.params = append(r.params, t)
		r.wrapped[t] = w
		r.carriers = append(r.carriers, w)
		return graph.StopGradient(w)
	})
	ys := block(fwd, xs)
	s := entrySum(r.carriers...)
	r.vs = make([]*graph.Node, len(ys))
	out := make([]*graph.Node, len(ys))
	for k, y := range ys {
		// y stopped at the end too: GoMLX would otherwise push the adjoint
		// through the whole forward, as far as the stops at its inputs,
		// building a backward that nothing reads.
		out[k] = carry(graph.StopGradient(y), s, func(adj *graph.Node) { r.vs[k] = adj })
	}
	return out
}

// rematBlock is one rematerialised block: its inputs, the weights it
// read (in order of first reading), its outputs' adjoints once the
// backward has reached it, and the gradients it computed from them
// (inputs first, then weights).
type rematBlock struct {
	n        *net
	block    func(m *net, ins []*graph.Node) []*graph.Node
	ins      []*graph.Node
	params   []*arch.Tensor
	wrapped  map[*arch.Tensor]*graph.Node
	carriers []*graph.Node
	vs       []*graph.Node
	grads    []*graph.Node
}

// wrap is x with the custom gradient that returns the recomputed
// block's gradient for input i (i ≥ 0) or for weight −1−i.
func (r *rematBlock) wrap(x *graph.Node, i int) *graph.Node {
	return graph.IdentityWithCustomGradient(x, func(_, arrived *graph.Node) *graph.Node {
		if !r.reached() {
			return arrived
		}
		r.recompute()
		if i >= 0 {
			return r.grads[i]
		}
		return r.grads[len(r.ins)+(-1-i)]
	})
}

// reached reports whether any output of the block has an adjoint.
func (r *rematBlock) reached() bool {
	for _, v := range r.vs {
		if v != nil {
			return true
		}
	}
	return false
}

// recompute builds the block's forward again in the backward and its
// gradient, once.
func (r *rematBlock) recompute() {
	if r.grads != nil {
		return
	}
	var anchor *graph.Node // 0·v[0…0]: ties the copy to the backward
	for _, v := range r.vs {
		if v != nil {
			anchor = graph.MulScalar(firstEntry(graph.StopGradient(v)), 0)
			break
		}
	}
	xs := make([]*graph.Node, len(r.ins))
	for i, x := range r.ins {
		xs[i] = graph.Add(graph.StopGradient(x), graph.ConvertDType(anchor, x.DType()))
	}
	ps := make(map[*arch.Tensor]*graph.Node, len(r.params))
	for _, t := range r.params {
		// A fresh node for each weight, so the gradient stops there.
		ps[t] = graph.IdentityWithCustomGradient(graph.StopGradient(r.n.t(t)), func(_, v *graph.Node) *graph.Node { return v })
	}
	again := r.n.derived(true, func(t *arch.Tensor) *graph.Node {
		if p, ok := ps[t]; ok {
			return p
		}
		panic("afin: a rematerialised block read a weight its forward did not")
	})
	ys := r.block(again, xs)
	var obj *graph.Node
	for k, y := range ys {
		if v := r.vs[k]; v != nil {
			obj = addOrSet(obj, graph.ReduceAllSum(graph.Mul(y, graph.StopGradient(v))))
		}
	}
	wrt := append([]*graph.Node{}, xs...)
	for _, t := range r.params {
		wrt = append(wrt, ps[t])
	}
	r.grads = graph.Gradient(obj, wrt...)
}

// derived is n reading its weights through lookup, with grad as given
// and remat off (a block is rematerialised whole).
func (n *net) derived(grad bool, lookup func(*arch.Tensor) *graph.Node) *net {
	m := *n
	m.grad, m.rematerialise, m.lookup = grad, false, lookup
	return &m
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
