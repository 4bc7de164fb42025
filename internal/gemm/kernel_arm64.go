//go:build arm64 && !purego

package gemm

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// rowBlock rows of C are finished (product, bias, activation) before the
// next rows start, so the activation pass finds them in L1; a multiple of
// panelMR.
const rowBlock = 48

//go:noescape
func siluNEON(x *float32, n int)

//go:noescape
func addSiLUNEON(dst, a, b *float32, n int)

//go:noescape
func siluGradNEON(dz, da, z *float32, n int)

//go:noescape
func expSumNEON(x *float32, n int, m float32) float32

var neonImpl = &impl{
	name: "neon",
	mul: func(p *Packed, c []float32, ldc int, a []float32, lda, m int, op Op) {
		p.mulPanels(neonPanel, siluNEONVec, c, ldc, a, lda, m, op)
	},
	silu:     siluNEONVec,
	addSiLU:  addSiLUNEONVec,
	expSum:   expSumNEONVec,
	siluGrad: siluGradNEONVec,
}

// The NEON element-wise kernels (silu_arm64.s) do whole groups of four;
// the Go versions finish the rest.

func siluNEONVec(x []float32) {
	v := len(x) &^ 3
	if v > 0 {
		siluNEON(unsafe.SliceData(x), v)
	}
	siluGeneric(x[v:])
}

func addSiLUNEONVec(dst, a, b []float32) {
	v := len(dst) &^ 3
	if v > 0 {
		addSiLUNEON(unsafe.SliceData(dst), unsafe.SliceData(a), unsafe.SliceData(b), v)
	}
	addSiLUGeneric(dst[v:], a[v:], b[v:])
}

func expSumNEONVec(x []float32, m float32) float32 {
	v := len(x) &^ 3
	var s float32
	if v > 0 {
		s = expSumNEON(unsafe.SliceData(x), v, m)
	}
	return s + expSumGeneric(x[v:], m)
}

func siluGradNEONVec(dz, da, z []float32) {
	v := len(dz) &^ 3
	if v > 0 {
		siluGradNEON(unsafe.SliceData(dz), unsafe.SliceData(da), unsafe.SliceData(z), v)
	}
	siluGradGeneric(dz[v:], da[v:], z[v:])
}

var neonPanel = asmPanel(&neonKernels)

// archImpls: Advanced SIMD (NEON) is part of every arm64 CPU Go supports.
func archImpls() []*impl { return []*impl{neonImpl} }

func cpuFeatures() string {
	f := []string{"arm64: asimd"}
	if cpu.ARM64.HasFPHP {
		f = append(f, "fphp")
	}
	if cpu.ARM64.HasSVE {
		f = append(f, "sve")
	}
	return strings.Join(f, " ")
}
