package gomlx

import (
	"math"

	"github.com/gomlx/gomlx/core/graph"
)

// The Gaussian head: pooling and the Gaussian decoder (App. B.3), as an
// inference program (μ, Λ) and as the training loss. Heads stay in
// float32 under bf16 training.

// gaussianHead maps the merged tokens to each task's mean (B,d) and
// precision (B,d,d).
func gaussianHead() *block {
	return &block{
		name: "gaussian_decoder", modules: []string{"gaussian_decoder"},
		acts: []slot{slotP, slotX}, aux: []slot{slotTokens, slotCoords, slotDReal},
		forward: func(n *net, in map[slot]*graph.Node) []*graph.Node {
			mu, lam := n.gaussianDecoder(pooling(in[slotP], in[slotX], in[slotTokens]))
			return []*graph.Node{mu, lam}
		},
	}
}

// gaussianLoss is the training loss on the merged tokens: Σ_t w_t·(−log
// q(z_t)/d_t), each task at its own d, and each task's log q. With w =
// 1/B on real tasks and 0 on padding, a chunk's loss is its share of the
// batch mean.
func gaussianLoss() *block {
	return &block{
		name: "gaussian_loss", shares: "gaussian_decoder", loss: true,
		acts: []slot{slotP, slotX}, aux: []slot{slotTokens, slotCoords, slotDReal, slotZ, slotWeight},
		forward: func(n *net, in map[slot]*graph.Node) []*graph.Node {
			mu, lam := n.gaussianDecoder(pooling(in[slotP], in[slotX], in[slotTokens]))
			return weightedLoss(n.gaussLogQ(mu, lam, in[slotZ]), in[slotDReal], in[slotWeight])
		},
	}
}

// weightedLoss is [Σ w·(−log q/d), log q] over a chunk's tasks.
func weightedLoss(lq, dr, w *graph.Node) []*graph.Node {
	return []*graph.Node{graph.Neg(graph.ReduceAllSum(graph.Mul(w, graph.Div(lq, dr)))), lq}
}

// gaussianDecoder maps pooled tokens to the mean (B,d) and the
// diagonally dominant precision (B,d,d) (App. B.3, "Gaussian decoder"):
// A = sym(s·offdiag(P)) off the diagonal, Λ_ii = Σ_{j≠i}|A_ij| +
// softplus(diag(X_i)) + 1e-4, so Λ is SPD by construction.
func (n *net) gaussianDecoder(P, X *graph.Node) (mu, lam *graph.Node) {
	dec := n.decl.Gaussian
	dims := X.Shape().Dimensions
	B, d := dims[0], dims[1]
	g := X.Graph()
	eye := graph.Reshape(graph.DiagonalWithValue(graph.Scalar(g, X.DType(), 1), d), 1, d, d)
	off := graph.Reshape(n.mlp(P, dec.Offdiag), B, d, d)
	A := graph.MulScalar(graph.Add(off, graph.Transpose(off, 1, 2)), 0.5*n.cfg.OffdiagMul)
	A = n.coords.maskTokens(graph.InsertAxes(graph.Mul(A, graph.OneMinus(eye)), -1), true)
	A = graph.Reshape(A, B, d, d)
	a := graph.ReduceSum(graph.Abs(A), 2)
	e := graph.AddScalar(graph.Softplus(graph.Reshape(n.mlp(X, dec.Diag), B, d)), 1e-4)
	lam = graph.Add(A, graph.Mul(graph.InsertAxes(graph.Add(a, e), -1), eye))

	mu = graph.Reshape(n.mlp(n.richFeatures(P, X), dec.Mean), B, d)
	if c := n.coords; c != nil {
		// Padded coordinates: mean 0, unit precision, no coupling.
		mm := graph.Mul(graph.InsertAxes(c.m, 2), graph.InsertAxes(c.m, 1))
		lam = graph.Add(graph.Mul(lam, mm), graph.Mul(graph.InsertAxes(graph.OneMinus(c.m), -1), eye))
		mu = graph.Mul(mu, c.m)
	}
	return mu, lam
}

// richFeatures are the decoders' per-coordinate inputs from pooled tokens
// P (B,d,d,C), X (B,d,C): [X_i, ½(row_i+col_i), diag_i, gN, gP] (B,d,5C).
func (n *net) richFeatures(P, X *graph.Node) *graph.Node {
	dims := X.Shape().Dimensions
	c := n.coords
	row := c.meanCoords(P, 2)
	col := c.meanCoords(P, 1)
	diag := diagOf(P)
	gN := graph.BroadcastToDims(graph.InsertAxes(c.meanCoords(X, 1), 1), dims...)
	gP := graph.BroadcastToDims(graph.InsertAxes(c.meanCoords(P, 1, 2), 1), dims...)
	return graph.Concatenate([]*graph.Node{X, graph.MulScalar(graph.Add(row, col), 0.5), diag, gN, gP}, -1)
}

// gaussLogQ is log N(z; μ, Λ⁻¹) per task (B,). log det Λ comes from
// Gaussian elimination unrolled over d: the pivots of an SPD matrix are
// the squared Cholesky diagonal, so Σ log pivot = log det Λ exactly.
func (n *net) gaussLogQ(mu, lam, z *graph.Node) *graph.Node {
	dims := lam.Shape().Dimensions
	d := dims[1]
	M := lam
	var logdet *graph.Node
	g := lam.Graph()
	for j := 0; j < d; j++ {
		// Columns are read by masking with e_j and summing (no Slice: see
		// diagOf; no matrix product, of which XLA would compile d more);
		// M stays symmetric, so row j equals column j.
		ej := oneHot(g, lam.DType(), j, d)
		colj := graph.ReduceSum(graph.Mul(M, graph.Reshape(ej, 1, 1, d)), 2) // (B,d)
		piv := graph.ReduceSum(graph.Mul(colj, graph.Reshape(ej, 1, d)), 1)  // (B,)
		logdet = addOrSet(logdet, graph.Log(piv))
		if j == d-1 {
			break
		}
		outer := graph.Mul(graph.InsertAxes(colj, 2), graph.InsertAxes(colj, 1))
		M = graph.Sub(M, graph.Div(outer, graph.Reshape(piv, dims[0], 1, 1)))
	}
	r := graph.Sub(z, mu)
	t := graph.Einsum("bij,bj->bi", lam, r)
	q := graph.ReduceSum(graph.Mul(r, t), 1)
	if n.coords != nil { // the padded coordinates' pivots are 1 and their residuals 0
		return graph.Sub(graph.MulScalar(graph.Sub(logdet, q), 0.5), graph.MulScalar(n.coords.dr, 0.5*math.Log(2*math.Pi)))
	}
	return graph.Sub(graph.MulScalar(graph.Sub(logdet, q), 0.5), graph.Scalar(lam.Graph(), lam.DType(), 0.5*float64(d)*math.Log(2*math.Pi)))
}
