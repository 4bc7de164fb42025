package gomlx

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

// Blocks. The engine compiles the network not as one program but as one
// small program per block and direction: the adapters, one encoder layer,
// one merge block, and a head (pooling with a decoder, its loss or its
// draws). A block's weights are inputs of its programs, so the four
// encoder layers share one compiled program, as do the four merge blocks;
// a program is compiled once per shape (progShape) and reused for every
// layer, chunk and step. The engine chains the programs on the device
// and keeps only block boundaries alive between them (chain.go).
//
// A block's backward program takes the block's inputs and its outputs'
// adjoints, runs the block's forward again and returns the adjoints of
// its inputs and its weights' gradients added to running sums. Nothing
// inside a block lives from the forward to the backward: activations are
// rematerialised by construction, one block at a time.

// slot names one input of a block program. slotShape is the one place
// each is laid out.
type slot string

const (
	slotP        slot = "P"        // (B, K, d, d, C) pair tokens; K = 1 + N factors
	slotX        slot = "X"        // (B, K, d, C) node tokens
	slotTokens   slot = "tokens"   // (B, K): 1 on each task's real factor tokens
	slotCoords   slot = "coords"   // (B, d): 1 on each task's real coordinates
	slotDReal    slot = "dreal"    // (B): real coordinates per task
	slotZ        slot = "z"        // (B, d): the training targets
	slotWeight   slot = "weight"   // (B): each task's weight in the loss (1/B, 0 on padding)
	slotStrength slot = "strength" // (): the flow's strength
	slotDraws    slot = "draws"    // (B, S, d): base draws to map, or points to score
)

// Batch descriptor slots: "prior_node/f", "prior_pair/f", "prior_mask",
// "lik_node/f", "lik_pair/f", "lik_mask".
func priorNodeSlot(f int) slot { return slot("prior_node/" + strconv.Itoa(f)) }
func priorPairSlot(f int) slot { return slot("prior_pair/" + strconv.Itoa(f)) }
func likNodeSlot(f int) slot   { return slot("lik_node/" + strconv.Itoa(f)) }
func likPairSlot(f int) slot   { return slot("lik_pair/" + strconv.Itoa(f)) }

const (
	slotPriorMask slot = "prior_mask"
	slotLikMask   slot = "lik_mask"
)

// batchSlots are every family's descriptors and the family masks, in the
// adapters' input order.
func batchSlots() []slot {
	var out []slot
	for f := range arch.PriorFamilies {
		out = append(out, priorNodeSlot(f), priorPairSlot(f))
	}
	out = append(out, slotPriorMask)
	for f := range arch.LikFamilies {
		out = append(out, likNodeSlot(f), likPairSlot(f))
	}
	return append(out, slotLikMask)
}

// progShape is the shape a program is compiled for: b tasks at d latent
// coordinates and np factor sites (padded), s draws per task (flow heads).
type progShape struct{ b, d, np, s int }

// slotShape is the shape of slot s in a program of shape ps.
func (e *Engine) slotShape(s slot, ps progShape) shapes.Shape {
	B, d, k, C := ps.b, ps.d, 1+ps.np, e.cfg.C
	switch s {
	case slotP:
		return shapes.Make(f32, B, k, d, d, C)
	case slotX:
		return shapes.Make(f32, B, k, d, C)
	case slotTokens:
		return shapes.Make(f32, B, k)
	case slotCoords, slotZ:
		return shapes.Make(f32, B, d)
	case slotDReal, slotWeight:
		return shapes.Make(f32, B)
	case slotStrength:
		return shapes.Make(f32)
	case slotDraws:
		return shapes.Make(f32, B, ps.s, d)
	case slotPriorMask:
		return shapes.Make(f32, B, len(arch.PriorFamilies))
	case slotLikMask:
		return shapes.Make(f32, B, ps.np, len(arch.LikFamilies))
	}
	kind, fam, _ := strings.Cut(string(s), "/")
	f, _ := strconv.Atoi(fam)
	switch kind {
	case "prior_node":
		return shapes.Make(f32, B, d, arch.PriorNodeWidth[f])
	case "prior_pair":
		return shapes.Make(f32, B, d, d, arch.PriorPairWidth[f])
	case "lik_node":
		return shapes.Make(f32, B, ps.np, d, arch.LikNodeWidth[f])
	case "lik_pair":
		return shapes.Make(f32, B, ps.np, d, d, arch.LikPairWidth[f])
	}
	panic("afin: no shape for slot " + string(s))
}

