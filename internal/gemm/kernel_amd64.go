//go:build amd64 && !purego

package gemm

import (
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

// useAsm is true where the CPU and OS support AVX-512F; tests flip it to
// exercise the portable path on the same machine.
var useAsm = cpu.X86.HasAVX512F

func maxMR(np int) int { return [...]int{0, 16, 12, 8, 6}[np] }

// rowBlock rows of C are finished (product, bias, activation) before the
// next rows start, so the activation pass finds them in L1. It is a
// multiple of every maxMR so only the last block has a row tail.
const rowBlock = 48

func (p *Packed) mulAsm(c []float32, ldc int, a []float32, lda, m int, op Op) {
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
				kernels[g.np][mr](&a[row*lda], lda, &p.data[g.off], p.K, &c[row*ldc+g.col], ldc, bias, acc, g.mask)
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
