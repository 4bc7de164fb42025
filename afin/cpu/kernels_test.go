package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/gemm"
)

// engineOutputs runs every entry point of the engine that goes through
// the matrix kernels (Gaussian forward, flow sampling and density, both
// losses with their gradients) and returns their outputs by name.
func engineOutputs(t *testing.T, gauss, flow *Net, d int) map[string][]float32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(d), 21))
	var tasks []*factor.Task
	var z [][]float64
	for _, n := range []int{9, 4} {
		task, err := factor.Simulate(rng, factor.SimOptions{D: d, N: n, Prior: factor.DiagGaussianFamily,
			Likelihoods: []string{factor.LinGaussianFamily, factor.BernoulliLogitFamily}})
		if err != nil {
			t.Fatal(err)
		}
		tasks, z = append(tasks, task), append(z, task.TrueZ)
	}
	batch, err := arch.NewBatch(context.Background(), tasks, 0, z)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out := map[string][]float32{}
	if out["mean"], out["precision"], err = gauss.Gaussian(ctx, batch); err != nil {
		t.Fatal(err)
	}
	const S = 7
	eps := make([]float32, batch.B*S*d)
	for i := range eps {
		eps[i] = float32(rng.NormFloat64())
	}
	if out["flow z"], out["flow log q"], err = flow.FlowSample(ctx, batch, eps, S); err != nil {
		t.Fatal(err)
	}
	if out["flow density"], err = flow.FlowLogQ(ctx, batch, out["flow z"], S); err != nil {
		t.Fatal(err)
	}
	loss, grads, err := gauss.LossGrad(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	out["loss"] = []float32{float32(loss)}
	for i, g := range grads {
		out[fmt.Sprintf("grad %d", i)] = g
	}
	loss, grads, err = flow.FlowLossGrad(ctx, batch, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	out["flow loss"] = []float32{float32(loss)}
	for i, g := range grads {
		out[fmt.Sprintf("flow grad %d", i)] = g
	}
	return out
}

// TestKernelsAgree runs the engine under every matrix kernel this CPU
// can run (gemm.Use) and checks each against the portable Go kernel:
// forward and flow to 1e-5 of each output's scale (float32 rounding in
// another summation order through ~30 layers), each gradient tensor to
// 1e-4 of its scale (the package doc's tolerances against GoMLX). The GoMLX
// and PyTorch comparisons in package afin check the default kernel's
// values; this carries them to the others.
func TestKernelsAgree(t *testing.T) {
	def := gemm.Kernel()
	defer func() {
		if err := gemm.Use(def); err != nil {
			t.Fatal(err)
		}
	}()
	configs := []string{"small", "paper"}
	if testing.Short() {
		configs = configs[:1] // the paper config takes minutes under qemu-aarch64
	}
	for _, name := range configs {
		gcfg, err := arch.ConfigByName(name, "gaussian")
		if err != nil {
			t.Fatal(err)
		}
		fcfg, err := arch.ConfigByName(name, "flow")
		if err != nil {
			t.Fatal(err)
		}
		gauss, err := NewNet(randomNetwork(t, gcfg, 31))
		if err != nil {
			t.Fatal(err)
		}
		flow, err := NewNet(randomNetwork(t, fcfg, 32))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []int{1, 3} {
			if err := gemm.Use("generic"); err != nil {
				t.Fatal(err)
			}
			want := engineOutputs(t, gauss, flow, d)
			for _, k := range gemm.Kernels() {
				if k == "generic" {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/d=%d", k, name, d), func(t *testing.T) {
					if err := gemm.Use(k); err != nil {
						t.Fatal(err)
					}
					got := engineOutputs(t, gauss, flow, d)
					for what, w := range want {
						tol := 1e-5
						if strings.Contains(what, "grad") {
							tol = 1e-4 // a loss's gradient sums many products of float32 terms
						}
						compareScaled(t, what, got[what], w, tol)
					}
				})
			}
		}
	}
}

// compareScaled fails when got and want differ by more than tol times
// want's largest magnitude.
func compareScaled(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var scale, worst float64
	for i, w := range want {
		scale = math.Max(scale, math.Abs(float64(w)))
		worst = math.Max(worst, math.Abs(float64(got[i])-float64(w)))
	}
	if !(worst <= tol*math.Max(scale, 1e-3)) {
		t.Errorf("%s: max |Δ| = %.3g at scale %.3g", what, worst, scale)
	}
}

