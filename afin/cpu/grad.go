package cpu

import (
	"math"

	"github.com/afin-bench/afin/internal/gemm"
)

// This file holds the first building block of a native backward pass
// (issue 15, training on the CPU path): the gradient of a packed MLP by
// recomputation. The rest of the network's backward (BoxMLP summaries and
// factorised first layers, LayerNorm, attention, pooling, adapters, the
// Gaussian decoder's log q) is not written yet; training still runs on
// the GoMLX graph.

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

// gradWS holds the scratch buffers of mlp.backward.
type gradWS struct {
	z, a       [][]float32 // per layer: pre-activations and activations
	dz, da, at []float32
	pk         gemm.Packed
	wt         []*gemm.Packed // transposed weights, packed on first use
}

// backward accumulates into g the gradient of Σ dy·MLP(x) with respect
// to the layers' weights and biases, for rows rows of x (m.in wide) and
// dy (m.out wide), and, when dx is not nil, writes the gradient with
// respect to x into dx. The forward activations are recomputed (the
// caller keeps only the MLP's input).
func (m *mlp) backward(gw *gradWS, x []float32, rows int, dy, dx []float32, g *mlpGrad) {
	L := len(m.layers)
	if len(gw.wt) != L {
		gw.wt = make([]*gemm.Packed, L)
		for i, l := range m.layers {
			gw.wt[i] = &gemm.Packed{}
			_ = gw.wt[i].Repack(m.wT(i), l.N, l.K, false)
		}
	}
	// Forward, keeping every layer's pre-activation and activation.
	for len(gw.z) < L {
		gw.z, gw.a = append(gw.z, nil), append(gw.a, nil)
	}
	in := x
	for i, l := range m.layers {
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
	for i := L - 1; i >= 0; i-- {
		l := m.layers[i]
		in := x
		if i > 0 {
			in = gw.a[i-1]
		}
		m.layerGrads(gw, i, in, rows, g)
		if i == 0 && dx == nil {
			break
		}
		out := dx
		if i > 0 {
			gw.da = grow(gw.da, rows*l.K)
			out = gw.da
		}
		gw.wt[i].Mul(out, l.K, gw.dz, l.N, rows, 0) // dIn = dZ·Wᵀ
		if i > 0 {
			gw.dz = grow(gw.dz, rows*l.K)
			siluBackward(gw.dz, gw.da, gw.z[i-1])
		}
	}
}

// layerGrads adds layer i's weight gradient inᵀ·dZ and bias gradient
// Σ_rows dZ to g.
func (m *mlp) layerGrads(gw *gradWS, i int, in []float32, rows int, g *mlpGrad) {
	l := m.layers[i]
	gw.at = grow(gw.at, l.K*rows)
	for r := 0; r < rows; r++ {
		for k := 0; k < l.K; k++ {
			gw.at[k*rows+r] = in[r*l.K+k]
		}
	}
	_ = gw.pk.Repack(gw.dz[:rows*l.N], rows, l.N, false)
	gw.pk.Mul(g.dW[i], l.N, gw.at, rows, l.K, gemm.Accumulate)
	for r := 0; r < rows; r++ {
		for j, v := range gw.dz[r*l.N : (r+1)*l.N] {
			g.dB[i][j] += v
		}
	}
}

// wT returns layer i's weights transposed (out×in), rebuilt from the
// packed copy's portable layout.
func (m *mlp) wT(i int) []float32 {
	l := m.layers[i]
	w := l.Weights()
	t := make([]float32, l.K*l.N)
	for k := 0; k < l.K; k++ {
		for j := 0; j < l.N; j++ {
			t[j*l.K+k] = w[k*l.N+j]
		}
	}
	return t
}

// siluBackward sets dz = da·SiLU'(z), SiLU'(z) = σ(z)(1 + z(1 − σ(z))).
func siluBackward(dz, da, z []float32) {
	for i, v := range z {
		s := 1 / (1 + math.Exp(-float64(v)))
		dz[i] = da[i] * float32(s*(1+float64(v)*(1-s)))
	}
}
