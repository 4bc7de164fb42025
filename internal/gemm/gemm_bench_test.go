package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/internal/gemm/openblas"
)

// benchShapes are the products of one AFIN forward at (d, N) = (8, 64):
// M = 65 tokens × 64 pairs rows through the BoxMLP branches of the paper
// (C=40, H=192) and small (C=16, H=32) configs.
var benchShapes = []struct {
	name    string
	m, k, n int
}{
	{"paper-in", 4160, 40, 192},
	{"paper-hidden", 4160, 192, 192},
	{"paper-out", 4160, 192, 40},
	{"small-in", 4160, 16, 32},
	{"small-hidden", 4160, 32, 32},
	{"small-out", 4160, 32, 16},
}

// implBench is an extra implementation benchmarked beside the kernel.
type implBench struct {
	name string
	mul  func(p *Packed, c []float32, ldc int, a []float32, lda, m int)
}

// extraImpls are registered by build-tagged experiment files.
var extraImpls []implBench

// BenchmarkSgemm runs afin's kernel (and the portable path, and
// OpenBLAS sgemm with -tags openblas) on the same shapes in one run, so
// their GFLOP/s ratios are read side by side. Plain products (no bias or
// activation) so every implementation does the same work.
func BenchmarkSgemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range benchShapes {
		a := randSlice(rng, s.m*s.k)
		w := randSlice(rng, s.k*s.n)
		c := make([]float32, s.m*s.n)
		p, err := Pack(w, s.k, s.n, nil)
		if err != nil {
			b.Fatal(err)
		}
		flops := float64(p.FLOPs(s.m))
		impls := []struct {
			name string
			run  func()
		}{
			{"afin-" + Kernel(), func() { p.Mul(c, s.n, a, s.k, s.m, 0) }},
			{"afin-generic", func() { p.mulGeneric(c, s.n, a, s.k, s.m, 0) }},
		}
		for _, e := range extraImpls {
			impls = append(impls, struct {
				name string
				run  func()
			}{e.name, func() { e.mul(p, c, s.n, a, s.k, s.m) }})
		}
		if openblas.Available {
			impls = append(impls, struct {
				name string
				run  func()
			}{"openblas", func() { openblas.Sgemm(s.m, s.n, s.k, a, s.k, w, s.n, c, s.n, false) }})
		}
		for _, im := range impls {
			b.Run(fmt.Sprintf("%s/%s/M=%d,K=%d,N=%d", s.name, im.name, s.m, s.k, s.n), func(b *testing.B) {
				for range b.N {
					im.run()
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
