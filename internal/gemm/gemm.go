package gemm

import (
	"fmt"
)

// Op selects the output stage of Mul.
type Op uint8

const (
	// WithBias adds the packed bias to every row.
	WithBias Op = 1 << iota
	// Accumulate adds the product to C instead of overwriting it.
	Accumulate
	// ApplySiLU applies x·sigmoid(x) after bias and accumulation.
	ApplySiLU
)

// group is a run of np ≤ 4 panels starting at column col; its packed data
// start at off and hold K rows of 16·np floats.
type group struct {
	col, np, off int
	mask         int // valid-column bit mask of the last panel
}

// Packed is W (K×N, row-major, inputs × outputs) and its bias, laid out
// for the kernel. It is read-only after Pack, so one Packed serves any
// number of goroutines.
type Packed struct {
	K, N   int
	w      []float32 // the original layout (Weights)
	bias   []float32 // nil when the layer has no bias
	data   []float32 // panels, zero-padded to 16 columns
	pbias  []float32 // bias zero-padded to the panel width
	groups []group
}

// Pack copies w (k×n, row-major) and bias (n values, or nil) into the
// kernel's layout.
func Pack(w []float32, k, n int, bias []float32) (*Packed, error) {
	if k < 1 || n < 1 {
		return nil, fmt.Errorf("gemm: pack %d×%d: dimensions must be positive", k, n)
	}
	if len(w) != k*n {
		return nil, fmt.Errorf("gemm: pack %d×%d: got %d weights", k, n, len(w))
	}
	if bias != nil && len(bias) != n {
		return nil, fmt.Errorf("gemm: pack %d×%d: got %d biases", k, n, len(bias))
	}
	p := &Packed{}
	if err := p.Repack(w, k, n, false); err != nil {
		return nil, err
	}
	if bias != nil {
		p.bias = append([]float32(nil), bias...)
		p.pbias = make([]float32, (n+15)/16*16)
		copy(p.pbias, bias)
	}
	return p, nil
}

// Mul computes C[m×N] = op(A[m×K]·W) with row strides lda and ldc (in
// elements). It panics if a or c is too short, as slice indexing would.
func (p *Packed) Mul(c []float32, ldc int, a []float32, lda, m int, op Op) {
	if m == 0 {
		return
	}
	if lda < p.K || ldc < p.N || len(a) < (m-1)*lda+p.K || len(c) < (m-1)*ldc+p.N {
		panic(fmt.Sprintf("gemm: Mul %d×%d·%d×%d: a has %d (stride %d), c has %d (stride %d)",
			m, p.K, p.K, p.N, len(a), lda, len(c), ldc))
	}
	kernels.Get().mul(p, c, ldc, a, lda, m, op)
}

// FLOPs is the multiply-add count of Mul on m rows, times two.
func (p *Packed) FLOPs(m int) int64 { return 2 * int64(m) * int64(p.K) * int64(p.N) }

// SiLU replaces every x by x·sigmoid(x).
func SiLU(x []float32) {
	kernels.Get().silu(x)
}

// AddSiLU sets dst[i] = SiLU(dst[i] + a[i] + b[i]); a and b must be at
// least as long as dst. It fuses the broadcast terms of a factorised first
// layer with the activation in one pass.
func AddSiLU(dst, a, b []float32) {
	if len(a) < len(dst) || len(b) < len(dst) {
		panic(fmt.Sprintf("gemm: AddSiLU: dst %d, a %d, b %d", len(dst), len(a), len(b)))
	}
	kernels.Get().addSiLU(dst, a, b)
}

// Repack refills p with a new matrix, reusing its storage where it is
// large enough; with transposed, src is W's transpose (n×k, row-major),
// as for attention keys, whose scores are Q·Kᵀ. Bias is cleared. It lets
// per-call operands (keys, values) use the kernel without allocating.
func (p *Packed) Repack(src []float32, k, n int, transposed bool) error {
	if k < 1 || n < 1 || len(src) != k*n {
		return fmt.Errorf("gemm: repack %d×%d: got %d values", k, n, len(src))
	}
	panels := (n + 15) / 16
	p.K, p.N = k, n
	p.bias, p.pbias = nil, nil
	p.w = grow(p.w, k*n)
	if transposed {
		for j := 0; j < n; j++ {
			for kk := 0; kk < k; kk++ {
				p.w[kk*n+j] = src[j*k+kk]
			}
		}
	} else {
		copy(p.w, src)
	}
	p.data = grow(p.data, k*panels*16)
	p.groups = p.groups[:0]
	off := 0
	for first := 0; first < panels; first += 4 {
		np := min(4, panels-first)
		col := first * 16
		width := np * 16
		valid := min(n-col-(np-1)*16, 16)
		p.groups = append(p.groups, group{col: col, np: np, off: off, mask: 1<<valid - 1})
		for kk := 0; kk < k; kk++ {
			dst := p.data[off+kk*width : off+(kk+1)*width]
			m := copy(dst, p.w[kk*n+col:kk*n+min(n, col+width)])
			clear(dst[m:])
		}
		off += k * width
	}
	return nil
}

// grow returns s resliced to n elements, reallocating only when its
// capacity is short.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// ExpSum sets x[i] = exp(x[i] − m) and returns their sum: the body of a
// softmax (m is the maximum, so no term overflows). Arguments below −88
// give exp(−88) ≈ 6e-39 rather than 0, which no softmax sum can see.
func ExpSum(x []float32, m float32) float32 {
	return kernels.Get().expSum(x, m)
}

// Weights returns W (K×N, row-major) as packed; callers must not modify it.
func (p *Packed) Weights() []float32 { return p.w }

// SiLUGrad sets dz[i] = da[i]·SiLU'(z[i]), SiLU'(z) = σ(z)(1 + z(1 − σ(z))):
// the backward pass of SiLU. da and z must be at least as long as dz.
func SiLUGrad(dz, da, z []float32) {
	if len(da) < len(dz) || len(z) < len(dz) {
		panic(fmt.Sprintf("gemm: SiLUGrad: dz %d, da %d, z %d", len(dz), len(da), len(z)))
	}
	kernels.Get().siluGrad(dz, da, z)
}
