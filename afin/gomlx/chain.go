package gomlx

import (
	"context"
	"fmt"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// The chain: a pass runs the blocks' programs one after another on one
// chunk of tasks, passing tokens from block to block as device tensors.
// A forward keeps two token sets alive at a time; a training pass keeps
// each block's input tokens (the boundaries) for the backward, which
// walks the blocks in reverse, frees each boundary once its block's
// backward has read it and adds each block's weight gradients to running
// sums that stay on the device until the pass ends.

// stage is one block instance of the chain's body.
type stage struct {
	block string
	inst  int
}

// body is the chain before the head: the adapters, the encoder layers
// and the merge blocks, in order.
func (e *Engine) body() []stage {
	out := []stage{{"adapters", 0}}
	for i := range e.cfg.EncLayers {
		out = append(out, stage{"encoder_layer", i})
	}
	for i := range e.cfg.Blocks {
		out = append(out, stage{"merge_block", i})
	}
	return out
}

// env is one chunk's aux inputs by slot.
type env map[slot]*tensors.Tensor

func (en env) free() {
	for _, t := range en {
		t.FinalizeAll()
	}
}

func freeAll(ts ...*tensors.Tensor) {
	for _, t := range ts {
		if t != nil {
			t.FinalizeAll()
		}
	}
}

// bodyForward runs the body's forward programs on a chunk and returns
// the tokens entering the head; with keep, also each stage's input tokens
// (nil for the adapters), which the caller then owns.
func (e *Engine) bodyForward(ctx context.Context, w []any, en env, ps progShape, lowp, keep bool) (P, X *tensors.Tensor, inputs [][]*tensors.Tensor, err error) {
	defer func() {
		if err != nil {
			freeAll(P, X)
			for _, in := range inputs {
				freeAll(in...)
			}
			P, X, inputs = nil, nil, nil
		}
	}()
	for _, st := range e.body() {
		var acts []*tensors.Tensor
		if P != nil {
			acts = []*tensors.Tensor{P, X}
		}
		out, err := e.call(ctx, progKey{block: st.block, dir: forwardPass, ps: ps, lowp: lowp}, st.inst, w, acts, en)
		if err != nil {
			return P, X, inputs, err
		}
		if keep {
			inputs = append(inputs, acts)
		} else {
			freeAll(acts...)
		}
		P, X = out[0], out[1]
	}
	return P, X, inputs, nil
}

// headForward runs the body and then head's forward program on a chunk;
// the head's shape is the body's with s draws.
func (e *Engine) headForward(ctx context.Context, head string, w []any, en env, ps progShape, s int) ([]*tensors.Tensor, error) {
	P, X, _, err := e.bodyForward(ctx, w, en, ps, false, false)
	if err != nil {
		return nil, err
	}
	defer freeAll(P, X)
	hs := ps
	hs.s = s
	return e.call(ctx, progKey{block: head, dir: forwardPass, ps: hs}, 0, w, []*tensors.Tensor{P, X}, en)
}

// GradSums are the running sums of every weight's gradient on the
// device, indexed as the engine's parameters: a training step's chunks
// and micro-batches add into them (AddLossGrad) and the host reads them
// once (Host).
type GradSums struct {
	sums []*tensors.Tensor
}

// NewGradSums returns zero sums.
func (e *Engine) NewGradSums() *GradSums {
	g := &GradSums{sums: make([]*tensors.Tensor, len(e.params))}
	for i, p := range e.params {
		g.sums[i] = tensors.FromShape(shapes.Make(f32, p.Shape...))
	}
	return g
}

// Host copies the sums to the host and frees them.
func (g *GradSums) Host() [][]float32 {
	out := make([][]float32, len(g.sums))
	for i, t := range g.sums {
		out[i] = tensors.MustCopyFlatData[float32](t)
		t.FinalizeAll()
	}
	g.sums = nil
	return out
}

// Release frees the sums unread.
func (g *GradSums) Release() {
	freeAll(g.sums...)
	g.sums = nil
}

// chunkSums are a chunk's new sums beside the ones it started from: a
// chunk's backward programs read the sums and write new ones, which
// replace the old only when the whole chunk has run (commit), so a chunk
// that fails (the device out of memory) leaves the sums as they were and
// can be run again at half the size. The two copies cost one set of
// weights' memory.
type chunkSums struct {
	g   *GradSums
	new map[int]*tensors.Tensor
}

// of is instance inst of block's sums, as a backward program's inputs.
func (c *chunkSums) of(e *Engine, block string, inst int) []any {
	var out []any
	for _, i := range e.inst[e.blocks[block].weightsOf()][inst] {
		out = append(out, c.g.sums[i])
	}
	return out
}

// put keeps a backward program's new sums.
func (c *chunkSums) put(e *Engine, block string, inst int, sums []*tensors.Tensor) {
	for k, i := range e.inst[e.blocks[block].weightsOf()][inst] {
		c.new[i] = sums[k]
	}
}

// commit replaces the sums by the chunk's new ones.
func (c *chunkSums) commit() {
	for i, t := range c.new {
		c.g.sums[i].FinalizeAll()
		c.g.sums[i] = t
	}
	c.new = nil
}

// drop frees the chunk's new sums, leaving the old.
func (c *chunkSums) drop() {
	for _, t := range c.new {
		t.FinalizeAll()
	}
	c.new = nil
}

// donate is t's device buffer handed to a program as an input it may
// overwrite; t is spent. A tensor the backend will not donate is passed
// as it is.
func (e *Engine) donate(t *tensors.Tensor) any {
	d, err := graph.DonateTensorBuffer(t, e.backend, 0)
	if err != nil {
		return t
	}
	t.FinalizeAll()
	return d
}

// lossGradChunk runs one chunk's training pass: the body forward keeping
// boundaries, the head's loss and gradient, and every block's backward in
// reverse, adding into g (all or nothing: see chunkSums). It returns the
// chunk's loss and per-task log q.
func (e *Engine) lossGradChunk(ctx context.Context, head string, w []any, en env, ps progShape, g *GradSums) (_ float64, _ []float32, err error) {
	lowp := e.precision == "bf16"
	P, X, inputs, err := e.bodyForward(ctx, w, en, ps, lowp, true)
	if err != nil {
		return 0, nil, err
	}
	cs := &chunkSums{g: g, new: map[int]*tensors.Tensor{}}
	defer func() {
		for _, in := range inputs {
			freeAll(in...)
		}
		if err != nil {
			cs.drop()
		} else {
			cs.commit()
		}
	}()
	out, err := e.call(ctx, progKey{block: head, dir: backwardPass, ps: ps}, 0, w, []*tensors.Tensor{P, X}, en, cs.of(e, head, 0)...)
	freeAll(P, X)
	if err != nil {
		return 0, nil, err
	}
	loss := float64(tensors.MustCopyFlatData[float32](out[0])[0])
	lq := tensors.MustCopyFlatData[float32](out[1])
	freeAll(out[0], out[1])
	dP, dX := out[2], out[3]
	cs.put(e, head, 0, out[4:])
	stages := e.body()
	for i := len(stages) - 1; i >= 0; i-- {
		st := stages[i]
		acts := inputs[i]
		inputs[i] = nil
		out, err := e.call(ctx, progKey{block: st.block, dir: backwardPass, ps: ps, lowp: lowp}, st.inst, w, acts, en,
			append([]any{e.donate(dP), e.donate(dX)}, cs.of(e, st.block, st.inst)...)...)
		freeAll(acts...)
		if err != nil {
			return 0, nil, err
		}
		if len(acts) > 0 {
			dP, dX = out[0], out[1]
		}
		cs.put(e, st.block, st.inst, out[len(acts):])
	}
	return loss, lq, nil
}

// call runs program k of a block's instance inst: the instance's weights
// from w, the acts, the block's aux slots from en, then extra. A
// program's first call compiles it (timed apart, so compile seconds are
// known). A compile cannot be stopped, so when ctx ends during one, call
// returns at once and leaves the compile to finish unused (XLA takes
// minutes on a large program: the process should not wait for it).
func (e *Engine) call(ctx context.Context, k progKey, inst int, w []any, acts []*tensors.Tensor, en env, extra ...any) ([]*tensors.Tensor, error) {
	blk := e.blocks[k.block]
	if len(acts) != len(blk.acts) {
		return nil, fmt.Errorf("afin: %s: %d token inputs, want %d", k, len(acts), len(blk.acts))
	}
	var args []any
	for _, i := range e.inst[blk.weightsOf()][inst] {
		args = append(args, w[i])
	}
	for _, t := range acts {
		args = append(args, t)
	}
	for _, s := range blk.aux {
		t, ok := en[s]
		if !ok {
			return nil, fmt.Errorf("afin: %s: no %s input", k, s)
		}
		args = append(args, t)
	}
	args = append(args, extra...)
	x, err := e.exec(k)
	if err != nil {
		return nil, err
	}
	if err := untilDone(ctx, func() error { return e.precompile(k, x) }); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("afin: compiling %s: %w", k, err)
	}
	var out []*tensors.Tensor
	if err := catch(func() error {
		var err error
		out, err = x.Call(args...)
		return err
	}); err != nil {
		return nil, fmt.Errorf("afin: %s: %w", k, err)
	}
	return out, nil
}