// block declares one block of the network: its inputs, whether it runs
// in bfloat16 under bf16 training, and its forward pass as a function of
// a net (reading the weights of the block's first instance) and its
// inputs by slot. Every block reads the coordinate mask (slotCoords,
// slotDReal), set as the net's coords.
type block struct {
	name string
	// modules and count find each instance's weights: the tensors of the
	// declaration's modules (arch.Tensor.Module), split by the next part
	// of their names, the instance number, into count(cfg) instances; a
	// nil count makes the whole modules one instance.
	modules []string
	count   func(arch.Config) int
	// shares names the block whose instances' weights this one reads (a
	// head's inference and training variants read the same decoder).
	shares string
	// acts are the inputs the backward differentiates; aux the others.
	acts, aux []slot
	// adjoints is how many of the forward's first outputs carry an
	// adjoint into the backward. A loss block's first output is the
	// loss: its backward seeds that with 1 and returns the forward's
	// outputs before the gradients.
	adjoints int
	loss     bool
	// lowp: the block computes in bfloat16 when training in bf16 (heads
	// do not: the decoder and the loss stay in float32).
	lowp    bool
	forward func(n *net, in map[slot]*graph.Node) []*graph.Node
}

// direction is a program's pass.
type direction int

const (
	forwardPass direction = iota
	backwardPass
)

func (d direction) String() string {
	if d == backwardPass {
		return "backward"
	}
	return "forward"
}

// progKey names one compiled program.
type progKey struct {
	block string
	dir   direction
	ps    progShape
	lowp  bool
}

func (k progKey) String() string {
	s := fmt.Sprintf("%s %s (d=%d, N=%d, %d tasks", k.block, k.dir, k.ps.d, k.ps.np, k.ps.b)
	if k.ps.s > 0 {
		s += fmt.Sprintf(", %d draws", k.ps.s)
	}
	if k.lowp {
		s += ", bf16"
	}
	return s + ")"
}

// instanceWeights lists, for each instance of each block, the indices of
// its tensors in decl.Tensors() order; instances of one block list their
// tensors in one order (the declaration's), which is what lets them share
// programs. Every tensor belongs to exactly one instance.
func instanceWeights(decl *arch.Network, blocks []*block) (map[string][][]int, error) {
	out := map[string][][]int{}
	owner := map[int]string{}
	for _, blk := range blocks {
		if blk.shares != "" {
			continue
		}
		n := 1
		if blk.count != nil {
			n = blk.count(decl.Cfg)
		}
		idx := make([][]int, n)
		for i, t := range decl.Tensors() {
			if !slices.Contains(blk.modules, t.Module()) {
				continue
			}
			k := 0
			if blk.count != nil {
				part := strings.SplitN(t.Name, "/", 3)
				var err error
				if k, err = strconv.Atoi(part[1]); err != nil || k >= n {
					return nil, fmt.Errorf("afin: tensor %s has no instance number of block %s", t.Name, blk.name)
				}
			}
			if o, ok := owner[i]; ok {
				return nil, fmt.Errorf("afin: tensor %s is in blocks %s and %s", t.Name, o, blk.name)
			}
			owner[i] = blk.name
			idx[k] = append(idx[k], i)
		}
		for k := range idx {
			if len(idx[k]) == 0 || len(idx[k]) != len(idx[0]) {
				return nil, fmt.Errorf("afin: instance %d of block %s has %d tensors, instance 0 %d", k, blk.name, len(idx[k]), len(idx[0]))
			}
		}
		out[blk.name] = idx
	}
	for i, t := range decl.Tensors() {
		if _, ok := owner[i]; !ok {
			return nil, fmt.Errorf("afin: tensor %s belongs to no block", t.Name)
		}
	}
	return out, nil
}