// BenchmarkForwardKernels times one Gaussian forward pass of one task
// (random weights, input batch built beforehand) under each matrix kernel
// this CPU can run: every iteration runs the forward once per kernel, in
// turn, and each kernel's fastest iteration gives its <kernel>-GFLOP/s
// (the products executed, FLOPs). Interleaved so that, on a loaded
// machine, every kernel is sampled in the same moments and their ratios
// mean something. Names: BenchmarkForwardKernels/<config>/d=D,N=N.
func BenchmarkForwardKernels(b *testing.B) {
	def := gemm.Kernel()
	defer func() {
		if err := gemm.Use(def); err != nil {
			b.Fatal(err)
		}
	}()
	for _, name := range []string{"paper", "small"} {
		cfg, err := arch.ConfigByName(name, "gaussian")
		if err != nil {
			b.Fatal(err)
		}
		net, err := NewNet(randomNetwork(b, cfg, 1))
		if err != nil {
			b.Fatal(err)
		}
		for _, dn := range [][2]int{{8, 64}, {16, 1}} {
			batch := benchTask(b, dn[0], dn[1], 1)
			flops := float64(FLOPs(cfg, dn[0], dn[1]))
			b.Run(fmt.Sprintf("%s/d=%d,N=%d", name, dn[0], dn[1]), func(b *testing.B) {
				kernels := gemm.Kernels()
				best := make([]time.Duration, len(kernels))
				for i := range best {
					best[i] = math.MaxInt64
				}
				for range b.N {
					for i, k := range kernels {
						if err := gemm.Use(k); err != nil {
							b.Fatal(err)
						}
						t0 := time.Now()
						if _, _, err := net.Gaussian(context.Background(), batch); err != nil {
							b.Fatal(err)
						}
						best[i] = min(best[i], time.Since(t0))
					}
				}
				for i, k := range kernels {
					b.ReportMetric(flops/best[i].Seconds()/1e9, k+"-GFLOP/s")
				}
			})
		}
	}
}

// BenchmarkTrainStepKernels times one training step's loss and gradient
// (LossGrad, Gaussian decoder, 8 tasks at (d, N) = (8, 64)) under each
// matrix kernel, interleaved within each iteration like
// BenchmarkForwardKernels; <kernel>-GFLOP/s counts 3× the forward's
// products, as afin's BenchmarkTrainStepCPU. Names:
// BenchmarkTrainStepKernels/<config>.
func BenchmarkTrainStepKernels(b *testing.B) {
	def := gemm.Kernel()
	defer func() {
		if err := gemm.Use(def); err != nil {
			b.Fatal(err)
		}
	}()
	const tasks, d, n = 8, 8, 64
	for _, name := range []string{"small", "paper"} {
		cfg, err := arch.ConfigByName(name, "gaussian")
		if err != nil {
			b.Fatal(err)
		}
		net, err := NewNet(randomNetwork(b, cfg, 1))
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(2, 2))
		ts, err := factor.SimulateBatch(rng, factor.SimOptions{D: d, N: n, Prior: factor.DiagGaussianFamily,
			Likelihoods: []string{factor.LinGaussianFamily}}, tasks)
		if err != nil {
			b.Fatal(err)
		}
		z := make([][]float64, len(ts))
		for i, t := range ts {
			z[i] = t.TrueZ
		}
		batch, err := arch.NewBatch(context.Background(), ts, n, z)
		if err != nil {
			b.Fatal(err)
		}
		flops := 3 * tasks * float64(FLOPs(cfg, d, n))
		b.Run(name, func(b *testing.B) {
			kernels := gemm.Kernels()
			best := make([]time.Duration, len(kernels))
			for i := range best {
				best[i] = math.MaxInt64
			}
			for range b.N {
				for i, k := range kernels {
					if err := gemm.Use(k); err != nil {
						b.Fatal(err)
					}
					t0 := time.Now()
					if _, _, err := net.LossGrad(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
					best[i] = min(best[i], time.Since(t0))
				}
			}
			for i, k := range kernels {
				b.ReportMetric(flops/best[i].Seconds()/1e9, k+"-GFLOP/s")
			}
		})
	}
}
