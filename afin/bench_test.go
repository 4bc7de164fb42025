package afin

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/cpu"
	"github.com/afin-bench/afin/afin/engine"
	"github.com/afin-bench/afin/afin/gomlx"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/gemm"
	"github.com/afin-bench/afin/internal/gemm/openblas"
)

// gemmKernel forces the matrix kernel of the native benchmarks
// (BenchmarkForward, BenchmarkTrainStepCPU), e.g.
// go test -bench TrainStepCPU ./afin -args -gemm=avx2; empty: the
// fastest this CPU runs.
var gemmKernel = flag.String("gemm", "", "matrix kernel for the native benchmarks: avx512, avx2, neon or generic (gemm.Use)")

// forceKernel applies -gemm for a benchmark and returns the restore.
func forceKernel(b *testing.B) func() {
	if *gemmKernel == "" {
		return func() {}
	}
	return useKernel(b, *gemmKernel)
}

// benchShapes are the (d, N) of issue 15's forward benchmarks: the
// paper's easy/medium/hard tiers and two extrapolation settings.
var benchShapes = [][2]int{{4, 256}, {8, 64}, {16, 1}, {24, 128}, {32, 400}}

// benchBatch is one task with a diag_gaussian prior and N lin_gaussian
// sites (the families cpu.FLOPs assumes), as a network batch.
func benchBatch(b *testing.B, d, n int) (*factor.Task, *Batch) {
	rng := rand.New(rand.NewPCG(2, 2))
	task, err := factor.Simulate(rng, factor.SimOptions{D: d, N: n, Prior: factor.DiagGaussianFamily,
		Likelihoods: []string{factor.LinGaussianFamily}, Design: factor.DesignIID})
	if err != nil {
		b.Fatal(err)
	}
	batch, err := NewBatch(context.Background(), []*factor.Task{task}, 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	return task, batch
}

// reportRates adds GFLOP/s from the products the CPU path executes
// (cpu.FLOPs) and eff-GFLOP/s from the count the authors' PyTorch code
// needs for the same function (first BoxMLP layers unfactorised), so
// rates compare with sgemm's and times with PyTorch's.
func reportRates(b *testing.B, cfg Config, d, n, tasks int, mult float64) {
	s := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(mult*float64(tasks)*float64(cpu.FLOPs(cfg, d, n))/s/1e9, "GFLOP/s")
	b.ReportMetric(mult*float64(tasks)*float64(cpu.UnfactorisedFLOPs(cfg, d, n))/s/1e9, "eff-GFLOP/s")
}

// BenchmarkForward times one Gaussian forward pass of one task on the
// native CPU path (package afin/cpu), descriptor building included, with
// random weights. cpu-GFLOP/s divides by the process's CPU time, not wall
// time: on a loaded machine, the figure to compare kernels by. Names:
// BenchmarkForward/<config>/d=D,N=N.
func BenchmarkForward(b *testing.B) {
	defer forceKernel(b)()
	for _, name := range []string{"small", "paper"} {
		cfg, _ := ConfigByName(name, "gaussian")
		fast, err := cpu.NewNet(randomNetwork(cfg, 1))
		if err != nil {
			b.Fatal(err)
		}
		for _, dn := range benchShapes {
			task, _ := benchBatch(b, dn[0], dn[1])
			b.Run(fmt.Sprintf("%s/d=%d,N=%d", name, dn[0], dn[1]), func(b *testing.B) {
				b.ReportAllocs()
				cpu0, haveCPU := processCPU()
				for range b.N {
					batch, err := NewBatch(context.Background(), []*factor.Task{task}, 0, nil)
					if err != nil {
						b.Fatal(err)
					}
					if _, _, err := fast.Gaussian(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
				}
				reportRates(b, cfg, dn[0], dn[1], 1, 1)
				if cpu1, ok := processCPU(); ok && haveCPU {
					b.ReportMetric(float64(b.N)*float64(cpu.FLOPs(cfg, dn[0], dn[1]))/(cpu1-cpu0).Seconds()/1e9, "cpu-GFLOP/s")
				}
			})
		}
	}
}

// BenchmarkForwardGoMLX is BenchmarkForward on the GoMLX graph (pure Go
// backend; compiled before the timer starts), at the shapes it finishes
// in seconds.
func BenchmarkForwardGoMLX(b *testing.B) {
	for _, name := range []string{"small", "paper"} {
		cfg, _ := ConfigByName(name, "gaussian")
		m, err := newModel("", cfg, 0, randomNetwork(cfg, 1).Data(), EngineChoice{Engine: "gomlx"})
		if err != nil {
			b.Fatal(err)
		}
		for _, dn := range benchShapes[:3] {
			task, _ := benchBatch(b, dn[0], dn[1])
			b.Run(fmt.Sprintf("%s/d=%d,N=%d", name, dn[0], dn[1]), func(b *testing.B) {
				if _, err := m.Forward([]*factor.Task{task}); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, err := m.Forward([]*factor.Task{task}); err != nil {
						b.Fatal(err)
					}
				}
				reportRates(b, cfg, dn[0], dn[1], 1, 1)
			})
		}
	}
}

// BenchmarkSgemmReference is OpenBLAS sgemm on one thread (build with
// -tags openblas, OPENBLAS_NUM_THREADS=1) and afin's kernel at the
// forward's dominant shape (paper config, d=8, N=64: 65·64 pair rows,
// hidden 192), so forward rates and the machine's attainable rate come
// from one run.
func BenchmarkSgemmReference(b *testing.B) {
	const m, k, n = 4160, 192, 192
	rng := rand.New(rand.NewPCG(5, 5))
	a, w, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	p, err := gemm.Pack(w, k, n, nil)
	if err != nil {
		b.Fatal(err)
	}
	rate := func(b *testing.B) {
		b.ReportMetric(2*m*k*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	b.Run(fmt.Sprintf("openblas/M=%d,K=%d,N=%d", m, k, n), func(b *testing.B) {
		if !openblas.Available {
			b.Skip("build with -tags openblas")
		}
		for range b.N {
			openblas.Sgemm(m, n, k, a, k, w, n, c, n, false)
		}
		rate(b)
	})
	for _, kern := range gemm.Kernels() {
		b.Run(fmt.Sprintf("afin-%s/M=%d,K=%d,N=%d", kern, m, k, n), func(b *testing.B) {
			defer useKernel(b, kern)()
			for range b.N {
				p.Mul(c, n, a, k, m, 0)
			}
			rate(b)
		})
	}
}

// BenchmarkTrainStepCPU times one training step's loss and gradient on
// the native CPU path (cpu.Net.LossGrad) on B tasks at (d, N) = (8, 64);
// GFLOP/s counts 3× the forward products (forward + backward; the
// backward's recomputation of activations is not counted as useful work).
func BenchmarkTrainStepCPU(b *testing.B) {
	defer forceKernel(b)()
	b.Logf("matrix kernel %s (%s)", gemm.Kernel(), gemm.CPUFeatures())
	for _, name := range []string{"small", "paper"} {
		cfg, _ := ConfigByName(name, "gaussian")
		fast, err := cpu.NewNet(randomNetwork(cfg, 1))
		if err != nil {
			b.Fatal(err)
		}
		for _, B := range []int{8, 128} {
			b.Run(fmt.Sprintf("%s/tasks=%d,d=8,N=64", name, B), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(2, 2))
				tasks, err := factor.SimulateBatch(rng, factor.SimOptions{D: 8, N: 64, Prior: factor.DiagGaussianFamily,
					Likelihoods: []string{factor.LinGaussianFamily}}, B)
				if err != nil {
					b.Fatal(err)
				}
				z := make([][]float64, len(tasks))
				for k, t := range tasks {
					z[k] = t.TrueZ
				}
				batch, err := NewBatch(context.Background(), tasks, 64, z)
				if err != nil {
					b.Fatal(err)
				}
				for range b.N {
					if _, _, err := fast.LossGrad(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
				}
				reportRates(b, cfg, 8, 64, B, 3)
			})
		}
	}
}

// BenchmarkTrainStep times one training step's forward and backward pass
// (GoMLX graph, pure Go backend) on B tasks at (d, N) = (8, 64). GFLOP/s
// counts 3× the forward products (forward + backward). The paper config
// at B=128 takes many minutes here: set AFIN_BENCH_SLOW=1 to run it.
func BenchmarkTrainStep(b *testing.B) {
	for _, name := range []string{"small", "paper"} {
		cfg, _ := ConfigByName(name, "gaussian")
		net := randomNetwork(cfg, 1)
		eng, err := gomlx.New(cfg, "")
		if err != nil {
			b.Fatal(err)
		}
		w := eng.Weights(net.Data())
		for _, B := range []int{8, 128} {
			b.Run(fmt.Sprintf("%s/tasks=%d,d=8,N=64", name, B), func(b *testing.B) {
				if name == "paper" && B == 128 && os.Getenv("AFIN_BENCH_SLOW") == "" {
					b.Skip("set AFIN_BENCH_SLOW=1")
				}
				rng := rand.New(rand.NewPCG(2, 2))
				tasks, err := factor.SimulateBatch(rng, factor.SimOptions{D: 8, N: 64, Prior: factor.DiagGaussianFamily,
					Likelihoods: []string{factor.LinGaussianFamily}}, B)
				if err != nil {
					b.Fatal(err)
				}
				z := make([][]float64, len(tasks))
				for k, t := range tasks {
					z[k] = t.TrueZ
				}
				batch, err := NewBatch(context.Background(), tasks, 64, z)
				if err != nil {
					b.Fatal(err)
				}
				// The first call compiles the graph for this shape: untimed.
				if _, _, _, err := eng.LossGrad(context.Background(), w, batch, 1); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, _, _, err := eng.LossGrad(context.Background(), w, batch, 1); err != nil {
						b.Fatal(err)
					}
				}
				reportRates(b, cfg, 8, 64, B, 3)
			})
		}
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
	pad   int // sites padded to (0: the largest N)
}

// TestCPUForwardMatchesGoMLX runs the native CPU forward (package
// afin/cpu) and the GoMLX graph on the same random weights and batches:
// several (d, N), heterogeneous tasks, several tasks with padded N, a
// prior-only task, and explicit padding beyond the largest N.
func TestCPUForwardMatchesGoMLX(t *testing.T) {
	cases := []equivCase{
		{"small", 1, []int{1}, nil, "diag_gaussian", 0},
		{"small", 2, []int{3}, []string{"lin_gaussian"}, "fullrank_gaussian", 0},
		{"small", 4, []int{7, 2, 5}, []string{"bernoulli_logit", "binomial_logit", "gaussian"}, "diag_student_t", 0},
		{"small", 5, []int{12, 9}, []string{"lin_student_t", "lin_gaussian"}, "diag_laplace", 0},
		{"small", 3, []int{40}, nil, "", 0},
		{"small", 3, []int{0, 2}, nil, "diag_gaussian", 8},
		{"small", 2, []int{5}, []string{"binomial_logit"}, "", 16},
		{"paper", 3, []int{6, 4}, []string{"lin_gaussian", "bernoulli_logit"}, "", 0},
		{"paper", 2, []int{1}, nil, "fullrank_gaussian", 12},
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
				task, err := factor.Simulate(rng, factor.SimOptions{D: tc.d, N: max(n, 1), Prior: tc.prior, Likelihoods: tc.liks})
				if err != nil {
					t.Fatal(err)
				}
				task.Factors = task.Factors[:n] // n = 0: a prior-only task
				tasks = append(tasks, task)
			}
			batch, err := NewBatch(context.Background(), tasks, tc.pad, nil)
			if err != nil {
				t.Fatal(err)
			}
			m, err := newModel("", cfg, 0, net.Data(), EngineChoice{})
			if err != nil {
				t.Fatal(err)
			}
			wantMu, wantLam, err := gomlxOf(t, m).Gaussian(context.Background(), batch)
			if err != nil {
				t.Fatal(err)
			}
			eachGemmKernel(t, func(t *testing.T) {
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
		})
	}
}

// useKernel switches the matrix kernel to k and returns the function that
// restores the previous one.
func useKernel(t testing.TB, k string) func() {
	t.Helper()
	def := gemm.Kernel()
	if err := gemm.Use(k); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := gemm.Use(def); err != nil {
			t.Fatal(err)
		}
	}
}

