package cpu

import (
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/gemm"
)

// workspace holds every buffer of one forward pass. Buffers grow to the
// largest task seen and are then reused, so a steady stream of tasks of
// one shape allocates nothing. A workspace is used by one call at a time.
type workspace struct {
	// Token state of one task: X (K·d·C) and P (K·d²·C).
	x, p []float32
	// Mixed attention output, same layout as x and p.
	mx, mp []float32
	// Queries, keys and values, head-major: [head][token][(d+d²)·u].
	qh, kh, vh []float32
	// Per-chunk buffers of a BoxMLP (see runBox).
	xc, pc, row, col, diag, gp, gn []float32
	nodeIn, uIn, vIn, u, v         []float32
	h1, h2, dx, dp                 []float32
	// Attention: scores and outputs of one query chunk, packed K and V.
	scores, outs   []float32
	rowMax, rowSum []float32
	pk, pv         []*gemm.Packed // per key block
	// Pooled tokens and decoder buffers.
	poolX, poolP, rich, dec1, dec2, dec3 []float32

	// Flow decoder buffers.
	flow flowWS

	// The current task's real sites and their families.
	sites, fams []int

	flops int64 // products executed, for checking the FLOP model
	// afterMul, when set, is called after every matrix product: tests
	// cancel from inside the work and count the work done after.
	afterMul func()
}

// mul is p.Mul that also counts FLOPs.
func (w *workspace) mul(p *gemm.Packed, c []float32, ldc int, a []float32, lda, m int, op gemm.Op) {
	p.Mul(c, ldc, a, lda, m, op)
	w.flops += p.FLOPs(m)
	if w.afterMul != nil {
		w.afterMul()
	}
}

// grow returns s with n elements, reallocating only when capacity is short.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

const (
	// mlpRows is the row chunk of a plain MLP: its hidden activations
	// (mlpRows × H) stay in L2 and memory does not grow with the rows.
	mlpRows = 256
	// pairRowsTarget is the number of pair rows (tokens × d²) a BoxMLP
	// chunk aims at: enough rows for the kernel, few enough to stay cached.
	pairRowsTarget = 384
	// queryChunk is the number of queries attended together.
	queryChunk = 256
	// attendTileMACs bounds the multiply-adds of one query chunk against
	// one key block (scores and values), the work between two looks at
	// the context in attention: fewer queries per chunk in high d.
	attendTileMACs = 1 << 26
)

// keyBlock is the number of keys per online-softmax block: one block's
// scores (queryChunk × keyBlock) stay in L2 and memory does not grow as
// K². A variable so tests can force several blocks on small tasks.
var keyBlock = 1024

// tokensPerChunk is the BoxMLP token chunk for dimension d.
func tokensPerChunk(d int) int { return max(1, pairRowsTarget/(d*d)) }

// run applies m to rows of in (m.in wide), writing rows of out (m.out
// wide), in chunks of mlpRows.
func (m *mlp) run(w *workspace, out, in []float32, rows int) {
	w.h1 = grow(w.h1, min(rows, mlpRows)*m.hidden)
	w.h2 = grow(w.h2, min(rows, mlpRows)*m.hidden)
	for r0 := 0; r0 < rows; r0 += mlpRows {
		r := min(mlpRows, rows-r0)
		o, x := out[r0*m.out:], in[r0*m.in:]
		if len(m.layers) == 1 {
			w.mul(m.layers[0], o, m.out, x, m.in, r, gemm.WithBias)
			continue
		}
		l0 := m.layers[0]
		w.mul(l0, w.h1, l0.N, x, m.in, r, gemm.WithBias|gemm.ApplySiLU)
		m.tail(w, o, w.h1, w.h2, r)
	}
}

// tail applies layers 1… to r rows of h (the first layer's activated
// output), using h2 as scratch; h is overwritten.
func (m *mlp) tail(w *workspace, out, h, h2 []float32, r int) {
	cur, nxt := h, h2
	last := len(m.layers) - 1
	for _, l := range m.layers[1:last] {
		w.mul(l, nxt, l.N, cur, l.K, r, gemm.WithBias|gemm.ApplySiLU)
		cur, nxt = nxt, cur
	}
	l := m.layers[last]
	w.mul(l, out, l.N, cur, l.K, r, gemm.WithBias)
}

// normalise writes LayerNorm(x) of each C-vector of x into dst (channel
// axis only, PyTorch's biased variance and epsilon). float32 sums are
// exact enough over C ≤ a few hundred channels and twice as fast.
func (ln *layerNorm) normalise(dst, x []float32, c int) {
	g, b := ln.g[:c], ln.b[:c]
	inv := 1 / float32(c)
	for o := 0; o+c <= len(x); o += c {
		v := x[o : o+c]
		var s float32
		for _, e := range v {
			s += e
		}
		mean := s * inv
		var q float32
		for _, e := range v {
			q += (e - mean) * (e - mean)
		}
		r := float32(1 / math.Sqrt(float64(q*inv+arch.LayerNormEps)))
		d := dst[o : o+c]
		for i, e := range v {
			d[i] = (e-mean)*r*g[i] + b[i]
		}
	}
}

func softmax2(logits []float32) [2]float64 {
	a, b := float64(logits[0]), float64(logits[1])
	m := math.Max(a, b)
	ea, eb := math.Exp(a-m), math.Exp(b-m)
	return [2]float64{ea / (ea + eb), eb / (ea + eb)}
}
