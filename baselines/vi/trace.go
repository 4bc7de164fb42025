package vi

import (
	"math"

	"github.com/afin-bench/afin/internal/moments"
)

// traceBatches is the number of batch means each window is cut into: the
// per-step losses and gradients are autocorrelated through the iterates,
// so their standard errors come from batch means, not from the steps.
const traceBatches = 10

// Trace records what the convergence checks need from one optimisation
// run: every step's loss, and for each budget the batch sums of the
// gradient over that budget's last fifth. A nil *Trace records nothing.
type Trace struct {
	budgets []int
	loss    []float64
	grad    [][]float64 // [budget] traceBatches×n batch sums, row-major
	n       int
}

// NewTrace returns a trace for a run over budgets with n parameters.
func NewTrace(budgets []int, n int) *Trace {
	t := &Trace{budgets: budgets, n: n, grad: make([][]float64, len(budgets))}
	for k := range budgets {
		t.grad[k] = make([]float64, traceBatches*n)
	}
	return t
}

// window returns the first step and the batch length of the last fifth
// of budget b.
func lastFifth(b int) (start, batch int) {
	batch = max(1, b/(5*traceBatches))
	return b - batch*traceBatches, batch
}

func (t *Trace) record(step int, loss float64, g []float64) {
	if t == nil {
		return
	}
	t.loss = append(t.loss, loss)
	for k, b := range t.budgets {
		start, batch := lastFifth(b)
		if step < start || step >= b {
			continue
		}
		row := t.grad[k][(step-start)/batch*t.n:]
		for i, v := range g {
			row[i] += v
		}
	}
}

// lossGain is how much the mean loss fell from the fourth fifth of budget
// b to its last fifth (positive: the ELBO still rose), with its standard
// error from batch means. ok is false when the run did not reach b.
func (t *Trace) lossGain(b int) (gain, se float64, ok bool) {
	start, batch := lastFifth(b)
	prev := start - batch*traceBatches
	if t == nil || len(t.loss) < b || prev < 0 {
		return 0, 0, false
	}
	m1, s1 := batchMeanSE(t.loss[prev:start], batch)
	m2, s2 := batchMeanSE(t.loss[start:b], batch)
	return m1 - m2, math.Hypot(s1, s2), true
}

// gradSNR is ‖ḡ‖²/Σᵢ SE(ḡᵢ)² for the mean gradient ḡ over budget k's last
// fifth: about 1 when the iterates wander around a stationary point, large
// when the mean gradient still points somewhere.
func (t *Trace) gradSNR(k int) (float64, bool) {
	if t == nil || len(t.loss) < t.budgets[k] {
		return 0, false
	}
	b := t.budgets[k]
	_, batch := lastFifth(b)
	var num, den float64
	means := make([]float64, traceBatches)
	for i := 0; i < t.n; i++ {
		for j := range means {
			means[j] = t.grad[k][j*t.n+i] / float64(batch)
		}
		m, se := batchMeanSE(means, 1)
		num += m * m
		den += se * se
	}
	if den == 0 {
		if num == 0 {
			return 0, true
		}
		return math.Inf(1), true
	}
	return num / den, true
}

// batchMeanSE returns the mean of x and its standard error from the means
// of consecutive batches of the given length.
func batchMeanSE(x []float64, batch int) (mean, se float64) {
	nb := len(x) / batch
	bm := make([]float64, nb)
	for j := range bm {
		var s float64
		for _, v := range x[j*batch : (j+1)*batch] {
			s += v
		}
		bm[j] = s / float64(batch)
	}
	m, v := moments.MeanVar(bm, 1) // v is 0 for a single batch
	return m, math.Sqrt(v / float64(nb))
}
