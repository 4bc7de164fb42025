package afin

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/cpu"
	"github.com/afin-bench/afin/factor"
)

// BenchmarkForward times one forward pass for one task (the paper's
// easy/medium/hard tiers) with freshly initialised weights; the graph is
// compiled before the timer starts.
func BenchmarkForward(b *testing.B) {
	for _, name := range []string{"small", "paper"} {
		cfg, _ := ConfigByName(name, "gaussian")
		params := NewParams(cfg, rand.New(rand.NewPCG(1, 1)))
		data := make([][]float32, len(params))
		for i, p := range params {
			data[i] = p.Data
		}
		m, err := newModel("", cfg, 0, data)
		if err != nil {
			b.Fatal(err)
		}
		for _, dn := range [][2]int{{4, 256}, {8, 64}, {16, 1}} {
			rng := rand.New(rand.NewPCG(2, 2))
			task, err := factor.Simulate(rng, factor.SimOptions{D: dn[0], N: dn[1], Design: factor.DesignIID})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/d=%d/N=%d", name, dn[0], dn[1]), func(b *testing.B) {
				if _, err := m.Forward([]*factor.Task{task}); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, err := m.Forward([]*factor.Task{task}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkTrainStep times one optimiser step's forward and backward pass
// on a micro-batch of 8 tasks at (d, N) = (8, 64).
func BenchmarkTrainStep(b *testing.B) {
	for _, name := range []string{"small"} {
		cfg, _ := ConfigByName(name, "gaussian")
		params := NewParams(cfg, rand.New(rand.NewPCG(1, 1)))
		data := make([][]float32, len(params))
		for i, p := range params {
			data[i] = p.Data
		}
		eng, err := newEngine(cfg, false)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(2, 2))
		tasks, err := factor.SimulateBatch(rng, factor.SimOptions{D: 8, N: 64}, 8)
		if err != nil {
			b.Fatal(err)
		}
		z := make([][]float64, len(tasks))
		for k, t := range tasks {
			z[k] = t.TrueZ
		}
		batch, err := NewBatch(tasks, 64, z)
		if err != nil {
			b.Fatal(err)
		}
		w := paramTensors(params, data)
		b.Run(name+"/B=8/d=8/N=64", func(b *testing.B) {
			for range b.N {
				if _, _, _, err := eng.lossGrad(w, batch, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// randomNetwork declares cfg with every tensor random, the zero-initialised
// last layers included, so every path of the network carries signal.
func randomNetwork(cfg Config, seed uint64) *arch.Network {
	net := arch.MustNew(cfg)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for _, t := range net.Tensors() {
		t.Data = make([]float32, t.Size())
		scale := 0.3
		if len(t.Shape) == 2 {
			scale = 1.5 / math.Sqrt(float64(t.Shape[0]))
		}
		for i := range t.Data {
			t.Data[i] = float32((2*rng.Float64() - 1) * scale)
		}
		if strings.HasSuffix(t.Name, "/g") { // LayerNorm gains near 1
			for i := range t.Data {
				t.Data[i] += 1
			}
		}
	}
	return net
}

// equivCase is one batch for the CPU-vs-GoMLX check: tasks of one d with
// the given site counts (padding to the largest) and likelihood families.
type equivCase struct {
	cfg   string
	d     int
	ns    []int
	liks  []string
	prior string
}

// TestCPUForwardMatchesGoMLX runs the native CPU forward (package
// afin/cpu) and the GoMLX graph on the same random weights and batches:
// several (d, N), heterogeneous tasks, several tasks with padded N.
func TestCPUForwardMatchesGoMLX(t *testing.T) {
	cases := []equivCase{
		{"small", 1, []int{1}, nil, "diag_gaussian"},
		{"small", 2, []int{3}, []string{"lin_gaussian"}, "fullrank_gaussian"},
		{"small", 4, []int{7, 2, 5}, []string{"bernoulli_logit", "binomial_logit", "gaussian"}, "diag_student_t"},
		{"small", 5, []int{12, 9}, []string{"lin_student_t", "lin_gaussian"}, "diag_laplace"},
		{"small", 3, []int{40}, nil, ""},
		{"paper", 3, []int{6, 4}, []string{"lin_gaussian", "bernoulli_logit"}, ""},
		{"paper", 2, []int{1}, nil, "fullrank_gaussian"},
	}
	nets := map[string]*arch.Network{}
	for i, tc := range cases {
		t.Run(fmt.Sprintf("%s/d=%d/N=%v", tc.cfg, tc.d, tc.ns), func(t *testing.T) {
			cfg, err := ConfigByName(tc.cfg, "gaussian")
			if err != nil {
				t.Fatal(err)
			}
			if nets[tc.cfg] == nil {
				nets[tc.cfg] = randomNetwork(cfg, 7)
			}
			net := nets[tc.cfg]
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			var tasks []*factor.Task
			for _, n := range tc.ns {
				task, err := factor.Simulate(rng, factor.SimOptions{D: tc.d, N: n, Prior: tc.prior, Likelihoods: tc.liks})
				if err != nil {
					t.Fatal(err)
				}
				tasks = append(tasks, task)
			}
			batch, err := NewBatch(tasks, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			m, err := newModel("", cfg, 0, net.Data())
			if err != nil {
				t.Fatal(err)
			}
			wantMu, wantLam, err := m.eng.forward(m.w, batch)
			if err != nil {
				t.Fatal(err)
			}
			fast, err := cpu.NewNet(net)
			if err != nil {
				t.Fatal(err)
			}
			mu, lam, err := fast.Gaussian(context.Background(), batch)
			if err != nil {
				t.Fatal(err)
			}
			compareRel(t, "mean", mu, wantMu)
			compareRel(t, "precision", lam, wantLam)
		})
	}
}

// compareRel fails when got and want differ by more than 1e-5 relative to
// want's largest magnitude (float32 rounding through ~30 layers).
func compareRel(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var scale, worst float64
	for _, v := range want {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i := range got {
		worst = math.Max(worst, math.Abs(float64(got[i])-float64(want[i])))
	}
	t.Logf("%s: max |Δ| = %.3g, scale %.3g", what, worst, scale)
	if worst > 1e-5*math.Max(scale, 1e-3) || math.IsNaN(worst) {
		t.Fatalf("%s: max |Δ| = %.3g at scale %.3g\ngot  %v\nwant %v", what, worst, scale, got, want)
	}
}