// chunkEnv lays tasks [from, from+c) of b out at shape (c, d, np) as a
// chunk's inputs: the batch's descriptors and masks, the token and
// coordinate masks, and (with targets) z and each task's loss weight.
func chunkEnv(b *arch.Batch, from, c, d, np int, weight float32) (env, *padded, error) {
	pb, err := padBatch(b, from, c, d, np, weight)
	if err != nil {
		return nil, nil, err
	}
	p := pb.b
	en := env{}
	for f := range arch.PriorFamilies {
		en[priorNodeSlot(f)] = tensors.FromFlatDataAndDimensions(p.PriorNode[f], c, d, arch.PriorNodeWidth[f])
		en[priorPairSlot(f)] = tensors.FromFlatDataAndDimensions(p.PriorPair[f], c, d, d, arch.PriorPairWidth[f])
	}
	en[slotPriorMask] = tensors.FromFlatDataAndDimensions(p.PriorMask, c, len(arch.PriorFamilies))
	for f := range arch.LikFamilies {
		en[likNodeSlot(f)] = tensors.FromFlatDataAndDimensions(p.LikNode[f], c, np, d, arch.LikNodeWidth[f])
		en[likPairSlot(f)] = tensors.FromFlatDataAndDimensions(p.LikPair[f], c, np, d, d, arch.LikPairWidth[f])
	}
	en[slotLikMask] = tensors.FromFlatDataAndDimensions(p.LikMask, c, np, len(arch.LikFamilies))
	en[slotTokens] = tensors.FromFlatDataAndDimensions(tokenMask(p), c, 1+np)
	en[slotCoords] = tensors.FromFlatDataAndDimensions(pb.cmask, c, d)
	en[slotDReal] = tensors.FromFlatDataAndDimensions(pb.dreal, c)
	if p.Z != nil {
		en[slotZ] = tensors.FromFlatDataAndDimensions(p.Z, c, d)
		en[slotWeight] = tensors.FromFlatDataAndDimensions(pb.weight, c)
	}
	return en, pb, nil
}

// tokenMask is (B, 1+N): the prior token, always real, then each factor
// site's, real when any likelihood family is set there (padded sites have
// none).
func tokenMask(b *arch.Batch) []float32 {
	nl, k := len(arch.LikFamilies), 1+b.NPad
	m := make([]float32, b.B*k)
	for t := range b.B {
		m[t*k] = 1
		for s := range b.NPad {
			for f := range nl {
				m[t*k+1+s] += b.LikMask[(t*b.NPad+s)*nl+f]
			}
		}
	}
	return m
}
