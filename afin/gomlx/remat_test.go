package gomlx

import (
	"context"
	"math"
	"testing"
)

// Rematerialised training against the plain graph, on the Go backend:
// the same loss and gradient to float32 rounding (the recomputed forward
// is the same arithmetic), in float32 and in bfloat16, flow decoder
// included; and a smaller modelled peak, since each block's activations
// live one block at a time.
func TestRematGradientAgainstPlain(t *testing.T) {
	for _, tc := range []struct {
		name, precision, decoder string
		tol                      float64
	}{
		{"fp32", "fp32", "gaussian", 1e-5},
		{"bf16", "bf16", "gaussian", 1e-2}, // bfloat16 sums rounded in another order
		{"flow", "fp32", "flow", 1e-5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig()
			cfg.Decoder = tc.decoder
			cfg.EncLayers, cfg.Blocks = 2, 2
			cfg.FlowG, cfg.FlowH, cfg.FlowL, cfg.FlowSteps = 8, 8, 2, 2
			_, data := randomWeights(cfg, 21)
			b := trainBatch(t, 52, 5, 12, 3)
			var loss [2]float64
			var grads [2][][]float32
			for i, on := range []bool{false, true} {
				e, err := newEngine(cfg, false, "")
				if err != nil {
					t.Fatal(err)
				}
				if err := e.SetPrecision(tc.precision); err != nil {
					t.Fatal(err)
				}
				e.SetRemat(on)
				loss[i], _, grads[i], err = e.LossGrad(context.Background(), e.Weights(data), b, 1)
				if err != nil {
					t.Fatal(err)
				}
			}
			r := relErr(grads[1], grads[0])
			t.Logf("loss %.7g (plain %.7g); gradient %.2e relative", loss[1], loss[0], r)
			if math.Abs(loss[1]-loss[0]) > tc.tol*math.Max(1, math.Abs(loss[0])) {
				t.Errorf("remat loss %g, plain %g", loss[1], loss[0])
			}
			if r > tc.tol || math.IsNaN(r) {
				t.Errorf("remat gradient differs from plain by %.2e relative (want ≤ %g)", r, tc.tol)
			}
		})
	}
}

func TestRematLowersModelledPeak(t *testing.T) {
	cfg := tinyConfig()
	cfg.EncLayers, cfg.Blocks = 3, 3
	var peak [2]int64
	for i, on := range []bool{false, true} {
		e, err := newEngine(cfg, false, "")
		if err != nil {
			t.Fatal(err)
		}
		e.SetRemat(on)
		if peak[i], err = e.PredictBytes("gaussian_loss", 4, 16, 256); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("modelled peak at B=4, d=16, N=256: %.1f MB plain, %.1f MB rematerialised", float64(peak[0])/1e6, float64(peak[1])/1e6)
	if float64(peak[1]) > 0.6*float64(peak[0]) {
		t.Errorf("rematerialised peak %d bytes is not under 0.6× the plain %d", peak[1], peak[0])
	}
}
