package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/afin-bench/afin/internal/gemm/openblas"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchShapes are the products of AFIN at (d, N) = (8, 64): M = 65
// tokens × 64 pairs rows through the BoxMLP branches of the paper (C=40,
// H=192) and small (C=16, H=32) configs, and the backward's weight
// gradients (inputᵀ·dZ over a chunk of 384 rows).
var benchShapes = []struct {
	name    string
	m, k, n int
}{
	{"paper-in", 4160, 40, 192},
	{"paper-hidden", 4160, 192, 192},
	{"paper-out", 4160, 192, 40},
	{"paper-dW", 192, 384, 192},
	{"paper-dW-in", 40, 384, 192},
	{"small-in", 4160, 16, 32},
	{"small-hidden", 4160, 32, 32},
	{"small-out", 4160, 32, 16},
}

// implBench is an extra implementation benchmarked beside the kernels.
type implBench struct {
	name string
	mul  func(p *Packed, c []float32, ldc int, a []float32, lda, m int)
}

// extraImpls are registered by build-tagged experiment files.
var extraImpls []implBench

// BenchmarkSgemm runs every kernel this CPU can run (afin-<kernel>), and
// the peers, on the same shapes in one run, so their GFLOP/s ratios are
// read side by side: gonum's Sgemm (blas/gonum, the pure-Go library a Go
// program would otherwise use) always, OpenBLAS sgemm with -tags
// openblas. Plain products (no bias or activation) so every
// implementation does the same work. Run it on one core (-cpu 1;
// OPENBLAS_NUM_THREADS=1): gonum's Sgemm is parallel otherwise.
func BenchmarkSgemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	def := Kernel()
	defer func() {
		if err := Use(def); err != nil {
			b.Fatal(err)
		}
	}()
	for _, s := range benchShapes {
		a := randSlice(rng, s.m*s.k)
		w := randSlice(rng, s.k*s.n)
		c := make([]float32, s.m*s.n)
		p, err := Pack(w, s.k, s.n, nil)
		if err != nil {
			b.Fatal(err)
		}
		flops := float64(p.FLOPs(s.m))
		type run struct {
			name, kernel string
			f            func()
		}
		var impls []run
		for _, k := range Kernels() {
			impls = append(impls, run{"afin-" + k, k, func() { p.Mul(c, s.n, a, s.k, s.m, 0) }})
		}
		for _, e := range extraImpls {
			impls = append(impls, run{e.name, def, func() { e.mul(p, c, s.n, a, s.k, s.m) }})
		}
		impls = append(impls, run{"gonum", def, func() {
			gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, s.m, s.n, s.k, 1, a, s.k, w, s.n, 0, c, s.n)
		}})
		if openblas.Available {
			impls = append(impls, run{"openblas-" + openblas.CoreName(), def, func() { openblas.Sgemm(s.m, s.n, s.k, a, s.k, w, s.n, c, s.n, false) }})
		}
		for _, im := range impls {
			b.Run(fmt.Sprintf("%s/%s/M=%d,K=%d,N=%d", s.name, im.name, s.m, s.k, s.n), func(b *testing.B) {
				if err := Use(im.kernel); err != nil {
					b.Fatal(err)
				}
				for range b.N {
					im.f()
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkSgemmRatio puts each kernel beside a peer on every shape:
// one iteration runs the kernel's product and then the peer's, each timed
// on its own, and the fastest time of each over all iterations is
// reported (GFLOP/s) with their ratio. On a loaded machine the two are
// sampled in the same moments, so the best-of ratio is what the kernels
// would give on an idle core, not whichever ran while the load was low.
// Names: BenchmarkSgemmRatio/<shape>/<kernel>-vs-<peer>, peer gonum
// (blas/gonum Sgemm; gonum-noasm with -tags noasm: pure Go, as on every
// architecture but amd64) or openblas-<core> (-tags openblas; the kernel
// set OpenBLAS chose from the CPU or OPENBLAS_CORETYPE). Run it on one core: -cpu 1,
// OPENBLAS_NUM_THREADS=1.
func BenchmarkSgemmRatio(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	def := Kernel()
	defer func() {
		if err := Use(def); err != nil {
			b.Fatal(err)
		}
	}()
	for _, s := range benchShapes {
		a := randSlice(rng, s.m*s.k)
		w := randSlice(rng, s.k*s.n)
		c := make([]float32, s.m*s.n)
		p, err := Pack(w, s.k, s.n, nil)
		if err != nil {
			b.Fatal(err)
		}
		flops := float64(p.FLOPs(s.m))
		peers := []struct {
			name string
			f    func()
		}{{gonumPeer, func() {
			gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, s.m, s.n, s.k, 1, a, s.k, w, s.n, 0, c, s.n)
		}}}
		if openblas.Available {
			peers = append(peers, struct {
				name string
				f    func()
			}{"openblas-" + openblas.CoreName(), func() { openblas.Sgemm(s.m, s.n, s.k, a, s.k, w, s.n, c, s.n, false) }})
		}
		for _, k := range Kernels() {
			for _, peer := range peers {
				b.Run(fmt.Sprintf("%s/%s-vs-%s", s.name, k, peer.name), func(b *testing.B) {
					if err := Use(k); err != nil {
						b.Fatal(err)
					}
					own, other := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
					for range b.N {
						t0 := time.Now()
						p.Mul(c, s.n, a, s.k, s.m, 0)
						t1 := time.Now()
						peer.f()
						own, other = min(own, t1.Sub(t0)), min(other, time.Since(t1))
					}
					b.ReportMetric(flops/own.Seconds()/1e9, "GFLOP/s")
					b.ReportMetric(flops/other.Seconds()/1e9, "peer-GFLOP/s")
					b.ReportMetric(other.Seconds()/own.Seconds(), "ratio")
				})
			}
		}
	}
}

// BenchmarkElementwise times the element-wise kernels under every kernel
// this CPU can run, on one paper-config hidden activation at (8, 64)
// (4160×192 values; ExpSum on 1024-value rows, a softmax's key block),
// in Gvalues/s, beside the product that produces the activation
// (paper-hidden in BenchmarkSgemm: 384 FLOP per value).
func BenchmarkElementwise(b *testing.B) {
	const n = 4160 * 192
	rng := rand.New(rand.NewPCG(5, 6))
	x := randSlice(rng, n)
	y := randSlice(rng, n)
	z := randSlice(rng, n)
	work := make([]float32, n)
	def := Kernel()
	defer func() {
		if err := Use(def); err != nil {
			b.Fatal(err)
		}
	}()
	ops := []struct {
		name string
		f    func()
	}{
		{"SiLU", func() { copy(work, x); SiLU(work) }},
		{"AddSiLU", func() { copy(work, x); AddSiLU(work, y, z) }},
		{"SiLUGrad", func() { SiLUGrad(work, y, x) }},
		{"ExpSum", func() {
			copy(work, x)
			for r := 0; r < n; r += 1024 {
				ExpSum(work[r:r+1024], 4)
			}
		}},
	}
	for _, op := range ops {
		for _, k := range Kernels() {
			b.Run(op.name+"/"+k, func(b *testing.B) {
				if err := Use(k); err != nil {
					b.Fatal(err)
				}
				best := time.Duration(math.MaxInt64)
				for range b.N {
					t0 := time.Now()
					op.f()
					best = min(best, time.Since(t0))
				}
				b.ReportMetric(n/best.Seconds()/1e9, "Gvalues/s")
			})
		}
	}
}
