//go:build amd64 && !purego

package gemm

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// kernelFunc is an AVX-512 micro-kernel: it writes mr rows of one column
// group. Strides are in elements; mask selects the valid columns of the
// group's last panel; acc ≠ 0 adds the result to C.
type kernelFunc func(a *float32, lda int, b *float32, k int, c *float32, ldc int, bias *float32, acc int, mask int)

//go:noescape
func siluAVX512(x *float32, n int)

//go:noescape
func addSiLUAVX512(dst, a, b *float32, n int)

//go:noescape
func siluGradAVX512(dz, da, z *float32, n int)

//go:noescape
func expSumAVX512(x *float32, n int, m float32) float32

var avx512Impl = &impl{
	name:     "avx512",
	mul:      (*Packed).mulAVX512,
	silu:     siluVec,
	addSiLU:  addSiLUVec,
	expSum:   expSumVec,
	siluGrad: siluGradVec,
}

//go:noescape
func siluAVX2(x *float32, n int)

//go:noescape
func addSiLUAVX2(dst, a, b *float32, n int)

//go:noescape
func siluGradAVX2(dz, da, z *float32, n int)

//go:noescape
func expSumAVX2(x *float32, n int, m float32) float32

var avx2Impl = &impl{
	name: "avx2",
	mul: func(p *Packed, c []float32, ldc int, a []float32, lda, m int, op Op) {
		p.mulPanels(avx2Panel, siluAVX2Vec, c, ldc, a, lda, m, op)
	},
	silu:     siluAVX2Vec,
	addSiLU:  addSiLUAVX2Vec,
	expSum:   expSumAVX2Vec,
	siluGrad: siluGradAVX2Vec,
}

// The AVX2 element-wise kernels do whole groups of eight; the Go
// versions finish the rest.

func siluAVX2Vec(x []float32) {
	v := len(x) &^ 7
	if v > 0 {
		siluAVX2(unsafe.SliceData(x), v)
	}
	siluGeneric(x[v:])
}

func addSiLUAVX2Vec(dst, a, b []float32) {
	v := len(dst) &^ 7
	if v > 0 {
		addSiLUAVX2(unsafe.SliceData(dst), unsafe.SliceData(a), unsafe.SliceData(b), v)
	}
	addSiLUGeneric(dst[v:], a[v:], b[v:])
}

func expSumAVX2Vec(x []float32, m float32) float32 {
	v := len(x) &^ 7
	var s float32
	if v > 0 {
		s = expSumAVX2(unsafe.SliceData(x), v, m)
	}
	return s + expSumGeneric(x[v:], m)
}

func siluGradAVX2Vec(dz, da, z []float32) {
	v := len(dz) &^ 7
	if v > 0 {
		siluGradAVX2(unsafe.SliceData(dz), unsafe.SliceData(da), unsafe.SliceData(z), v)
	}
	siluGradGeneric(dz[v:], da[v:], z[v:])
}

var avx2Panel = asmPanel(&avx2Kernels)

// archImpls: AVX-512F for the 16-wide kernels (the OS must save zmm
// state, which x/sys/cpu checks), AVX2 with FMA (x86-64-v3) for the
// 8-wide ones.
func archImpls() []*impl {
	var l []*impl
	if cpu.X86.HasAVX512F {
		l = append(l, avx512Impl)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		l = append(l, avx2Impl)
	}
	return l
}

func cpuFeatures() string {
	f := []string{"amd64:"}
	for _, x := range []struct {
		name string
		has  bool
	}{{"avx512f", cpu.X86.HasAVX512F}, {"avx2", cpu.X86.HasAVX2}, {"fma", cpu.X86.HasFMA}} {
		if x.has {
			f = append(f, x.name)
		}
	}
	if len(f) == 1 {
		f = append(f, "no avx2/fma/avx512f")
	}
	return strings.Join(f, " ")
}

func maxMR(np int) int { return [...]int{0, 16, 12, 8, 6}[np] }

// rowBlock rows of C are finished (product, bias, activation) before the
// next rows start, so the activation pass finds them in L1. It is a
// multiple of every maxMR and of panelMR so only the last block has a
// row tail.
const rowBlock = 48

func (p *Packed) mulAVX512(c []float32, ldc int, a []float32, lda, m int, op Op) {
	acc := 0
	if op&Accumulate != 0 {
		acc = 1
	}
	for i0 := 0; i0 < m; i0 += rowBlock {
		rb := min(rowBlock, m-i0)
		for gi := range p.groups {
			g := &p.groups[gi]
			var bias *float32
			if op&WithBias != 0 && p.pbias != nil {
				bias = &p.pbias[g.col]
			}
			mrMax := maxMR(g.np)
			for r := 0; r < rb; r += mrMax {
				mr := min(mrMax, rb-r)
				row := i0 + r
				avx512Kernels[g.np][mr](&a[row*lda], lda, &p.data[g.off], p.K, &c[row*ldc+g.col], ldc, bias, acc, g.mask)
			}
		}
		if op&ApplySiLU != 0 {
			siluRows(c[i0*ldc:], ldc, p.N, rb)
		}
	}
}

func siluRows(c []float32, ldc, n, rows int) {
	if ldc == n {
		siluAVX512(unsafe.SliceData(c), rows*n)
		return
	}
	for r := 0; r < rows; r++ {
		siluAVX512(&c[r*ldc], n)
	}
}

func siluVec(x []float32) {
	if len(x) > 0 {
		siluAVX512(unsafe.SliceData(x), len(x))
	}
}

func addSiLUVec(dst, a, b []float32) {
	if len(dst) > 0 {
		addSiLUAVX512(unsafe.SliceData(dst), unsafe.SliceData(a), unsafe.SliceData(b), len(dst))
	}
}

func expSumVec(x []float32, m float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return expSumAVX512(unsafe.SliceData(x), len(x), m)
}

func siluGradVec(dz, da, z []float32) {
	if len(dz) > 0 {
		siluGradAVX512(unsafe.SliceData(dz), unsafe.SliceData(da), unsafe.SliceData(z), len(dz))
	}
}
