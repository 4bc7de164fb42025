package afin

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// tinyConfig keeps the tests fast while exercising every module.
func tinyConfig() Config {
	return Config{Name: "tiny", Decoder: "gaussian", C: 8, AdapterH: 8, AdapterL: 2,
		EncLayers: 1, BoxH: 8, BoxL: 3, Blocks: 1, Heads: 2, MergeH: 8, MergeL: 3,
		DecH: 8, DecL: 2, OffdiagMul: 0.1}
}

func tinyFlowConfig() Config {
	c := tinyConfig()
	c.Decoder = "flow"
	c.FlowG, c.FlowH, c.FlowL, c.FlowSteps = 6, 8, 3, 4
	return c
}

func tinyTrainOptions(steps int) TrainOptions {
	o := DefaultTrainOptions()
	o.Steps, o.BatchTasks, o.Warmup, o.LR = steps, 2, 2, 1e-3
	o.DMax, o.NMax = 3, 4
	o.EMAStart = 1
	o.CheckpointEvery, o.CheckpointSeconds, o.EvalEvery, o.LogEvery = 0, 0, 0, 1
	return o
}

// The shipped model API: Load a freshly trained checkpoint and run any d
// and N, including N = 0 and d = 1.
func TestLoadAndForwardAnySize(t *testing.T) {
	dir := t.TempDir()
	if err := (&Trainer{Dir: dir}).Train(context.Background(), tinyConfig(), tinyTrainOptions(1), false); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir, EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, dn := range [][2]int{{1, 0}, {1, 3}, {6, 2}, {2, 40}} {
		tk, err := factor.Simulate(rng, factor.SimOptions{D: dn[0], N: max(dn[1], 1)})
		if err != nil {
			t.Fatal(err)
		}
		if dn[1] == 0 {
			tk.Factors = nil
		}
		mean, cov, err := m.Posterior(tk)
		if err != nil {
			t.Fatalf("d=%d N=%d: %v", dn[0], dn[1], err)
		}
		if len(mean) != dn[0] || len(cov) != dn[0]*dn[0] {
			t.Fatalf("d=%d: got %d/%d values", dn[0], len(mean), len(cov))
		}
		for i := range dn[0] {
			if !(cov[i*dn[0]+i] > 0) {
				t.Fatalf("d=%d N=%d: variance %g", dn[0], dn[1], cov[i*dn[0]+i])
			}
		}
	}
}

// The flow variant trains (gradients flow to the flow modules) and its
// checkpoint serves samples and densities through the Model API.
func TestFlowTrainAndSample(t *testing.T) {
	dir := t.TempDir()
	o := tinyTrainOptions(2)
	if err := (&Trainer{Dir: dir}).Train(t.Context(), tinyFlowConfig(), o, false); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir, EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := factor.Simulate(rand.New(rand.NewPCG(1, 1)), factor.SimOptions{D: 3, N: 5})
	if err != nil {
		t.Fatal(err)
	}
	z, lq, err := m.SampleFlow(tk, 600, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	lq2, err := m.LogQFlow(tk, z)
	if err != nil {
		t.Fatal(err)
	}
	for i := range lq {
		if math.Abs(lq[i]-lq2[i]) > 1e-3*(1+math.Abs(lq[i])) {
			t.Fatalf("draw %d: log q %g from the sampler, %g from the density", i, lq[i], lq2[i])
		}
	}
	if _, _, err := m.Posterior(tk); err == nil {
		t.Error("Gaussian posterior of a flow checkpoint did not fail")
	}
}

// TestGoMLXGraphBuiltOnlyWhenUsed: on the native engine a loaded model holds
// one copy of its weights; the GoMLX graph appears with its first use.
func TestGoMLXGraphBuiltOnlyWhenUsed(t *testing.T) {
	for _, tc := range []struct {
		engine    string
		wantGraph bool
	}{{"native", false}, {"gomlx", true}} {
		t.Run(tc.engine, func(t *testing.T) {
			cfg, _ := ConfigByName("small", "gaussian")
			m, err := newModel("", cfg, 0, randomNetwork(cfg, 1).Data(), EngineChoice{Engine: tc.engine})
			if err != nil {
				t.Fatal(err)
			}
			if got := m.gomBd != nil; got != tc.wantGraph {
				t.Fatalf("GoMLX graph built at load: %v, want %v", got, tc.wantGraph)
			}
			if _, err := m.CompareEngines(context.Background(), 1, 1, 2, 3, 4); err != nil {
				t.Fatal(err)
			}
			if m.gomBd == nil {
				t.Fatal("CompareEngines did not build the GoMLX graph")
			}
		})
	}
}
