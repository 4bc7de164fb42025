package train

import (
	"math"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/engine"
)

// Non-finite or negative training options are refused before any work:
// NaN passed every ≥ 0 comparison and Inf every > 0 one, and the run
// trained on NaN weights or never checkpointed by time.
func TestTrainOptionsCheckNonFinite(t *testing.T) {
	tests := []struct {
		name string
		set  func(*TrainOptions)
		want string
	}{
		{"infinite lr", func(o *TrainOptions) { o.LR = math.Inf(1) }, "learning rate must be finite and > 0, got +Inf"},
		{"NaN weight decay", func(o *TrainOptions) { o.WeightDecay = math.NaN() }, "weight decay must be finite and ≥ 0, got NaN"},
		{"NaN clip", func(o *TrainOptions) { o.ClipNorm = math.NaN() }, "clip norm must be finite and ≥ 0"},
		{"NaN EMA", func(o *TrainOptions) { o.EMADecay = math.NaN() }, "EMA decay must be in [0, 1), got NaN"},
		{"NaN checkpoint seconds", func(o *TrainOptions) { o.CheckpointSeconds = math.NaN() }, "checkpoint seconds must be finite and ≥ 0"},
		{"negative warm-up", func(o *TrainOptions) { o.Warmup = -5 }, "warm-up steps must be ≥ 0, got -5"},
	}
	if err := DefaultTrainOptions().Check(); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultTrainOptions()
			tc.set(&o)
			err := o.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("check: %v; want %q", err, tc.want)
			}
		})
	}
}

// The GoMLX engine's device settings are refused on the native engine,
// naming the engine that has them, rather than ignored.
func TestGoMLXSettingsRefusedOnNative(t *testing.T) {
	for _, tc := range []struct {
		name      string
		precision string
		want      string
	}{
		{"fp32", "fp32", ""},
		{"bf16", "bf16", "precision bf16 needs the gomlx engine"},
		{"tf32", "tf32", "precision tf32 needs the gomlx engine"},
	} {
		tr := &Trainer{}
		bd, err := engine.NewBinder(arch.SmallConfig("gaussian"), 1, engine.Choice{Engine: "native"})
		if err != nil {
			t.Fatal(err)
		}
		err = tr.configureEngine(bd, TrainOptions{Precision: tc.precision})
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
