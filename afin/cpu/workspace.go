package cpu

import (
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
	// Per-chunk buffers of a BoxMLP (see boxMLP).
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

	flops int64   // products executed, for checking the FLOP model
	prog  tracker // the caller's Progress, if any (see WithProgress)
	// afterMul, when set, is called after every matrix product: tests
	// cancel from inside the work and count the work done after.
	afterMul func()
}

// mul is p.Mul that also counts FLOPs.
func (w *workspace) mul(p *gemm.Packed, c []float32, ldc int, a []float32, lda, m int, op gemm.Op) {
	p.Mul(c, ldc, a, lda, m, op)
	w.flops += p.FLOPs(m)
	w.prog.tick(w.flops)
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

// gradWS holds the scratch buffers of the backward pass and the packed
// transposes of the weights (built on first use).
type gradWS struct {
	z, a       [][]float32 // per layer: pre-activations and activations
	dz, da, at []float32
	ones       []float32
	// BoxMLP backward buffers.
	dxs, dps, dNodeIn, drow, dcol, ddiag, dgp, dgn []float32
	z1, a1, da1, dpIn, dU, dV, duIn, dvIn          []float32
	pk                                             gemm.Packed
	wt                                             map[*gemm.Packed]*gemm.Packed
}

// transposed returns Wᵀ of p, packed, cached in gw.
func (gw *gradWS) transposed(p *gemm.Packed) *gemm.Packed {
	if gw.wt == nil {
		gw.wt = map[*gemm.Packed]*gemm.Packed{}
	}
	t := gw.wt[p]
	if t == nil {
		t = &gemm.Packed{}
		_ = t.Repack(p.Weights(), p.N, p.K, true)
		gw.wt[p] = t
	}
	return t
}
