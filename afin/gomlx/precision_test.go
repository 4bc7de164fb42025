package gomlx

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
)

// bf16 training (bfloat16 activations from float32 master weights, the
// decoder and loss in float32) against the same pass in float32: the
// loss and gradient agree to bfloat16's 8 bits of mantissa, on the Go
// backend.
func TestBF16GradientAgainstFloat32(t *testing.T) {
	// The initialisation's weights, as training starts from: random ±0.5
	// weights through every layer make a chaotic network whose float32
	// and bfloat16 passes part for reasons no training run meets.
	cfg := tinyConfig()
	decl := arch.MustNew(cfg)
	decl.Init(rand.New(rand.NewPCG(12, 13)))
	data := decl.Data()
	b := trainBatch(t, 51, 5, 12, 4)
	ref, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	wantLoss, _, want, err := ref.LossGrad(context.Background(), ref.Weights(data), b, 1)
	if err != nil {
		t.Fatal(err)
	}
	low, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := low.SetPrecision("bf16"); err != nil {
		t.Fatal(err)
	}
	loss, _, got, err := low.LossGrad(context.Background(), low.Weights(data), b, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := relErr(got, want)
	t.Logf("loss %.5g (float32 %.5g); gradient %.2e relative", loss, wantLoss, r)
	if math.Abs(loss-wantLoss) > 0.03*math.Max(1, math.Abs(wantLoss)) {
		t.Errorf("bf16 loss %g, float32 %g", loss, wantLoss)
	}
	if r > 0.05 || r == 0 {
		t.Errorf("bf16 gradient differs from float32 by %.2e relative (want (0, 0.05])", r)
	}
	if err := low.SetPrecision("fp16"); err == nil {
		t.Error("fp16 accepted")
	}
}
