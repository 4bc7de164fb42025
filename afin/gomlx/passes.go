package gomlx

import (
	"context"
	"fmt"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/core/tensors"
)

// batchBuckets are the chunk sizes a padded program takes: powers of
// two. A training run meets one per (d, N) bucket (the largest the plan
// fits, at most the micro-batch), so its program count is that of the
// (d, N) buckets.
var batchBuckets = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, maxChunk}

// chunkFor is the tasks per program run for b tasks in bucket (d, np):
// the smallest batch bucket holding them, capped by the memory plan.
func (e *Engine) chunkFor(kind string, d, np, b int) (int, error) {
	c := bucket(batchBuckets, maxChunk, min(b, maxChunk))
	pk := planKey{kind: kind, d: d, np: np}
	e.mu.Lock()
	planned, ok := e.chunks[pk]
	e.mu.Unlock()
	if !ok {
		var err error
		if planned, err = e.plan(pk); err != nil {
			return 0, err
		}
		e.mu.Lock()
		e.chunks[pk] = planned
		e.mu.Unlock()
	}
	return min(c, planned), nil
}

// halve halves a bucket's chunk after the device ran out of memory; it
// reports false when the chunk is one task already.
func (e *Engine) halve(kind string, d, np, from int) bool {
	pk := planKey{kind: kind, d: d, np: np}
	e.mu.Lock()
	c := min(e.chunks[pk], from)
	if c <= 1 {
		e.mu.Unlock()
		return false
	}
	prev := 1
	for _, b := range batchBuckets {
		if b < c {
			prev = b
		}
	}
	e.chunks[pk] = prev
	e.retries++
	notes := e.Notes
	e.mu.Unlock()
	if notes != nil {
		notes(fmt.Sprintf("%s program (d=%d, N=%d): the device ran out of memory at %d tasks a run; retrying with %d", kind, d, np, c, prev))
	}
	return true
}

// prepared is one chunk's inputs, laid out at its program's shape.
type prepared struct {
	from, chunk int
	pb          *padded
	in          []any
	err         error
}

// prepare lays tasks [from, from+chunk) of b out at (chunk, d, np) as a
// masked program's inputs; extra builds the kind's extra inputs.
func prepare(b *arch.Batch, from, chunk, d, np int, weight float32, extra func(*padded) []any) prepared {
	pb, err := padBatch(b, from, chunk, d, np, weight)
	if err != nil {
		return prepared{err: err}
	}
	in := batchInputs(pb.b, allFamilies)
	in = append(in, tensors.FromFlatDataAndDimensions(pb.cmask, chunk, d), tensors.FromFlatDataAndDimensions(pb.dreal, chunk))
	if extra != nil {
		in = append(in, extra(pb)...)
	}
	return prepared{from: from, chunk: chunk, pb: pb, in: in}
}

func (p prepared) free() {
	for _, a := range p.in {
		if t, ok := a.(*tensors.Tensor); ok {
			t.FinalizeAll()
		}
	}
}

// chunked runs kind over all of b's tasks, chunk by chunk, calling each
// with the outputs of one chunk (first task from, n real tasks); a chunk
// the device has no memory for is redone at half the size. The next
// chunk's inputs are laid out while the device runs this one.
func (e *Engine) chunked(ctx context.Context, kind string, w []any, b *arch.Batch, weight float32, extra func(*padded) []any, each func(out []*tensors.Tensor, pb *padded, from, n int) error) error {
	d, np := BucketD(b.D), BucketN(b.NPad)
	var pending chan prepared
	defer func() {
		if pending != nil {
			(<-pending).free()
		}
	}()
	for from := 0; from < b.B; {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk, err := e.chunkFor(kind, d, np, b.B-from)
		if err != nil {
			return err
		}
		var cur prepared
		if pending != nil {
			cur, pending = <-pending, nil
			if cur.from != from || cur.chunk != chunk { // the chunk was halved meanwhile
				cur.free()
				cur = prepare(b, from, chunk, d, np, weight, extra)
			}
		} else {
			cur = prepare(b, from, chunk, d, np, weight, extra)
		}
		if cur.err != nil {
			return cur.err
		}
		n := min(chunk, b.B-from)
		if from+n < b.B {
			pending = make(chan prepared, 1)
			go func(from int) { pending <- prepare(b, from, chunk, d, np, weight, extra) }(from + n)
		}
		key := execKey{kind: kind, p: allFamilies, b: chunk, d: d, np: np, masked: true}
		out, err := e.call(ctx, key, w, cur.in)
		if err != nil {
			if outOfMemory(err) && e.halve(kind, d, np, chunk) {
				continue
			}
			return err
		}
		err = each(out, cur.pb, from, n)
		finalize(out)
		if err != nil {
			return err
		}
		from += n
	}
	return nil
}

