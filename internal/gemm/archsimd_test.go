//go:build goexperiment.simd && amd64

package gemm

// This file is the measurement behind the choice of assembly over
// simd/archsimd (see the package doc): the same 6×4-panel register
// blocking written with archsimd, benchmarked beside the assembly kernel
// when the tests are built with GOEXPERIMENT=simd:
//
//	GOEXPERIMENT=simd go test -run '^$' -bench 'Sgemm/paper-hidden' -cpu 1 ./internal/gemm

import "simd/archsimd"

func init() {
	extraImpls = append(extraImpls, implBench{"archsimd-6x4", archsimdMul})
}

// archsimdMul computes C = A·W for a Packed W whose groups all have four
// panels and m a multiple of 6 (the benchmark shapes it is used on).
func archsimdMul(p *Packed, c []float32, ldc int, a []float32, lda, m int) {
	for i := 0; i+6 <= m; i += 6 {
		for _, g := range p.groups {
			if g.np != 4 {
				continue
			}
			kernel6x4(a[i*lda:], lda, p.data[g.off:], p.K, c[i*ldc+g.col:], ldc)
		}
	}
}

// kernel6x4 computes C[6×64] += A[6×k]·B[k×64] with B packed (k×64),
// the same register blocking as the assembly k6x4.
func kernel6x4(a []float32, lda int, b []float32, k int, c []float32, ldc int) {
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23 archsimd.Float32x16
	var c30, c31, c32, c33, c40, c41, c42, c43, c50, c51, c52, c53 archsimd.Float32x16
	for kk := 0; kk < k; kk++ {
		bp := b[kk*64 : kk*64+64]
		b0 := archsimd.LoadFloat32x16((*[16]float32)(bp[0:16]))
		b1 := archsimd.LoadFloat32x16((*[16]float32)(bp[16:32]))
		b2 := archsimd.LoadFloat32x16((*[16]float32)(bp[32:48]))
		b3 := archsimd.LoadFloat32x16((*[16]float32)(bp[48:64]))
		a0 := archsimd.BroadcastFloat32x16(a[kk])
		c00, c01, c02, c03 = b0.MulAdd(a0, c00), b1.MulAdd(a0, c01), b2.MulAdd(a0, c02), b3.MulAdd(a0, c03)
		a1 := archsimd.BroadcastFloat32x16(a[lda+kk])
		c10, c11, c12, c13 = b0.MulAdd(a1, c10), b1.MulAdd(a1, c11), b2.MulAdd(a1, c12), b3.MulAdd(a1, c13)
		a2 := archsimd.BroadcastFloat32x16(a[2*lda+kk])
		c20, c21, c22, c23 = b0.MulAdd(a2, c20), b1.MulAdd(a2, c21), b2.MulAdd(a2, c22), b3.MulAdd(a2, c23)
		a3 := archsimd.BroadcastFloat32x16(a[3*lda+kk])
		c30, c31, c32, c33 = b0.MulAdd(a3, c30), b1.MulAdd(a3, c31), b2.MulAdd(a3, c32), b3.MulAdd(a3, c33)
		a4 := archsimd.BroadcastFloat32x16(a[4*lda+kk])
		c40, c41, c42, c43 = b0.MulAdd(a4, c40), b1.MulAdd(a4, c41), b2.MulAdd(a4, c42), b3.MulAdd(a4, c43)
		a5 := archsimd.BroadcastFloat32x16(a[5*lda+kk])
		c50, c51, c52, c53 = b0.MulAdd(a5, c50), b1.MulAdd(a5, c51), b2.MulAdd(a5, c52), b3.MulAdd(a5, c53)
	}
	st := func(r int, x0, x1, x2, x3 archsimd.Float32x16) {
		row := c[r*ldc:]
		x0.Store((*[16]float32)(row[0:16]))
		x1.Store((*[16]float32)(row[16:32]))
		x2.Store((*[16]float32)(row[32:48]))
		x3.Store((*[16]float32)(row[48:64]))
	}
	st(0, c00, c01, c02, c03)
	st(1, c10, c11, c12, c13)
	st(2, c20, c21, c22, c23)
	st(3, c30, c31, c32, c33)
	st(4, c40, c41, c42, c43)
	st(5, c50, c51, c52, c53)
}
