package gemm

import "github.com/afin-bench/afin/internal/kernelset"

// impl is one implementation of the package's kernels. Every entry point
// (Mul, SiLU, AddSiLU, ExpSum, SiLUGrad) goes through the active one, so
// forcing a kernel with Use forces it everywhere.
type impl struct {
	name     string
	mul      func(p *Packed, c []float32, ldc int, a []float32, lda, m int, op Op)
	silu     func(x []float32)
	addSiLU  func(dst, a, b []float32)
	expSum   func(x []float32, m float32) float32
	siluGrad func(dz, da, z []float32)
}

// kernelNames are every implementation's name, on any machine, for the
// error that refuses one this CPU cannot run.
var kernelNames = []string{"avx512", "avx2", "neon", "generic"}

// genericImpl is the portable Go implementation, available everywhere.
var genericImpl = &impl{
	name: "generic",
	mul: func(p *Packed, c []float32, ldc int, a []float32, lda, m int, op Op) {
		p.mulPanels(goPanel, siluGeneric, c, ldc, a, lda, m, op)
	},
	silu:     siluGeneric,
	addSiLU:  addSiLUGeneric,
	expSum:   expSumGeneric,
	siluGrad: siluGradGeneric,
}

// kernels are the implementations this build can run on this CPU,
// fastest first (archImpls is per architecture), and the one in use: the
// fastest unless Use chose another.
var kernels = kernelset.New("gemm", kernelNames, append(archImpls(), genericImpl), func(im *impl) string { return im.name })

// Kernel names the implementation in use: "avx512", "avx2", "neon" or
// "generic".
func Kernel() string { return kernels.Name() }

// CPUFeatures describes the CPU features the kernel was chosen from, e.g.
// "amd64: avx512f avx2 fma".
func CPUFeatures() string { return cpuFeatures() }

// Kernels lists, fastest first, the implementations this CPU can run:
// the names Use accepts.
func Kernels() []string { return kernels.Names() }

// Use forces the named implementation for every later call of the
// package (tests and benchmarks compare kernels with it; cmd/afin sets it
// from AFIN_GEMM). It refuses a kernel this CPU or build cannot run.
func Use(name string) error { return kernels.Use(name, cpuFeatures()) }