// Forward returns μ (B×d) and Λ (B×d×d) for a batch under the given
// weights (Gaussian decoder), through the padded programs.
func (e *Engine) Forward(ctx context.Context, w []any, b *arch.Batch) (mu, lam []float32, err error) {
	if e.cfg.Decoder != "gaussian" {
		return nil, nil, fmt.Errorf("afin: checkpoint has a %s decoder, not a Gaussian one", e.cfg.Decoder)
	}
	d := b.D
	mu, lam = make([]float32, b.B*d), make([]float32, b.B*d*d)
	err = e.chunked(ctx, "gaussian", w, b, 1, nil, func(out []*tensors.Tensor, pb *padded, from, n int) error {
		dB := pb.b.D
		m, l := tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1])
		for t := range n {
			copy(mu[(from+t)*d:(from+t+1)*d], m[t*dB:t*dB+d])
			for i := range d {
				o := ((from+t)*d + i) * d
				copy(lam[o:o+d], l[(t*dB+i)*dB:(t*dB+i)*dB+d])
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return mu, lam, nil
}

// LossGrad returns the mean loss −log q(z)/d over the batch's tasks, the
// per-task log q and the gradients with respect to every parameter.
// strength is the flow's strength (ignored by the Gaussian decoder). The
// Gaussian decoder's batch runs in chunks the memory plan fits, each
// task weighted 1/B, so the sum over chunks is the whole batch's mean.
func (e *Engine) LossGrad(ctx context.Context, w []any, b *arch.Batch, strength float32) (loss float64, logq []float32, grads [][]float32, err error) {
	if b.Z == nil {
		return 0, nil, nil, fmt.Errorf("afin: batch has no targets")
	}
	if e.cfg.Decoder == "flow" {
		return e.flowLossGrad(ctx, w, b, strength)
	}
	logq = make([]float32, b.B)
	grads = make([][]float32, len(e.params))
	zIn := func(pb *padded) []any {
		return []any{tensors.FromFlatDataAndDimensions(pb.b.Z, pb.b.B, pb.b.D), tensors.FromFlatDataAndDimensions(pb.weight, pb.b.B)}
	}
	err = e.chunked(ctx, "gaussian_loss", w, b, 1/float32(b.B), zIn, func(out []*tensors.Tensor, _ *padded, from, n int) error {
		loss += float64(tensors.MustCopyFlatData[float32](out[0])[0])
		copy(logq[from:from+n], tensors.MustCopyFlatData[float32](out[1])[:n])
		for i := range e.params {
			g := tensors.MustCopyFlatData[float32](out[2+i])
			if grads[i] == nil {
				grads[i] = g
				continue
			}
			for k, v := range g {
				grads[i][k] += v
			}
		}
		return nil
	})
	if err != nil {
		return 0, nil, nil, err
	}
	return loss, logq, grads, nil
}

// flowLossGrad is the flow decoder's loss and gradient: one program per
// exact d (the flow's couplings are not masked), N bucketed by the
// caller.
func (e *Engine) flowLossGrad(ctx context.Context, w []any, b *arch.Batch, strength float32) (float64, []float32, [][]float32, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, nil, err
	}
	z := tensors.FromFlatDataAndDimensions(b.Z, b.B, b.D)
	out, err := e.run(ctx, "flow_loss", w, b, z, tensors.FromScalar(strength))
	if err != nil {
		return 0, nil, nil, err
	}
	defer finalize(out)
	loss := float64(tensors.MustCopyFlatData[float32](out[0])[0])
	logq := tensors.MustCopyFlatData[float32](out[1])
	grads := make([][]float32, len(e.params))
	for i := range e.params {
		grads[i] = tensors.MustCopyFlatData[float32](out[2+i])
	}
	return loss, logq, grads, nil
}

// run executes an unpadded program (the flow decoder's) on a batch plus
// extra inputs.
func (e *Engine) run(ctx context.Context, kind string, w []any, b *arch.Batch, extra ...any) ([]*tensors.Tensor, error) {
	p := batchPresence(b)
	key := execKey{kind: kind, p: p, b: b.B, d: b.D, np: b.NPad}
	if len(extra) > 0 {
		if t, ok := extra[0].(*tensors.Tensor); ok && t.Rank() == 3 {
			key.ext = t.Shape().Dimensions[1] // draws per task
		}
	}
	return e.call(ctx, key, w, append(batchInputs(b, p), extra...))
}

// FlowSample maps base draws eps (B×S×d) through each task's flow:
// z (B×S×d) and log q(z) (B×S).
func (e *Engine) FlowSample(w []any, b *arch.Batch, eps []float32, s int, strength float32) (z, logq []float32, err error) {
	out, err := e.run(context.Background(), "flow_sample", w, b, tensors.FromFlatDataAndDimensions(eps, b.B, s, b.D), tensors.FromScalar(strength))
	if err != nil {
		return nil, nil, err
	}
	defer finalize(out)
	return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1]), nil
}

// FlowDensity evaluates log q at z (B×S×d) and returns the base points.
func (e *Engine) FlowDensity(w []any, b *arch.Batch, z []float32, s int, strength float32) (logq, base []float32, err error) {
	out, err := e.run(context.Background(), "flow_density", w, b, tensors.FromFlatDataAndDimensions(z, b.B, s, b.D), tensors.FromScalar(strength))
	if err != nil {
		return nil, nil, err
	}
	defer finalize(out)
	return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1]), nil
}
