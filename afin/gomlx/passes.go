package gomlx

import (
	"context"
	"fmt"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// batchBuckets are the chunk sizes a padded program takes: one task
// (inference of a single task), the paper's micro-batch of 32, and
// powers of 4 between and beyond for batched inference.
var batchBuckets = []int{1, 8, 32, 128, maxChunk}

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

// runPadded runs a masked program on tasks [from, from+chunk) of b laid
// out at (chunk, d, np); extra builds the kind's extra inputs from the
// padded batch.
func (e *Engine) runPadded(kind string, w []any, b *arch.Batch, from, chunk, d, np int, weight float32, extra func(*padded) []any) ([]*tensors.Tensor, *padded, error) {
	pb, err := padBatch(b, from, chunk, d, np, weight)
	if err != nil {
		return nil, nil, err
	}
	in := batchInputs(pb.b, allFamilies)
	in = append(in, tensors.FromFlatDataAndDimensions(pb.cmask, chunk, d), tensors.FromFlatDataAndDimensions(pb.dreal, chunk))
	if extra != nil {
		in = append(in, extra(pb)...)
	}
	key := execKey{kind: kind, p: allFamilies, b: chunk, d: d, np: np, masked: true}
	out, err := e.call(key, w, in)
	return out, pb, err
}

// chunked runs kind over all of b's tasks, chunk by chunk, calling each
// with the outputs of one chunk (first task from, n real tasks); a chunk
// the device has no memory for is redone at half the size.
func (e *Engine) chunked(ctx context.Context, kind string, w []any, b *arch.Batch, weight float32, extra func(*padded) []any, each func(out []*tensors.Tensor, pb *padded, from, n int) error) error {
	d, np := BucketD(b.D), BucketN(b.NPad)
	for from := 0; from < b.B; {
		if err := ctxErr(ctx); err != nil {
			return err
		}
		chunk, err := e.chunkFor(kind, d, np, b.B-from)
		if err != nil {
			return err
		}
		out, pb, err := e.runPadded(kind, w, b, from, chunk, d, np, weight, extra)
		if err != nil {
			if outOfMemory(err) && e.halve(kind, d, np, chunk) {
				continue
			}
			return err
		}
		n := min(chunk, b.B-from)
		err = each(out, pb, from, n)
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
	if err := ctxErr(ctx); err != nil {
		return 0, nil, nil, err
	}
	z := tensors.FromFlatDataAndDimensions(b.Z, b.B, b.D)
	out, err := e.run("flow_loss", w, b, z, tensors.FromScalar(strength))
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
func (e *Engine) run(kind string, w []any, b *arch.Batch, extra ...any) ([]*tensors.Tensor, error) {
	p := batchPresence(b)
	key := execKey{kind: kind, p: p, b: b.B, d: b.D, np: b.NPad}
	if len(extra) > 0 {
		if t, ok := extra[0].(*tensors.Tensor); ok && t.Rank() == 3 {
			key.ext = t.Shape().Dimensions[1] // draws per task
		}
	}
	return e.call(key, w, append(batchInputs(b, p), extra...))
}

// FlowSample maps base draws eps (B×S×d) through each task's flow:
// z (B×S×d) and log q(z) (B×S).
func (e *Engine) FlowSample(w []any, b *arch.Batch, eps []float32, s int, strength float32) (z, logq []float32, err error) {
	out, err := e.run("flow_sample", w, b, tensors.FromFlatDataAndDimensions(eps, b.B, s, b.D), tensors.FromScalar(strength))
	if err != nil {
		return nil, nil, err
	}
	defer finalize(out)
	return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1]), nil
}

// FlowDensity evaluates log q at z (B×S×d) and returns the base points.
func (e *Engine) FlowDensity(w []any, b *arch.Batch, z []float32, s int, strength float32) (logq, base []float32, err error) {
	out, err := e.run("flow_density", w, b, tensors.FromFlatDataAndDimensions(z, b.B, s, b.D), tensors.FromScalar(strength))
	if err != nil {
		return nil, nil, err
	}
	defer finalize(out)
	return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1]), nil
}
