package gemm

import (
	"fmt"
	"strings"
	"sync/atomic"
)

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

// available lists, fastest first, the implementations this build can run
// on this CPU (archImpls is per architecture).
var available = append(archImpls(), genericImpl)

// active is the implementation in use: the fastest available unless Use
// chose another. It is atomic so Use never races with running products.
var active atomic.Pointer[impl]

func init() { active.Store(available[0]) }

// Kernel names the implementation in use: "avx512", "avx2", "neon" or
// "generic".
func Kernel() string { return active.Load().name }

// CPUFeatures describes the CPU features the kernel was chosen from, e.g.
// "amd64: avx512f avx2 fma".
func CPUFeatures() string { return cpuFeatures() }

// Kernels lists, fastest first, the implementations this CPU can run:
// the names Use accepts.
func Kernels() []string {
	names := make([]string, len(available))
	for i, im := range available {
		names[i] = im.name
	}
	return names
}

// Use forces the named implementation for every later call of the
// package (tests and benchmarks compare kernels with it; cmd/afin sets it
// from AFIN_GEMM). It refuses a kernel this CPU or build cannot run.
func Use(name string) error {
	for _, im := range available {
		if im.name == name {
			active.Store(im)
			return nil
		}
	}
	for _, n := range kernelNames {
		if n == name {
			return fmt.Errorf("gemm: kernel %q is not supported here (%s); available: %s",
				name, cpuFeatures(), strings.Join(Kernels(), ", "))
		}
	}
	return fmt.Errorf("gemm: unknown kernel %q (known: %s)", name, strings.Join(kernelNames, ", "))
}
