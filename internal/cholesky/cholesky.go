// Package cholesky factors large symmetric positive definite matrices
// and inverts their triangular factors in blocks, looking at a context
// between blocks. At d = 4096 one factorisation is ~23 GFlop, seconds to
// a minute on a loaded machine; gonum's mat.Cholesky cannot be stopped,
// so a cancelled Laplace start used to run on for that long. Here a
// cancel stops the work within one block product (≤ 2·512·128² flops).
//
// The arithmetic is gonum's (lapack64.Potrf on the diagonal blocks,
// blas64.Trsm and Gemm for the rest), in a right-looking blocked order.
package cholesky

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// block is the width of the column blocks; rowChunk the rows (or terms)
// of one block product: the unit of work between two looks at the
// context, ≤ 2·512·128² ≈ 1.7·10⁷ flops.
const (
	block    = 128
	rowChunk = 512
)

// Factor overwrites the row-major d×d symmetric matrix a (only its lower
// triangle is read) with its lower Cholesky factor L, a = LLᵀ, upper
// triangle zeroed. It returns false when a is not numerically positive
// definite (a NaN or ±Inf entry included), a then being garbage, and
// ctx.Err() when ctx ends first.
func Factor(ctx context.Context, a []float64, d int) (bool, error) {
	if len(a) != d*d {
		return false, fmt.Errorf("cholesky: %d entries for a %d×%d matrix", len(a), d, d)
	}
	for k := 0; k < d; k += block {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		kb := min(block, d-k)
		if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: kb, Stride: d, Data: a[k*d+k:]}); !ok {
			return false, nil
		}
		if k+kb == d {
			break
		}
		l11 := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: kb, Stride: d, Data: a[k*d+k:]}
		// The panel below: A21 ← A21 L11⁻ᵀ, a block of rows at a time.
		for r := k + kb; r < d; r += block {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			blas64.Trsm(blas.Right, blas.Trans, 1, l11, blas64.General{Rows: min(block, d-r), Cols: kb, Stride: d, Data: a[r*d+k:]})
		}
		// The trailing matrix: A22 ← A22 − A21A21ᵀ, a block of rows of a
		// block column at a time (its diagonal block's upper part is
		// updated too, unread).
		for j := k + kb; j < d; j += block {
			jb := min(block, d-j)
			for r := j; r < d; r += rowChunk {
				if err := ctx.Err(); err != nil {
					return false, err
				}
				rb := min(rowChunk, d-r)
				blas64.Gemm(blas.NoTrans, blas.Trans, -1,
					blas64.General{Rows: rb, Cols: kb, Stride: d, Data: a[r*d+k:]},
					blas64.General{Rows: jb, Cols: kb, Stride: d, Data: a[j*d+k:]},
					1, blas64.General{Rows: rb, Cols: jb, Stride: d, Data: a[r*d+j:]})
			}
		}
	}
	for i := 0; i < d; i++ {
		if v := a[i*d+i]; !(v > 0) || math.IsInf(v, 1) {
			return false, nil
		}
		clear(a[i*d+i+1 : (i+1)*d])
	}
	return true, nil
}

// InvertLower returns L⁻¹ (row-major, lower triangular) of the lower
// triangular row-major d×d l with a nonzero diagonal, by block-row
// forward substitution of LX = I, or ctx.Err() when ctx ends first.
func InvertLower(ctx context.Context, l []float64, d int) ([]float64, error) {
	if len(l) != d*d {
		return nil, fmt.Errorf("cholesky: %d entries for a %d×%d matrix", len(l), d, d)
	}
	x := make([]float64, d*d)
	for i0 := 0; i0 < d; i0 += block {
		ib := min(block, d-i0)
		// X[I, J] = −L[I,I]⁻¹ Σ_{J≤K<I} L[I, K] X[K, J] for the blocks J
		// left of the diagonal (X[K, J] = 0 above J); the product first.
		for j0 := 0; j0 < i0; j0 += block {
			// The sum over K, rowChunk terms at a time (X[I, J] starts 0).
			for k0 := j0; k0 < i0; k0 += rowChunk {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				kn := min(rowChunk, i0-k0)
				blas64.Gemm(blas.NoTrans, blas.NoTrans, -1,
					blas64.General{Rows: ib, Cols: kn, Stride: d, Data: l[i0*d+k0:]},
					blas64.General{Rows: kn, Cols: block, Stride: d, Data: x[k0*d+j0:]},
					1, blas64.General{Rows: ib, Cols: block, Stride: d, Data: x[i0*d+j0:]})
			}
		}
		for i := 0; i < ib; i++ {
			x[(i0+i)*d+i0+i] = 1
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		blas64.Trsm(blas.Left, blas.NoTrans, 1,
			blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: ib, Stride: d, Data: l[i0*d+i0:]},
			blas64.General{Rows: ib, Cols: i0 + ib, Stride: d, Data: x[i0*d:]})
	}
	return x, nil
}

// CovarianceFactor returns the lower Cholesky factor L of the covariance
// P⁻¹ of the row-major d×d symmetric precision p (LLᵀ = P⁻¹, lower
// triangular, positive diagonal), false when p is not numerically
// positive definite, or ctx.Err(). It takes one factorisation and one
// triangular inverse (~⅔d³ flops; inverting P and factoring P⁻¹ take
// ~2d³): with J the order-reversing permutation and JPJ = RRᵀ, P = UUᵀ
// for the upper triangular U = JRJ, so P⁻¹ = U⁻ᵀU⁻¹ and L = U⁻ᵀ =
// J R⁻ᵀ J, lower triangular; the factor is unique, so this is the L any
// other route gives, to rounding. Only p's lower triangle is read; p is
// not modified.
func CovarianceFactor(ctx context.Context, p []float64, d int) ([]float64, bool, error) {
	if len(p) != d*d {
		return nil, false, fmt.Errorf("cholesky: %d entries for a %d×%d matrix", len(p), d, d)
	}
	r := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			r[i*d+j] = p[(d-1-j)*d+d-1-i] // (JPJ)ᵢⱼ from p's lower triangle
		}
	}
	ok, err := Factor(ctx, r, d)
	if err != nil || !ok {
		return nil, false, err
	}
	m, err := InvertLower(ctx, r, d)
	if err != nil {
		return nil, false, err
	}
	l := r // reuse: every entry is written below
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if j <= i {
				l[i*d+j] = m[(d-1-j)*d+d-1-i]
			} else {
				l[i*d+j] = 0
			}
		}
	}
	for i := 0; i < d; i++ {
		if v := l[i*d+i]; !(v > 0) || math.IsInf(v, 1) {
			return nil, false, nil
		}
	}
	return l, true, nil
}
