package cpu

import (
	"fmt"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/gemm"
)

// A coordinate-wise MLP (the layers inside every BoxMLP, adapter and
// decoder head): its forward and its backward, which recomputes the
// activations from the saved input.

// mlp is an arch.MLP with packed layers: SiLU between layers, none after
// the last.
type mlp struct {
	decl   arch.MLP // the tensors, for gradients
	layers []*gemm.Packed
	in     int // input width
	out    int // output width
	hidden int // widest hidden layer (0 for one layer)
}

func packMLP(m arch.MLP) (*mlp, error) {
	if len(m.Layers) == 0 {
		return nil, fmt.Errorf("mlp without layers")
	}
	r := &mlp{decl: m, in: m.Layers[0].In(), out: m.Layers[len(m.Layers)-1].Out()}
	for i, l := range m.Layers {
		p, err := gemm.Pack(l.W.Data, l.In(), l.Out(), l.B.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.W.Name, err)
		}
		r.layers = append(r.layers, p)
		if i < len(m.Layers)-1 {
			r.hidden = max(r.hidden, l.Out())
		}
	}
	return r, nil
}

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

// mlpGrad accumulates the gradients of an MLP's layers: dW[l] (in×out,
// row-major like the weights) and dB[l] (out).
type mlpGrad struct{ dW, dB [][]float32 }

func newMLPGrad(m *mlp) *mlpGrad {
	g := &mlpGrad{}
	for _, l := range m.layers {
		g.dW = append(g.dW, make([]float32, l.K*l.N))
		g.dB = append(g.dB, make([]float32, l.N))
	}
	return g
}

// backward accumulates into g the gradient of Σ dy·MLP(x) with respect
// to the layers' weights and biases, for rows rows of x (m.in wide) and
// dy (m.out wide), and, when dx is not nil, writes the gradient with
// respect to x into dx. The forward activations are recomputed (the
// caller keeps only the MLP's input).
func (m *mlp) backward(gw *gradWS, x []float32, rows int, dy, dx []float32, g *mlpGrad) {
	m.backwardFrom(gw, 0, x, rows, dy, dx, g)
}

// backwardFrom is backward for layers first… only; x is the input of
// layer first (the previous layer's activation).
func (m *mlp) backwardFrom(gw *gradWS, first int, x []float32, rows int, dy, dx []float32, g *mlpGrad) {
	L := len(m.layers)
	// Forward, keeping every layer's pre-activation and activation.
	for len(gw.z) < L {
		gw.z, gw.a = append(gw.z, nil), append(gw.a, nil)
	}
	in := x
	for i := first; i < L; i++ {
		l := m.layers[i]
		gw.z[i] = grow(gw.z[i], rows*l.N)
		l.Mul(gw.z[i], l.N, in, l.K, rows, gemm.WithBias)
		if i < L-1 {
			gw.a[i] = grow(gw.a[i], rows*l.N)
			copy(gw.a[i], gw.z[i])
			gemm.SiLU(gw.a[i])
			in = gw.a[i]
		}
	}
	// Backward, last layer first.
	gw.dz = grow(gw.dz, len(dy))
	copy(gw.dz, dy)
	for i := L - 1; i >= first; i-- {
		l := m.layers[i]
		in := x
		if i > first {
			in = gw.a[i-1]
		}
		layerGrads(gw, l, in, rows, g.dW[i], g.dB[i])
		if i == first && dx == nil {
			break
		}
		out := dx
		if i > first {
			gw.da = grow(gw.da, rows*l.K)
			out = gw.da
		}
		gw.transposed(l).Mul(out, l.K, gw.dz, l.N, rows, 0) // dIn = dZ·Wᵀ
		if i > first {
			gw.dz = grow(gw.dz, rows*l.K)
			siluBackward(gw.dz, gw.da, gw.z[i-1])
		}
	}
}

// layerGrads adds the weight gradient inᵀ·dZ (gw.dz) to dW and the
// bias gradient Σ_rows dZ to dB (when not nil) of layer l. Both are
// products with the packed dZ: inᵀ (transposed in cache-sized tiles) and
// a row of ones.
func layerGrads(gw *gradWS, l *gemm.Packed, in []float32, rows int, dW, dB []float32) {
	gw.at = grow(gw.at, l.K*rows)
	transposeTiled(gw.at, in, rows, l.K)
	_ = gw.pk.Repack(gw.dz[:rows*l.N], rows, l.N, false)
	gw.pk.Mul(dW, l.N, gw.at, rows, l.K, gemm.Accumulate)
	if dB == nil {
		return
	}
	if len(gw.ones) < rows {
		gw.ones = make([]float32, rows)
		for i := range gw.ones {
			gw.ones[i] = 1
		}
	}
	gw.pk.Mul(dB, l.N, gw.ones, rows, 1, gemm.Accumulate)
}

// transposeTiled writes src (rows×cols, row-major) transposed into dst
// (cols×rows), in 16×16 tiles so both sides stay in cache.
func transposeTiled(dst, src []float32, rows, cols int) {
	const tile = 16
	for r0 := 0; r0 < rows; r0 += tile {
		r1 := min(rows, r0+tile)
		for c0 := 0; c0 < cols; c0 += tile {
			c1 := min(cols, c0+tile)
			for r := r0; r < r1; r++ {
				row := src[r*cols : r*cols+c1]
				for c := c0; c < c1; c++ {
					dst[c*rows+r] = row[c]
				}
			}
		}
	}
}

// siluBackward sets dz = da·SiLU'(z), SiLU'(z) = σ(z)(1 + z(1 − σ(z))).
func siluBackward(dz, da, z []float32) { gemm.SiLUGrad(dz, da, z) }

// mlpFLOPs is 2·rows·(multiply-adds) of MLP(in, out, h, l).
func mlpFLOPs(rows, in, out, h, l int) int64 {
	if l == 1 {
		return 2 * int64(rows) * int64(in*out)
	}
	return 2 * int64(rows) * int64(in*h+(l-2)*h*h+h*out)
}

// mlpWorkspaceFloats is the hidden activations h1 and h2 every MLP and
// BoxMLP branch shares: a BoxMLP chunk's pair rows (at least mlpRows) at
// the widest hidden width.
func mlpWorkspaceFloats(cfg arch.Config, d int) int64 {
	dd, tc := int64(d), int64(tokensPerChunk(d))
	hid := int64(max(cfg.BoxH, cfg.MergeH, cfg.AdapterH, cfg.DecH))
	rows := max(tc*dd*dd, mlpRows)
	return 2 * rows * hid
}
