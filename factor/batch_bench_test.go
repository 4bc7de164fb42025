package factor

import (
	"fmt"
	"testing"

	"github.com/afin-bench/afin/internal/f64vec"
)

// BenchmarkLogDensities compares, on the paper's SNIS shapes, log p̃ by
// Packed.LogDensity row by row with Packed.LogDensities on every f64vec
// kernel, over blocks of 1024 proposals; it reports ns per site (per
// likelihood factor) and per row. Run with -cpu 1.
func BenchmarkLogDensities(b *testing.B) {
	shapes := paperShapes(true)
	const rows = 1024
	def := f64vec.Kernel()
	defer func() {
		if err := f64vec.Use(def); err != nil {
			b.Fatal(err)
		}
	}()
	for _, sh := range shapes {
		task, err := Simulate(newRNG(9), SimOptions{D: sh.d, N: sh.n, Prior: sh.prior, Likelihoods: []string{sh.lik}})
		if err != nil {
			b.Fatal(err)
		}
		p := task.Packed()
		rng := newRNG(10)
		zs := make([]float64, 0, rows*sh.d)
		for range rows {
			zs = append(zs, randVec(rng, sh.d, 1)...)
		}
		out := make([]float64, rows)
		report := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows*sh.n), "ns/site")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		}
		name := fmt.Sprintf("d%d_n%d_%s_%s", sh.d, sh.n, sh.prior, sh.lik)
		b.Run(name+"/rowwise", func(b *testing.B) {
			for b.Loop() {
				for s := range rows {
					out[s] = p.LogDensity(zs[s*sh.d : (s+1)*sh.d])
				}
			}
			report(b)
		})
		for _, k := range f64vec.Kernels() {
			b.Run(name+"/batched-"+k, func(b *testing.B) {
				if err := f64vec.Use(k); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if err := p.LogDensities(zs, out); err != nil {
						b.Fatal(err)
					}
				}
				report(b)
			})
		}
	}
}

// BenchmarkPackedGrad times Packed.LogDensityGrad, one point per call as
// NUTS and VI call it, on the paper's shapes: d = 4, N = 256 per family
// and d = 16, N = 1 per prior. It reports ns per site (per likelihood
// factor) and cpu-ns per call. Run with -cpu 1.
func BenchmarkPackedGrad(b *testing.B) {
	shapes := paperShapes(false)
	const points = 64
	for _, sh := range shapes {
		task, err := Simulate(newRNG(9), SimOptions{D: sh.d, N: sh.n, Prior: sh.prior, Likelihoods: []string{sh.lik}})
		if err != nil {
			b.Fatal(err)
		}
		p := task.Packed()
		rng := newRNG(10)
		zs := make([][]float64, points)
		for k := range zs {
			zs[k] = randVec(rng, sh.d, 1)
		}
		g := make([]float64, sh.d)
		b.Run(fmt.Sprintf("d%d_n%d_%s_%s", sh.d, sh.n, sh.prior, sh.lik), func(b *testing.B) {
			b.ReportAllocs()
			c0 := processCPUNanos()
			k := 0
			for b.Loop() {
				p.LogDensityGrad(zs[k], g)
				k = (k + 1) % points
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sh.n), "ns/site")
			b.ReportMetric(float64(processCPUNanos()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// benchShape is one task shape of the benchmarks.
type benchShape struct {
	d, n  int
	prior string
	lik   string
}

// paperShapes are the paper's easy shape (d = 4, N = 256) for each
// likelihood family and its hard one (d = 16, N = 1) for each prior, with
// the medium one (d = 8, N = 64) for each prior when medium is set.
func paperShapes(medium bool) []benchShape {
	var shapes []benchShape
	for _, lik := range []string{BernoulliLogitFamily, BinomialLogitFamily, LinStudentTFamily, LinGaussianFamily} {
		shapes = append(shapes, benchShape{4, 256, DiagGaussianFamily, lik})
	}
	for _, prior := range []string{DiagGaussianFamily, FullRankGaussianFamily, DiagLaplaceFamily, DiagStudentTFamily} {
		if medium {
			shapes = append(shapes, benchShape{8, 64, prior, BernoulliLogitFamily})
		}
		shapes = append(shapes, benchShape{16, 1, prior, BernoulliLogitFamily})
	}
	return shapes
}
