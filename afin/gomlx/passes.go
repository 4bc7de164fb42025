package gomlx

import (
	"context"
	"fmt"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/core/tensors"
)

// batchBuckets are the chunk sizes a pass takes: powers of two. A
// training run meets one per (d, N) bucket (the largest the plan fits,
// at most the micro-batch), so its program count is that of the (d, N)
// buckets times the programs of a pass.
var batchBuckets = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, maxChunk}

// chunkFor is the tasks per chunk for b tasks in a pass: the smallest
// batch bucket holding them, capped by the memory plan.
func (e *Engine) chunkFor(pk planKey, b int) (int, error) {
	c := bucket(batchBuckets, maxChunk, min(b, maxChunk))
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

// halve halves a pass's chunk after the device ran out of memory; it
// reports false when the chunk is one task already.
func (e *Engine) halve(pk planKey, from int) bool {
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
		notes(fmt.Sprintf("%s pass (d=%d, N=%d): the device ran out of memory at %d tasks a chunk; retrying with %d", pk.kind, pk.d, pk.np, c, prev))
	}
	return true
}

// prepared is one chunk's inputs.
type prepared struct {
	from, chunk int
	en          env
	pb          *padded
	err         error
}

// chunked runs a pass over all of b's tasks, chunk by chunk, calling run
// with each chunk's inputs (first task from, n real tasks, at shape ps).
// The next chunk's inputs are laid out while the device runs this one. A
// chunk the device has no memory for is run again at half the size (run
// must leave no trace of a chunk that fails).
func (e *Engine) chunked(ctx context.Context, pk planKey, b *arch.Batch, weight float32, run func(en env, pb *padded, from, n int, ps progShape) error) error {
	var pending chan prepared
	defer func() {
		if pending != nil {
			(<-pending).en.free()
		}
	}()
	for from := 0; from < b.B; {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := e.chunkFor(pk, b.B-from)
		if err != nil {
			return err
		}
		e.note(pk, c)
		ps := progShape{b: c, d: pk.d, np: pk.np}
		prep := func(from int) prepared {
			en, pb, err := chunkEnv(b, from, c, pk.d, pk.np, weight)
			return prepared{from: from, chunk: c, en: en, pb: pb, err: err}
		}
		var cur prepared
		if pending != nil {
			cur, pending = <-pending, nil
			if cur.from != from || cur.chunk != c { // the chunk was halved meanwhile
				cur.en.free()
				cur = prep(from)
			}
		} else {
			cur = prep(from)
		}
		if cur.err != nil {
			return cur.err
		}
		n := min(c, b.B-from)
		if from+n < b.B {
			pending = make(chan prepared, 1)
			go func(from int) { pending <- prep(from) }(from + n)
		}
		err = run(cur.en, cur.pb, from, n, ps)
		cur.en.free()
		if err != nil {
			if outOfMemory(err) && e.halve(pk, c) {
				continue
			}
			return err
		}
		from += n
	}
	return nil
}

// note tells, once per pass and bucket, the memory plan a pass runs at
// (deploy/gpu/bench.sh sets this line beside XLA's own figure).
func (e *Engine) note(pk planKey, c int) {
	e.mu.Lock()
	m, ok := e.models[pk]
	seen := e.noted[pk]
	e.noted[pk] = true
	e.mu.Unlock()
	if ok && !seen && e.Notes != nil {
		e.Notes(fmt.Sprintf("memory plan: %s pass (d=%d, N=%d, %d tasks a chunk): modelled peak %d bytes (%.2f GiB of the %.2f GiB budget)",
			pk.kind, pk.d, pk.np, c, m.peak(c), float64(m.peak(c))/(1<<30), float64(e.budget)/(1<<30)))
	}
}

