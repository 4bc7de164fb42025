package cpu

import (
	"context"
	"fmt"
	"sync"

	"github.com/afin-bench/afin/afin/arch"
)

// Training: the loss and its gradient over a batch (LossGrad,
// LossGradWorkers, FlowLossGrad), each task through embed with saving
// on, a decoder, and back.

// trainState is one LossGrad call's state: gradients, saved activations
// and backward buffers.
type trainState struct {
	g          gradSet
	boxes      map[*box]*boxGrad
	sv         taskSave
	gw         gradWS
	gP, gX     []float32 // gradient of the current token state
	tP, tX     []float32 // raw-branch gradients handed to a BoxMLP
	gMP, gMX   []float32 // gradient of the mixed attention values
	gQ, gK, gV []float32 // head-major gradients of Q, K, V
	flow       flowGrad
}

func (s *trainState) box(b *box) *boxGrad {
	bg := s.boxes[b]
	if bg == nil {
		bg = s.g.boxGradOf(b)
		s.boxes[b] = bg
	}
	return bg
}

func (s *trainState) ln(ln *layerNorm) lnGrad {
	return lnGrad{g: s.g.of(ln.decl.G), b: s.g.of(ln.decl.B)}
}

// LossGrad is the Gaussian decoder's training loss on batch (targets in
// batch.Z): −mean_b log q(z_b)/d, with log q = ½ log det Λ − ½ rᵀΛr −
// (d/2) log 2π, r = z − μ, and its gradient with respect to every tensor
// of the declaration, in Tensors() order (afin's GoMLX lossGrad computes
// the same; tests check every tensor's gradient against it and against
// finite differences). Activations are saved per residual layer and the
// layers' insides recomputed in the backward pass. Tasks run one after
// another on the calling goroutine; it checks ctx between layers.
func (n *Net) LossGrad(ctx context.Context, batch *arch.Batch) (loss float64, grads [][]float32, err error) {
	return n.LossGradWorkers(ctx, batch, 1)
}

// LossGradWorkers is LossGrad with the batch's tasks spread over up to
// workers goroutines (task b goes to worker b mod workers, and the
// workers' gradients are summed in worker order, so the result does not
// depend on scheduling).
func (n *Net) LossGradWorkers(ctx context.Context, batch *arch.Batch, workers int) (loss float64, grads [][]float32, err error) {
	if n.gaussian == nil {
		return 0, nil, fmt.Errorf("cpu: network has no Gaussian decoder")
	}
	return n.lossGrad(ctx, batch, workers, n.gaussianTaskGrad)
}

// FlowLossGrad is LossGradWorkers for the flow decoder: the loss is
// −mean_b log q(z_b)/d under the flow at strength s (the training ramp;
// 1 at inference), log q by inverting the flow at z_b.
func (n *Net) FlowLossGrad(ctx context.Context, batch *arch.Batch, s float32, workers int) (loss float64, grads [][]float32, err error) {
	if n.flow == nil {
		return 0, nil, fmt.Errorf("cpu: network has no flow decoder")
	}
	return n.lossGrad(ctx, batch, workers, func(ctx context.Context, w *workspace, st *trainState, b *arch.Batch, t task, dlq float64) (float64, error) {
		return n.flowTaskGrad(ctx, w, st, b, t, s, dlq)
	})
}

// taskGradFunc runs one task forward and backward (see gaussianTaskGrad).
type taskGradFunc func(ctx context.Context, w *workspace, s *trainState, batch *arch.Batch, t task, dlq float64) (float64, error)

