package nuts

import (
	"math"

	"github.com/afin-bench/afin/internal/moments"
)

// dualAveraging is Nesterov's dual-averaging scheme as used by Hoffman &
// Gelman (2014) to tune the step size towards a target mean acceptance
// statistic. Constants are Stan's: γ = 0.05, κ = 0.75, t₀ = 10.
type dualAveraging struct {
	delta, gamma, kappa, t0 float64
	mu                      float64
	counter                 float64
	sBar, xBar              float64
}

func newDualAveraging(delta float64) *dualAveraging {
	return &dualAveraging{delta: delta, gamma: 0.05, kappa: 0.75, t0: 10}
}

// restart forgets the history and shrinks towards 10·ε, so that the
// adaptation explores larger steps than the current one first.
func (a *dualAveraging) restart(eps float64) {
	a.counter, a.sBar, a.xBar = 0, 0, 0
	a.mu = math.Log(10 * eps)
}

// learn returns the next step size after a transition with acceptance
// statistic acc.
func (a *dualAveraging) learn(acc float64) float64 {
	a.counter++
	if acc > 1 {
		acc = 1
	}
	eta := 1 / (a.counter + a.t0)
	a.sBar = (1-eta)*a.sBar + eta*(a.delta-acc)
	x := a.mu - a.sBar*math.Sqrt(a.counter)/a.gamma
	w := math.Pow(a.counter, -a.kappa)
	a.xBar = (1-w)*a.xBar + w*x
	return math.Exp(x)
}

// final is the averaged step size used after warm-up.
func (a *dualAveraging) final() float64 { return math.Exp(a.xBar) }

// windows is Stan's warm-up schedule: a fast initial buffer (step size
// only), a series of doubling slow windows in which the metric is
// estimated, and a fast terminal buffer. Defaults 75 / 25 / 50 for the
// initial buffer, the first slow window and the terminal buffer; when
// the warm-up is too short for them, 15% / 75% / 10% of it.
type windows struct {
	warmup              int
	initBuf, termBuf    int
	windowSize, nextEnd int
	counter             int
	adaptMetric         bool
}

func newWindows(warmup int) *windows {
	w := &windows{warmup: warmup, initBuf: 75, termBuf: 50, windowSize: 25}
	if warmup < 20 {
		// Too short to estimate anything: step size only.
		return w
	}
	w.adaptMetric = true
	if w.initBuf+w.windowSize+w.termBuf > warmup {
		w.initBuf = int(0.15 * float64(warmup))
		w.termBuf = int(0.1 * float64(warmup))
		w.windowSize = warmup - (w.initBuf + w.termBuf)
	}
	w.nextEnd = w.initBuf + w.windowSize - 1
	return w
}

// inWindow reports whether the current warm-up iteration feeds the metric
// estimator.
func (w *windows) inWindow() bool {
	return w.adaptMetric && w.counter >= w.initBuf && w.counter < w.warmup-w.termBuf && w.counter != w.warmup
}

// atWindowEnd reports whether the current iteration closes a slow window.
func (w *windows) atWindowEnd() bool {
	return w.adaptMetric && w.counter == w.nextEnd && w.counter != w.warmup
}

// advance plans the next window: double its size, and stretch it to the
// terminal buffer if the one after would not fit.
func (w *windows) advance() {
	last := w.warmup - w.termBuf - 1
	if w.nextEnd == last {
		return
	}
	w.windowSize *= 2
	w.nextEnd = w.counter + w.windowSize
	if w.nextEnd != last {
		if w.nextEnd+2*w.windowSize >= w.warmup-w.termBuf {
			w.nextEnd = last
		}
	}
}

// regularised writes Stan's shrunk estimate (n/(n+5))·S + 10⁻³·(5/(n+5))·I
// of the window's sample (co)variance S into out. The shrinkage keeps
// early, short windows from producing a degenerate metric.
func regularised(w *moments.Welford, out []float64) {
	n := w.N()
	w.ShrunkCov(out, n/(n+5), 1e-3*5/(n+5))
}