// Forward returns μ (B×d) and Λ (B×d×d) for a batch under the given
// weights (Gaussian decoder).
func (e *Engine) Forward(ctx context.Context, w []any, b *arch.Batch) (mu, lam []float32, err error) {
	if e.cfg.Decoder != "gaussian" {
		return nil, nil, fmt.Errorf("afin: checkpoint has a %s decoder, not a Gaussian one", e.cfg.Decoder)
	}
	d := b.D
	mu, lam = make([]float32, b.B*d), make([]float32, b.B*d*d)
	pk := planKey{kind: "gaussian", d: BucketD(d), np: BucketN(b.NPad)}
	err = e.chunked(ctx, pk, b, 1, func(en env, pb *padded, from, n int, ps progShape) error {
		out, err := e.headForward(ctx, "gaussian_decoder", w, en, ps, 0)
		if err != nil {
			return err
		}
		defer freeAll(out...)
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
// strength is the flow's strength (ignored by the Gaussian decoder).
func (e *Engine) LossGrad(ctx context.Context, w []any, b *arch.Batch, strength float32) (loss float64, logq []float32, grads [][]float32, err error) {
	g := e.NewGradSums()
	defer g.Release()
	if loss, logq, err = e.AddLossGrad(ctx, w, b, strength, 1, g); err != nil {
		return 0, nil, nil, err
	}
	return loss, logq, g.Host(), nil
}

// AddLossGrad adds scale times the batch's mean loss gradient into g and
// returns scale times the mean loss −log q(z)/d, and the per-task log q.
// The batch runs in chunks the memory plan fits, each task weighted
// scale/B, so the sum over chunks (and, with scale 1/k, over a step's k
// micro-batches) is the step's mean; the sums stay on the device.
func (e *Engine) AddLossGrad(ctx context.Context, w []any, b *arch.Batch, strength, scale float32, g *GradSums) (loss float64, logq []float32, err error) {
	if b.Z == nil {
		return 0, nil, fmt.Errorf("afin: batch has no targets")
	}
	pk := e.lossPass(b.D, b.NPad)
	head := pk.kind // the loss head is named as its pass
	var st *tensors.Tensor
	if e.cfg.Decoder == "flow" {
		st = tensors.FromScalar(strength)
		defer st.FinalizeAll()
	}
	logq = make([]float32, b.B)
	err = e.chunked(ctx, pk, b, scale/float32(b.B), func(en env, _ *padded, from, n int, ps progShape) error {
		if st != nil {
			en[slotStrength] = st
			defer delete(en, slotStrength) // the caller's, not the chunk's
		}
		l, lq, err := e.lossGradChunk(ctx, head, w, en, ps, g)
		if err != nil {
			return err
		}
		loss += l
		copy(logq[from:from+n], lq[:n])
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return loss, logq, nil
}

// lossPass is the training pass of tasks at d coordinates and n sites:
// the Gaussian decoder's at their bucket, the flow decoder's at exact d.
func (e *Engine) lossPass(d, n int) planKey {
	if e.cfg.Decoder == "flow" {
		return planKey{kind: "flow_loss", d: d, np: BucketN(n)}
	}
	return planKey{kind: "gaussian_loss", d: BucketD(d), np: BucketN(n)}
}

// FlowSample maps base draws eps (B×S×d) through each task's flow:
// z (B×S×d) and log q(z) (B×S).
func (e *Engine) FlowSample(ctx context.Context, w []any, b *arch.Batch, eps []float32, s int, strength float32) (z, logq []float32, err error) {
	return e.flowPass(ctx, "flow_sample", w, b, eps, s, strength)
}

// FlowDensity evaluates log q at z (B×S×d) and returns the base points.
func (e *Engine) FlowDensity(ctx context.Context, w []any, b *arch.Batch, z []float32, s int, strength float32) (logq, base []float32, err error) {
	base, logq, err = e.flowPass(ctx, "flow_density", w, b, z, s, strength)
	return logq, base, err
}

// flowPass runs a flow head over points pts (B×S×d), chunk by chunk, and
// returns its points (B×S×d: the draws z, or the base points) and its log
// q (B×S).
func (e *Engine) flowPass(ctx context.Context, head string, w []any, b *arch.Batch, pts []float32, s int, strength float32) (pOut, lOut []float32, err error) {
	d := b.D // the couplings run at exact d
	if e.cfg.Decoder != "flow" {
		return nil, nil, fmt.Errorf("afin: checkpoint has a %s decoder, not a flow", e.cfg.Decoder)
	}
	if len(pts) != b.B*s*d {
		return nil, nil, fmt.Errorf("afin: %d values for %d tasks × %d draws × d=%d", len(pts), b.B, s, d)
	}
	st := tensors.FromScalar(strength)
	defer st.FinalizeAll()
	pOut, lOut = make([]float32, b.B*s*d), make([]float32, b.B*s)
	pk := planKey{kind: head, d: d, np: BucketN(b.NPad), s: s}
	err = e.chunked(ctx, pk, b, 1, func(en env, _ *padded, from, n int, ps progShape) error {
		chunk := make([]float32, ps.b*s*d)
		copy(chunk, pts[from*s*d:(from+n)*s*d])
		en[slotDraws] = tensors.FromFlatDataAndDimensions(chunk, ps.b, s, d)
		en[slotStrength] = st
		defer delete(en, slotStrength)
		out, err := e.headForward(ctx, head, w, en, ps, s)
		if err != nil {
			return err
		}
		defer freeAll(out...)
		copy(pOut[from*s*d:(from+n)*s*d], tensors.MustCopyFlatData[float32](out[0])[:n*s*d])
		copy(lOut[from*s:(from+n)*s], tensors.MustCopyFlatData[float32](out[1])[:n*s])
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return pOut, lOut, nil
}