func (n *Net) lossGrad(ctx context.Context, batch *arch.Batch, workers int, fn taskGradFunc) (loss float64, grads [][]float32, err error) {
	if err := checkBatch(batch); err != nil {
		return 0, nil, err
	}
	if len(batch.Z) != batch.B*batch.D {
		return 0, nil, fmt.Errorf("cpu: batch has %d targets, want %d", len(batch.Z), batch.B*batch.D)
	}
	workers = max(1, min(workers, batch.B))
	states := make([]*trainState, workers)
	losses := make([]float64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for k := range states {
		states[k] = &trainState{g: gradSet{}, boxes: map[*box]*boxGrad{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			losses[k], errs[k] = n.lossGradTasks(ctx, states[k], batch, k, workers, fn)
		}()
	}
	wg.Wait()
	for k := range states {
		if errs[k] != nil {
			return 0, nil, errs[k]
		}
		loss += losses[k]
		for _, bg := range states[k].boxes {
			bg.finish(states[k].g)
		}
	}
	for _, t := range n.decl.Tensors() {
		sum := states[0].g.of(t)
		for _, s := range states[1:] {
			addTo(sum, s.g.of(t))
		}
		grads = append(grads, sum)
	}
	return loss, grads, nil
}

// lossGradTasks runs tasks first, first+step, … of batch into s and
// returns their share of the loss.
func (n *Net) lossGradTasks(ctx context.Context, s *trainState, batch *arch.Batch, first, step int, fn taskGradFunc) (float64, error) {
	w := &workspace{}
	d := batch.D
	var loss float64
	for b := first; b < batch.B; b += step {
		t, err := locate(w, batch, b)
		if err != nil {
			return 0, fmt.Errorf("cpu: %w", err)
		}
		lq, err := fn(ctx, w, s, batch, t, -1/float64(d*batch.B))
		if err != nil {
			return 0, fmt.Errorf("cpu: task %d: %w", b, err)
		}
		loss -= lq / float64(d*batch.B)
	}
	return loss, nil
}

// gaussianTaskGrad runs one task forward and backward, adding dlq·∂log q/∂θ to
// the gradients, and returns log q at the task's target.
func (n *Net) gaussianTaskGrad(ctx context.Context, w *workspace, s *trainState, batch *arch.Batch, t task, dlq float64) (float64, error) {
	d := batch.D
	K, err := n.embed(ctx, w, batch, t, &s.sv)
	if err != nil {
		return 0, err
	}
	mean, prec := make([]float32, d), make([]float32, d*d)
	n.gaussianDecoder(w, d, mean, prec)
	lq, dmu, dlam, err := gaussLogQGrad(mean, prec, batch.Z[t.b*d:(t.b+1)*d], dlq)
	if err != nil {
		return 0, err
	}
	dPool, dXPool := n.gaussianDecoderBackward(w, s, d, dmu, dlam)
	return lq, n.embedBackward(ctx, w, s, batch, t, K, d, dPool, dXPool)
}

// flowTaskGrad runs one task through embed (saving) and the flow's inverse
// at its target z (batch.Z) with flow strength s, backpropagates dlq,
// and returns log q(z).
func (n *Net) flowTaskGrad(ctx context.Context, w *workspace, st *trainState, batch *arch.Batch, t task, s float32, dlq float64) (float64, error) {
	d := batch.D
	K, err := n.embed(ctx, w, batch, t, &st.sv)
	if err != nil {
		return 0, err
	}
	n.flowContext(w, d)
	fg := &st.flow
	lq, err := n.flowInverse(ctx, w, fg, batch.Z[t.b*d:(t.b+1)*d], s, d)
	if err != nil {
		return 0, err
	}
	daff, err := n.flowInverseBackward(ctx, w, st, fg, s, float32(dlq), d)
	if err != nil {
		return 0, err
	}
	dPool, dXPool := n.flowContextBackward(w, st, fg, daff, d)
	return lq, n.embedBackward(ctx, w, st, batch, t, K, d, dPool, dXPool)
}

// gradSet accumulates one gradient array per declared tensor.
type gradSet map[*arch.Tensor][]float32

func (g gradSet) of(t *arch.Tensor) []float32 {
	a := g[t]
	if a == nil {
		a = make([]float32, t.Size())
		g[t] = a
	}
	return a
}

// mlpGradOf points an mlpGrad at the gradient arrays of m's tensors.
func (g gradSet) mlpGradOf(m *mlp) *mlpGrad {
	mg := &mlpGrad{}
	for _, l := range m.decl.Layers {
		mg.dW, mg.dB = append(mg.dW, g.of(l.W)), append(mg.dB, g.of(l.B))
	}
	return mg
}
