package gomlx

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/afin-bench/afin/internal/heappeak"
)

// The memory model against the Go backend, which runs a program's nodes
// one at a time as the model assumes: the heap a training program's run
// adds is within a factor of the modelled peak, either way.
func TestMemoryModelAgainstGoBackend(t *testing.T) {
	cfg := tinyConfig()
	_, data := randomWeights(cfg, 10)
	e, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	w := e.Weights(data)
	for _, tc := range []struct{ d, n, b int }{{8, 60, 4}, {16, 16, 2}} {
		b := trainBatch(t, 41, tc.d, tc.n, tc.b)
		if _, _, _, err := e.LossGrad(context.Background(), w, b, 1); err != nil { // compile outside the measurement
			t.Fatal(err)
		}
		predicted, err := e.PredictBytes("gaussian_loss", tc.b, tc.d, tc.n) // the pass's, as the plan models it
		if err != nil {
			t.Fatal(err)
		}
		// Collect often, so the heap holds what the run keeps, not garbage.
		defer debug.SetGCPercent(debug.SetGCPercent(5))
		// Twice: the Go backend pools its buffers in sync.Pools, whose
		// entries outlive one collection; pooled buffers counted in the
		// base and reused by the run would hide the run's peak.
		runtime.GC()
		runtime.GC()
		base := heappeak.Now()
		stop := make(chan struct{})
		res := heappeak.Sample(stop, 500*time.Microsecond)
		if _, _, _, err := e.LossGrad(context.Background(), w, b, 1); err != nil {
			t.Fatal(err)
		}
		close(stop)
		measured := int64(<-res - base)
		t.Logf("d=%d N=%d B=%d: modelled %.1f MB, Go backend heap growth %.1f MB", tc.d, tc.n, tc.b, float64(predicted)/1e6, float64(measured)/1e6)
		// The Go backend's matrix products take transposed copies of their
		// operands, which the model (outputs only) does not count; the host
		// holds the chunk's inputs a second time (the padded batch beside
		// its tensors); and the heap holds garbage between collections:
		// measured 1.67–1.75× the block model on 2026-11-29. The check
		// holds it to twice the model, and to a third below it (a starved
		// sampler on a loaded machine reads low).
		if r := float64(measured) / float64(predicted); r > 2 || r < 1.0/3 {
			t.Errorf("heap grew %.1f MB against a modelled peak of %.1f MB (ratio %.2f)", float64(measured)/1e6, float64(predicted)/1e6, r)
		}
	}
}
