package afin

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// TestFlowEmbedsOnce: on the native engine a flow checkpoint's draws and
// log q, however many, cost one embedding of the task (one forward pass
// reported), not one per 512 draws: at large N the embedding is nearly
// all of a pass, so 2,000 draws cost four of them.
func TestFlowEmbedsOnce(t *testing.T) {
	m, err := Load(filepath.Join("..", "checkpoints", "small-flow"), EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	task, err := factor.Simulate(rand.New(rand.NewPCG(1, 2)), factor.SimOptions{D: 3, N: 30,
		Prior: "diag_gaussian", Likelihoods: []string{"lin_gaussian"}, Design: factor.DesignIID})
	if err != nil {
		t.Fatal(err)
	}
	passes := 0
	ctx := WithForwardProgress(context.Background(), func(done, _ int64) {
		if done == 0 {
			passes++
		}
	})
	z, _, err := m.SampleFlowContext(ctx, task, 2000, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if passes != 1 {
		t.Errorf("2000 draws took %d passes, want 1", passes)
	}
	passes = 0
	if _, err := m.LogQFlowContext(ctx, task, z[:1500*3]); err != nil {
		t.Fatal(err)
	}
	if passes != 1 {
		t.Errorf("log q at 1500 points took %d passes, want 1", passes)
	}
}

// TestForecast: the forecast is the cost and memory models' (FLOPs grow
// as N² at large N), is long past LongForwardSeconds, and says so in one
// line with the task's size.
func TestForecast(t *testing.T) {
	m, err := Load(filepath.Join("..", "checkpoints", DefaultCheckpointName), EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int
		long bool
	}{{256, false}, {10_000, false}, {1_360_000, true}} {
		f := m.Forecast(3, tc.n)
		if f.FLOPs <= 0 || f.PeakBytes <= 0 || !(f.Seconds > 0) || f.Kernel == "" || f.Long() != tc.long {
			t.Errorf("N=%d: forecast %+v, want long %v", tc.n, f, tc.long)
		}
		if s := f.String(); strings.Contains(s, "\n") || !strings.Contains(s, "N="+strconv.Itoa(tc.n)) {
			t.Errorf("N=%d: %q", tc.n, s)
		}
	}
	a, b := m.Forecast(3, 100_000), m.Forecast(3, 10_000)
	if r := float64(a.FLOPs) / float64(b.FLOPs); r < 80 || r > 100 {
		t.Errorf("FLOPs at N=100k / N=10k = %.1f, want the attention's ~N² (80–100)", r)
	}
}