// weightsOf is the block whose instances hold blk's weights.
func (blk *block) weightsOf() string {
	if blk.shares != "" {
		return blk.shares
	}
	return blk.name
}

// programInputs are the shapes of a program's inputs, in buildProgram's
// order: the weights of the block's instance, its acts and aux slots,
// then (backward) the adjoints of its outputs and the running gradient
// sums of its weights.
func (e *Engine) programInputs(k progKey) []shapes.Shape {
	blk := e.blocks[k.block]
	var out []shapes.Shape
	ws := e.inst[blk.weightsOf()][0]
	for _, i := range ws {
		out = append(out, shapes.Make(f32, e.params[i].Shape...))
	}
	for _, s := range blk.acts {
		out = append(out, e.slotShape(s, k.ps))
	}
	for _, s := range blk.aux {
		out = append(out, e.slotShape(s, k.ps))
	}
	if k.dir == backwardPass {
		if !blk.loss {
			// A body block's outputs are tokens, shaped as its P and X.
			for _, s := range []slot{slotP, slotX}[:blk.adjoints] {
				out = append(out, e.slotShape(s, k.ps))
			}
		}
		for _, i := range ws {
			out = append(out, shapes.Make(f32, e.params[i].Shape...))
		}
	}
	return out
}

// buildProgram is the graph of one program over its inputs (laid out as
// programInputs says).
func (e *Engine) buildProgram(k progKey, in []*graph.Node) []*graph.Node {
	blk := e.blocks[k.block]
	ws := e.inst[blk.weightsOf()][0]
	wn, rest := in[:len(ws)], in[len(ws):]
	named := map[slot]*graph.Node{}
	acts := rest[:len(blk.acts)]
	for i, s := range blk.acts {
		named[s] = rest[i]
	}
	rest = rest[len(blk.acts):]
	for i, s := range blk.aux {
		named[s] = rest[i]
	}
	rest = rest[len(blk.aux):]
	lowp := k.lowp && blk.lowp
	if lowp {
		for s, x := range named {
			named[s] = graph.ConvertDType(x, bf16)
		}
	}
	n := e.blockNet(ws, wn, named, lowp, k.dir == backwardPass)
	outs := blk.forward(n, named)
	if lowp {
		for i, o := range outs {
			outs[i] = graph.ConvertDType(o, f32)
		}
	}
	if k.dir == forwardPass {
		return outs
	}
	var obj *graph.Node
	var result []*graph.Node
	if blk.loss {
		obj, result = outs[0], outs
	} else {
		for i, adj := range rest[:blk.adjoints] {
			obj = addOrSet(obj, graph.ReduceAllSum(graph.Mul(outs[i], adj)))
		}
		rest = rest[blk.adjoints:]
	}
	wrt := append(append([]*graph.Node{}, acts...), wn...)
	grads := graph.Gradient(obj, wrt...)
	result = append(result, grads[:len(acts)]...)
	for i, g := range grads[len(acts):] {
		result = append(result, graph.Add(rest[i], g))
	}
	return result
}

// blockNet is the net a block's program builds on: the instance's weight
// nodes (bfloat16 copies when lowp, whose gradients come back in float32)
// and the coordinate mask of its inputs (named, already converted).
func (e *Engine) blockNet(ws []int, wn []*graph.Node, named map[slot]*graph.Node, lowp, grad bool) *net {
	n := &net{cfg: e.cfg, decl: e.decl, nodes: make(map[*arch.Tensor]*graph.Node, len(ws)), unfactorised: e.unfactorised, grad: grad}
	for i, p := range ws {
		x := wn[i]
		if lowp {
			x = graph.ConvertDType(x, bf16)
		}
		n.nodes[e.params[p]] = x
	}
	n.coords = &coords{m: named[slotCoords], dr: named[slotDReal]}
	return n
}