// eachGemmKernel runs f under every matrix kernel this CPU can run
// (gemm.Use), so the native engine's comparisons with GoMLX hold for each
// kernel, and restores the default afterwards.
func eachGemmKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, k := range gemm.Kernels() {
		t.Run(k, func(t *testing.T) {
			defer useKernel(t, k)()
			f(t)
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

// TestCPUForwardMatchesFixture runs the native CPU forward with the
// authors' imported fixture weights on the fixture tasks and compares
// with their PyTorch outputs (mean and precision to 1e-4 relative, as the
// GoMLX path in TestFixtureMatchesReference).
func TestCPUForwardMatchesFixture(t *testing.T) {
	cases := loadFixtureCases(t, "gaussian")
	m := importFixture(t, "run-gaussian")
	fast, err := cpu.NewNetFromData(m.Cfg, m.wdata)
	if err != nil {
		t.Fatal(err)
	}
	var worstMean, worstPrec float64
	for k, c := range cases {
		task, err := factor.ParseTask(c.Task)
		if err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		batch, err := NewBatch(context.Background(), []*factor.Task{task}, 0, nil)
		if err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		mu, lam, err := fast.Gaussian(context.Background(), batch)
		if err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		var want []float64
		for _, row := range c.Expect.Precision {
			want = append(want, row...)
		}
		worstMean = math.Max(worstMean, relErr(f64(mu), c.Expect.Mean))
		worstPrec = math.Max(worstPrec, relErr(f64(lam), want))
	}
	t.Logf("%d cases: max rel. error mean %.3g, precision %.3g", len(cases), worstMean, worstPrec)
	if worstMean > 1e-4 || worstPrec > 1e-4 {
		t.Errorf("CPU forward disagrees with the reference: mean %.3g, precision %.3g (tol 1e-4)", worstMean, worstPrec)
	}
}

func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// TestCPUFlowMatchesGoMLX checks the native flow decoder's sampling and
// log q against the GoMLX graph's on the same random weights.
func TestCPUFlowMatchesGoMLX(t *testing.T) {
	cfg := SmallConfig("flow")
	net := randomNetwork(cfg, 3)
	m, err := newModel("", cfg, 0, net.Data(), EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := cpu.NewNet(net)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct{ d, s int }{{1, 3}, {3, 5}, {6, 40}} {
		t.Run(fmt.Sprintf("d=%d,S=%d", tc.d, tc.s), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 4))
			var tasks []*factor.Task
			for _, n := range []int{5, 3} {
				task, err := factor.Simulate(rng, factor.SimOptions{D: tc.d, N: n})
				if err != nil {
					t.Fatal(err)
				}
				tasks = append(tasks, task)
			}
			batch, err := NewBatch(context.Background(), tasks, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			eps := make([]float32, batch.B*tc.s*tc.d)
			for k := range eps {
				eps[k] = float32(rng.NormFloat64())
			}
			wantZ, wantLQ, err := gomlxOf(t, m).FlowSample(context.Background(), batch, eps, tc.s)
			if err != nil {
				t.Fatal(err)
			}
			wantDQ, err := gomlxOf(t, m).FlowLogQ(context.Background(), batch, wantZ, tc.s)
			if err != nil {
				t.Fatal(err)
			}
			eachGemmKernel(t, func(t *testing.T) {
				z, lq, err := fast.FlowSample(context.Background(), batch, eps, tc.s)
				if err != nil {
					t.Fatal(err)
				}
				compareRel(t, "sample z", z, wantZ)
				compareRel(t, "sample log q", lq, wantLQ)
				dq, err := fast.FlowLogQ(context.Background(), batch, wantZ, tc.s)
				if err != nil {
					t.Fatal(err)
				}
				compareRel(t, "density log q", dq, wantDQ)
			})
		})
	}
}

// TestCPUFlowMatchesFixture compares the native flow log q with the
// authors' PyTorch outputs at the fixture points (1e-3 absolute, as the
// GoMLX path).
func TestCPUFlowMatchesFixture(t *testing.T) {
	cases := loadFixtureCases(t, "flow")
	m := importFixture(t, "run-flow")
	net, err := arch.New(m.Cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := net.SetData(m.wdata); err != nil {
		t.Fatal(err)
	}
	fast, err := cpu.NewNet(net)
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for k, c := range cases {
		task, err := factor.ParseTask(c.Task)
		if err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		batch, err := NewBatch(context.Background(), []*factor.Task{task}, 0, nil)
		if err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		var z []float32
		for _, row := range c.Expect.Z {
			for _, v := range row {
				z = append(z, float32(v))
			}
		}
		lq, err := fast.FlowLogQ(context.Background(), batch, z, len(c.Expect.Z))
		if err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		for s, want := range c.Expect.LogQ {
			worst = math.Max(worst, math.Abs(float64(lq[s])-want))
		}
	}
	t.Logf("%d cases: max abs. error log q %.3g", len(cases), worst)
	if worst > 1e-3 {
		t.Errorf("CPU flow disagrees with the reference: log q %.3g (tol 1e-3)", worst)
	}
}

// TestCPULossGradMatchesGoMLX compares the native backward pass (loss and
// the gradient of every tensor) with the GoMLX graph's autodiff on the
// same random weights and batch.
func TestCPULossGradMatchesGoMLX(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		d    int
		ns   []int
		liks []string
	}{
		{"small", 3, []int{4, 2}, []string{"lin_gaussian", "bernoulli_logit"}},
		{"small", 1, []int{3}, nil},
		{"paper", 2, []int{3}, []string{"binomial_logit"}},
	} {
		t.Run(fmt.Sprintf("%s/d=%d,N=%v", tc.cfg, tc.d, tc.ns), func(t *testing.T) {
			cfg, _ := ConfigByName(tc.cfg, "gaussian")
			net := randomNetwork(cfg, 5)
			rng := rand.New(rand.NewPCG(8, 9))
			var tasks []*factor.Task
			var z [][]float64
			for _, n := range tc.ns {
				task, err := factor.Simulate(rng, factor.SimOptions{D: tc.d, N: n, Likelihoods: tc.liks})
				if err != nil {
					t.Fatal(err)
				}
				tasks, z = append(tasks, task), append(z, task.TrueZ)
			}
			batch, err := NewBatch(context.Background(), tasks, 0, z)
			if err != nil {
				t.Fatal(err)
			}
			eng, err := gomlx.New(cfg, "")
			if err != nil {
				t.Fatal(err)
			}
			wantLoss, _, want, err := eng.LossGrad(context.Background(), eng.Weights(net.Data()), batch, 1)
			if err != nil {
				t.Fatal(err)
			}
			eachGemmKernel(t, func(t *testing.T) {
				fast, err := cpu.NewNet(net)
				if err != nil {
					t.Fatal(err)
				}
				loss, got, err := fast.LossGrad(context.Background(), batch)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(loss-wantLoss) > 1e-5*math.Max(1, math.Abs(wantLoss)) {
					t.Errorf("loss %g, want %g", loss, wantLoss)
				}
				worst := compareGrads(t, net, got, want)
				t.Logf("loss %.6g (GoMLX %.6g); worst relative gradient error %.3g", loss, wantLoss, worst)
			})
		})
	}
}

// compareGrads fails when a tensor's gradient differs from want by more
// than 1e-3 relative to its norm, floored at 1e-4 of the largest norm:
// some gradients are zero analytically (the key map's last bias shifts
// every score of a query equally) and both sides are rounding noise
// there. It returns the worst relative error.
func compareGrads(t *testing.T, net *arch.Network, got, want [][]float32) float64 {
	t.Helper()
	norm := func(x []float32) float64 {
		var s float64
		for _, v := range x {
			s += float64(v) * float64(v)
		}
		return math.Sqrt(s)
	}
	var top, worst float64
	for i := range want {
		top = math.Max(top, norm(want[i]))
	}
	for i, tsr := range net.Tensors() {
		diff := make([]float32, len(got[i]))
		for k := range diff {
			diff[k] = got[i][k] - want[i][k]
		}
		e := norm(diff) / math.Max(norm(want[i]), 1e-4*top)
		worst = math.Max(worst, e)
		if e > 1e-3 {
			t.Errorf("%s: relative error %.3g (gradient norm %.3g, largest %.3g)", tsr.Name, e, norm(want[i]), top)
		}
	}
	return worst
}

// TestCPUFlowLossGradMatchesGoMLX compares the native flow-decoder
// backward with GoMLX's autodiff, at a ramping strength and at 1.
func TestCPUFlowLossGradMatchesGoMLX(t *testing.T) {
	for _, tc := range []struct {
		d        int
		ns       []int
		strength float32
	}{{3, []int{4, 2}, 0.4}, {1, []int{3}, 1}, {5, []int{2}, 1}} {
		t.Run(fmt.Sprintf("small/d=%d,N=%v,s=%g", tc.d, tc.ns, tc.strength), func(t *testing.T) {
			cfg := SmallConfig("flow")
			net := randomNetwork(cfg, 6)
			rng := rand.New(rand.NewPCG(10, 11))
			var tasks []*factor.Task
			var z [][]float64
			for _, n := range tc.ns {
				task, err := factor.Simulate(rng, factor.SimOptions{D: tc.d, N: n})
				if err != nil {
					t.Fatal(err)
				}
				tasks, z = append(tasks, task), append(z, task.TrueZ)
			}
			batch, err := NewBatch(context.Background(), tasks, 0, z)
			if err != nil {
				t.Fatal(err)
			}
			eng, err := gomlx.New(cfg, "")
			if err != nil {
				t.Fatal(err)
			}
			wantLoss, _, want, err := eng.LossGrad(context.Background(), eng.Weights(net.Data()), batch, tc.strength)
			if err != nil {
				t.Fatal(err)
			}
			eachGemmKernel(t, func(t *testing.T) {
				fast, err := cpu.NewNet(net)
				if err != nil {
					t.Fatal(err)
				}
				loss, got, err := fast.FlowLossGrad(context.Background(), batch, tc.strength, 2)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(loss-wantLoss) > 1e-5*math.Max(1, math.Abs(wantLoss)) {
					t.Errorf("loss %g, want %g", loss, wantLoss)
				}
				worst := compareGrads(t, net, got, want)
				t.Logf("loss %.6g (GoMLX %.6g); worst relative gradient error %.3g", loss, wantLoss, worst)
			})
		})
	}
}

// BenchmarkFlowSample times drawing 1,000 samples with their log q from
// the flow decoder for one task at (d, N) = (8, 64), forward pass
// included: native CPU path, and the GoMLX graph for the small config.
func BenchmarkFlowSample(b *testing.B) {
	const S = 1000
	for _, name := range []string{"small", "paper"} {
		cfg, _ := ConfigByName(name, "flow")
		net := randomNetwork(cfg, 1)
		fast, err := cpu.NewNet(net)
		if err != nil {
			b.Fatal(err)
		}
		_, batch := benchBatch(b, 8, 64)
		eps := make([]float32, S*8)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range eps {
			eps[i] = float32(rng.NormFloat64())
		}
		b.Run(fmt.Sprintf("%s/cpu/d=8,N=64,S=%d", name, S), func(b *testing.B) {
			for range b.N {
				if _, _, err := fast.FlowSample(context.Background(), batch, eps, S); err != nil {
					b.Fatal(err)
				}
			}
		})
		if name != "small" {
			continue
		}
		m, err := newModel("", cfg, 0, net.Data(), EngineChoice{})
		if err != nil {
			b.Fatal(err)
		}
		gom := gomlxOf(b, m)
		b.Run(fmt.Sprintf("%s/gomlx/d=8,N=64,S=%d", name, S), func(b *testing.B) {
			if _, _, err := gom.FlowSample(context.Background(), batch, eps, S); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, _, err := gom.FlowSample(context.Background(), batch, eps, S); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCPUForwardMatchesGoMLXShipped repeats the CPU-vs-GoMLX check with
// the shipped (trained) checkpoint's weights on simulated tasks.
func TestCPUForwardMatchesGoMLXShipped(t *testing.T) {
	dir, err := DefaultCheckpointDir("")
	if err != nil {
		t.Fatalf("shipped checkpoint: %v", err)
	}
	m, err := Load(dir, EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := cpu.NewNetFromData(m.Cfg, m.wdata)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(12, 13))
	for _, dn := range [][2]int{{2, 10}, {4, 64}, {8, 30}} {
		tasks, err := factor.SimulateBatch(rng, factor.SimOptions{D: dn[0], N: dn[1]}, 3)
		if err != nil {
			t.Fatal(err)
		}
		batch, err := NewBatch(context.Background(), tasks, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantMu, wantLam, err := gomlxOf(t, m).Gaussian(context.Background(), batch)
		if err != nil {
			t.Fatal(err)
		}
		mu, lam, err := fast.Gaussian(context.Background(), batch)
		if err != nil {
			t.Fatal(err)
		}
		compareRel(t, fmt.Sprintf("d=%d mean", dn[0]), mu, wantMu)
		compareRel(t, fmt.Sprintf("d=%d precision", dn[0]), lam, wantLam)
	}
}

// gomlxOf is the model's GoMLX graph, built on first use.
func gomlxOf(tb testing.TB, m *Model) engine.Bound {
	tb.Helper()
	g, err := m.gomlx()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}
