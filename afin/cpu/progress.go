package cpu

import (
	"context"

	"github.com/afin-bench/afin/afin/arch"
)

// Progress is told how far one task's forward pass has gone: done of
// total FLOPs (as FLOPs counts them) of the task's embedding (Encoding,
// Merge, Pooling), which is where all but a few microseconds of a pass go.
// A batch of several tasks reports each task's pass in turn, done
// starting again from 0.
type Progress func(done, total int64)

type progressKey struct{}

// WithProgress returns a context whose forward passes (Gaussian,
// FlowSample, FlowLogQ, Summary) report to p: about progressSteps
// times per task, on the pass's goroutine, and once more with done =
// total when the task's embedding is complete. p must return quickly;
// a caller that draws or prints throttles in p. The training passes
// (LossGrad, FlowLossGrad) report nothing.
//
// A context carries the callback, rather than a parameter, because the
// same forward is reached through afin.Model, the engine interface and
// the methods, none of which should know about it.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

func progressOf(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}

// progressSteps is how many reports a task's pass makes at most (besides
// the final one): enough for a smooth bar, few enough that the callback's
// cost is nothing beside the products.
const progressSteps = 1000

// tracker counts a pass's products against its predicted total and
// reports to a Progress.
type tracker struct {
	report             Progress
	base, total, every int64
	next               int64
}

// start begins reporting the products after now (w.flops) against total.
func (tr *tracker) start(p Progress, flops, total int64) {
	*tr = tracker{report: p, base: flops, total: total, every: max(1, total/progressSteps)}
	tr.next = flops + tr.every
	if p != nil {
		p(0, total)
	}
}

// tick reports when the products counted (flops) passed the next step.
func (tr *tracker) tick(flops int64) {
	if tr.report == nil || flops < tr.next {
		return
	}
	tr.report(min(flops-tr.base, tr.total), tr.total)
	tr.next = flops + tr.every
}

// finish reports the pass complete (when ok) and stops reporting, so a
// workspace back in the pool holds no caller's callback.
func (tr *tracker) finish(ok bool) {
	if tr.report != nil && ok {
		tr.report(tr.total, tr.total)
	}
	*tr = tracker{}
}

// embedFLOPs is the products of one task's Encoding and Merge, what the
// embedding executes (Pooling is sums, no products).
func embedFLOPs(cfg arch.Config, d, n int) int64 {
	K := 1 + n
	box := func(h, l int) int64 { return boxFLOPs(K, d, cfg.C, h, l) }
	return encodingFLOPs(cfg, d, n, box) + mergeFLOPs(cfg, d, n, box, false)
}
