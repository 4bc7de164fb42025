package train

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/cputime"
	"github.com/afin-bench/afin/internal/gemm"
)

// gemmKernel forces the matrix kernel of BenchmarkTrainStepFull, e.g.
// go test -bench TrainStepFull ./afin/train -args -gemm=avx2; empty: the
// fastest this CPU runs.
var gemmKernel = flag.String("gemm", "", "matrix kernel for the benchmarks: avx512, avx2, neon or generic (gemm.Use)")

// forceKernel applies -gemm for a benchmark and returns the restore.
func forceKernel(b *testing.B) func() {
	if *gemmKernel == "" {
		return func() {}
	}
	def := gemm.Kernel()
	if err := gemm.Use(*gemmKernel); err != nil {
		b.Fatal(err)
	}
	return func() {
		if err := gemm.Use(def); err != nil {
			b.Fatal(err)
		}
	}
}

// trainStepShapes are the full-step benchmark's settings, the ones
// tools/torchpeer runs on the authors' trainer: the paper config with 8
// tasks at (8, 64) and the small config with 32 tasks at (8, 64); the
// paper config with 1 task is for the portable kernel, for which 8 take
// minutes a step.
var trainStepShapes = []struct {
	config string
	tasks  int
}{{"paper", 8}, {"small", 32}, {"paper", 1}}

// BenchmarkTrainStepFull times whole optimiser steps of the trainer
// (runner.step: simulating the tasks, building the batch, packing the
// weights, forward and backward, clipping, AdamW, EMA), Gaussian decoder,
// one micro-batch of B tasks at (d, N) = (8, 64), under the kernel of
// -gemm; tasks/s is what tools/torchpeer reports for the authors'
// PyTorch trainer on the same shapes. One untimed step first (workspace
// allocation). tasks/cpu-s divides by the process's CPU time instead of
// wall time (GC included), the steadier figure on a loaded machine.
// Names: BenchmarkTrainStepFull/<config>/tasks=B,d=8,N=64.
func BenchmarkTrainStepFull(b *testing.B) {
	defer forceKernel(b)()
	b.Logf("matrix kernel %s (%s)", gemm.Kernel(), gemm.CPUFeatures())
	for _, sh := range trainStepShapes {
		b.Run(fmt.Sprintf("%s/tasks=%d,d=8,N=64", sh.config, sh.tasks), func(b *testing.B) {
			cfg, err := arch.ConfigByName(sh.config, "gaussian")
			if err != nil {
				b.Fatal(err)
			}
			o := DefaultTrainOptions()
			o.BatchTasks, o.MicroBatch, o.Workers = sh.tasks, 1, 1
			o.DMin, o.DMax, o.NMin, o.NMax = 8, 8, 64, 64
			o.EvalEvery = 0
			s, err := newState(cfg, o)
			if err != nil {
				b.Fatal(err)
			}
			r, err := (&Trainer{Dir: b.TempDir()}).newRunner(s)
			if err != nil {
				b.Fatal(err)
			}
			defer r.logf.Close()
			if _, err := r.step(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0, cpuErr := cputime.Process()
			tasks := 0
			for range b.N {
				res, err := r.step(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				tasks += res.tasks
			}
			b.ReportMetric(float64(tasks)/b.Elapsed().Seconds(), "tasks/s")
			if cpu1, err := cputime.Process(); err == nil && cpuErr == nil {
				b.ReportMetric(float64(tasks)/(cpu1-cpu0), "tasks/cpu-s")
			}
		})
	}
}

// BenchmarkHostUpdate times what a step does on the host after its
// passes, on the paper network: the global norm, AdamW and the EMA (the
// gradient sums arrive from the engine, on the GoMLX engine from the
// device). A GPU step of 32 × 4 paper tasks takes about a second (the
// authors' trainer runs 117 tasks/s on an H100), so this is the figure
// that says whether the optimiser has to move to the device.
func BenchmarkHostUpdate(b *testing.B) {
	cfg := arch.PaperConfig("gaussian")
	o := DefaultTrainOptions()
	s, err := newState(cfg, o)
	if err != nil {
		b.Fatal(err)
	}
	grads := make([][]float32, len(s.Params))
	for i, p := range s.Params {
		grads[i] = make([]float32, len(p))
		for j := range grads[i] {
			grads[i][j] = float32((i+j)%7) * 1e-3
		}
	}
	b.ResetTimer()
	for range b.N {
		norm := globalNorm(grads)
		adamW(s, grads, 1/(1+norm), 1e-4, o.WeightDecay, s.Step+1)
		s.Step++
		updateEMA(s, o)
	}
}
