// Package gomlx is the network as a GoMLX graph, built from the
// declaration in package arch as a pure function of its tensors: the
// engine that runs on any GoMLX backend (XLA on a GPU), beside the native
// one in package cpu. The functions are named for the paper's blocks:
// encoding (adapters and the shared encoder), merge (boxTransformer,
// attention), pooling, gaussianDecoder, and the flow decoder's flowContext,
// conditioner, flowSample and flowDensity; embed runs the first three.
//
// Around the graphs, the engine (engine.go, passes.go) keeps XLA's
// compiles bounded and its memory planned: Gaussian passes are padded to
// a fixed set of shapes (shapes.go; coords.go keeps the padded network
// equal to the unpadded one), split into chunks that a memory model of
// the program's own graph fits in a budget (memory.go), and may train in
// bfloat16 (precision.go).
package gomlx

import (
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

// net builds the AFIN graph from the typed declaration (arch.Network) and
// one graph node per declared tensor. unfactorised switches the first
// layer of every BoxMLP branch to the literal concatenate-then-matmul
// form; it exists so tests can check the factorised form equals it.
type net struct {
	cfg          arch.Config
	decl         *arch.Network
	nodes        map[*arch.Tensor]*graph.Node
	unfactorised bool
	grad         bool    // the graph's gradient will be taken (see boxMLPs)
	coords       *coords // padded latent coordinates; nil when d is exact
}

func newNet(decl *arch.Network, nodes []*graph.Node) *net {
	n := &net{cfg: decl.Cfg, decl: decl, nodes: make(map[*arch.Tensor]*graph.Node, len(nodes))}
	for i, t := range decl.Tensors() {
		n.nodes[t] = nodes[i]
	}
	return n
}

// t returns the graph node of a declared tensor. Every tensor of the
// declaration has one (both come from decl.Tensors()).
func (n *net) t(t *arch.Tensor) *graph.Node {
	return n.nodes[t]
}

// bcastTo reshapes v (whose dims are a suffix of the target rank) to rank r
// by inserting leading unit axes, so binary ops broadcast it.
func bcastTo(v *graph.Node, r int) *graph.Node {
	dims := v.Shape().Dimensions
	if len(dims) == r {
		return v
	}
	nd := make([]int, r)
	for i := range nd {
		nd[i] = 1
	}
	copy(nd[r-len(dims):], dims)
	return graph.Reshape(v, nd...)
}

func silu(x *graph.Node) *graph.Node { return graph.Mul(x, graph.Logistic(x)) }

// matmul contracts the last axis of x with the first axis of w (in, out).
func (n *net) matmul(x, w *graph.Node) *graph.Node {
	return graph.DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{0}, nil)
}

func (n *net) linear(x *graph.Node, l arch.Linear) *graph.Node {
	y := n.matmul(x, n.t(l.W))
	return graph.Add(y, bcastTo(n.t(l.B), y.Rank()))
}

// mlpFrom finishes an MLP given its first layer's output h (bias
// included, before the activation): SiLU between layers, none after the
// last (paper eq. (mlp_hidden)).
func (n *net) mlpFrom(h *graph.Node, m arch.MLP) *graph.Node {
	for _, l := range m.Layers[1:] {
		h = n.linear(silu(h), l)
	}
	return h
}

func (n *net) mlp(x *graph.Node, m arch.MLP) *graph.Node {
	return n.mlpFrom(n.linear(x, m.Layers[0]), m)
}

// sym averages a pair tensor (…, d, d, C) with its transpose over the two
// coordinate axes at positions rank-3 and rank-2.
func sym(p *graph.Node) *graph.Node {
	r := p.Rank()
	return graph.MulScalar(graph.Add(p, graph.Transpose(p, r-3, r-2)), 0.5)
}

// diagOf extracts P_ii from (…, d, d, C) as (…, d, C). It masks with the
// identity and sums rather than slicing: the simplego backend cannot
// differentiate Slice (its gradient needs Pad).
func diagOf(p *graph.Node) *graph.Node {
	dims := p.Shape().Dimensions
	r := len(dims)
	d := dims[r-2]
	eye := graph.Reshape(graph.DiagonalWithValue(graph.Scalar(p.Graph(), p.DType(), 1), d), d, d, 1)
	return graph.ReduceSum(graph.Mul(p, bcastTo(eye, r)), r-2)
}

// oneHot is the constant unit vector e_k of length n.
func oneHot(g *graph.Graph, dt dtypes.DType, k, n int) *graph.Node {
	v := make([]float32, n)
	v[k] = 1
	return graph.ConvertDType(graph.Const(g, v), dt)
}

// rowBlocks stacks the row blocks ks of a weight matrix (6c, H), block k
// being rows [k·c, (k+1)·c): one Gather, whose gradient (a scatter) every
// backend builds, where Slice's (a Pad) is missing on the Go backend.
func rowBlocks(w *graph.Node, c int, ks ...int) *graph.Node {
	dims := w.Shape().Dimensions
	idx := make([][]int32, len(ks))
	for i, k := range ks {
		idx[i] = []int32{int32(k)}
	}
	blocks := graph.Gather(graph.Reshape(w, dims[0]/c, c, dims[1]), graph.Const(w.Graph(), idx))
	return graph.Reshape(blocks, len(ks)*c, dims[1])
}

// pick returns element k of a vector as a scalar, differentiably.
func pick(v *graph.Node, k int) *graph.Node {
	return graph.ReduceAllSum(graph.Mul(v, oneHot(v.Graph(), v.DType(), k, v.Shape().Dimensions[0])))
}

// boxSummaries are the per-token summaries of pair tokens P (B,K,d,d,C)
// and node tokens X (B,K,d,C) a BoxMLP branch sees (App. B.1, eqs.
// (boxmlp-encoder-pair-input), (boxmlp-encoder-node-input)): plain means,
// row and column kept apart.
type boxSummaries struct {
	row, col, diag *graph.Node // (B,K,d,C): mean over j of P_ij, mean over i of P_ij (indexed by j), P_ii
	gP, gN         *graph.Node // (B,K,C): mean of P over (i,j), mean of X over i
}

func (n *net) summarise(P, X *graph.Node) boxSummaries {
	c := n.coords
	return boxSummaries{row: c.meanCoords(P, 3), col: c.meanCoords(P, 2), diag: diagOf(P),
		gP: c.meanCoords(P, 2, 3), gN: c.meanCoords(X, 2)}
}

// boxMLP evaluates the two branches of a BoxMLP (paper Sec. 3.1, eq.
// (boxmlp)) on P (B,K,d,d,C), X (B,K,d,C): the pair branch at (i,j) on
// [P_ij, row_i, col_j, X_i, X_j, gP] and the node branch at i on
// [X_i, diag_i, row_i, col_i, gP, gN]. It returns the raw branch outputs
// (pair output not symmetrised). With nodeOnly the pair branch is skipped
// (dP is nil), for a layer whose pair output is discarded.
func (n *net) boxMLP(P, X *graph.Node, b arch.BoxMLP, nodeOnly bool) (dP, dX *graph.Node) {
	dP, dX = n.boxMLPRaw(P, X, b, nodeOnly)
	if dP != nil {
		dP = n.coords.maskTokens(dP, true)
	}
	return dP, n.coords.maskTokens(dX, false)
}

// boxMLPRaw is boxMLP before its outputs' padded coordinates are zeroed.
func (n *net) boxMLPRaw(P, X *graph.Node, b arch.BoxMLP, nodeOnly bool) (dP, dX *graph.Node) {
	s := n.summarise(P, X)
	if n.unfactorised {
		return n.boxMLPConcat(P, X, s, b, nodeOnly)
	}
	c := X.Shape().Dimensions[X.Rank()-1]
	in := boxInputsOf(X, s)
	if !nodeOnly {
		// The first layer is linear in the concatenation [P_ij, row_i,
		// col_j, X_i, X_j, gP], so it splits into a product at the pair
		// shape and two at the node shape, broadcast-added (boxInputs).
		// Three products, where the concatenation would cost 6× the pair
		// product, and where one per part made six.
		l0 := b.Pair.Layers[0]
		wp := n.t(l0.W)
		perI := graph.Add(n.matmul(in.perI, rowBlocks(wp, c, 1, 3, 5)), bcastTo(n.t(l0.B), 4)) // (B,K,d,H)
		perJ := n.matmul(in.perJ, rowBlocks(wp, c, 2, 4))                                      // (B,K,d,H)
		dP = n.mlpFrom(pairFirst(n.matmul(P, rowBlocks(wp, c, 0)), perI, perJ), b.Pair)
	}
	// The node branch runs at the node shape: its concatenated input is
	// small, and one product is fewer programs' kernels than six.
	return dP, n.mlp(in.node, b.Node)
}

// boxInputs are a BoxMLP's first-layer inputs at the node shape
// (B,K,d,·): the parts of the pair branch's input that vary with i alone
// ([row_i, X_i, gP]) and with j alone ([col_j, X_j]), and the node
// branch's whole input [X_i, diag_i, row_i, col_i, gP, gN].
type boxInputs struct{ perI, perJ, node *graph.Node }

func boxInputsOf(X *graph.Node, s boxSummaries) boxInputs {
	dims := X.Shape().Dimensions
	gP := graph.BroadcastToDims(graph.InsertAxes(s.gP, 2), dims...)
	gN := graph.BroadcastToDims(graph.InsertAxes(s.gN, 2), dims...)
	return boxInputs{
		perI: graph.Concatenate([]*graph.Node{s.row, X, gP}, -1),
		perJ: graph.Concatenate([]*graph.Node{s.col, X}, -1),
		node: graph.Concatenate([]*graph.Node{X, s.diag, s.row, s.col, gP, gN}, -1),
	}
}

// pairFirst is the pair branch's first layer from its parts: hp at the
// pair shape (B,K,d,d,…) plus perI (B,K,d,…) along j and perJ along i.
func pairFirst(hp, perI, perJ *graph.Node) *graph.Node {
	return graph.Add(hp, graph.Add(graph.InsertAxes(perI, 3), graph.InsertAxes(perJ, 2)))
}

// boxMLPConcat is boxMLP's literal form: concatenate the 6C inputs, then
// apply the MLP.
func (n *net) boxMLPConcat(P, X *graph.Node, s boxSummaries, b arch.BoxMLP, nodeOnly bool) (dP, dX *graph.Node) {
	dims := P.Shape().Dimensions
	if !nodeOnly {
		full := func(v *graph.Node, axis int) *graph.Node { // (B,K,d,C) → (B,K,d,d,C) along axis
			return graph.BroadcastToDims(graph.InsertAxes(v, axis), dims...)
		}
		glob := graph.BroadcastToDims(graph.InsertAxes(s.gP, 2, 2), dims...)
		inP := graph.Concatenate([]*graph.Node{P, full(s.row, 3), full(s.col, 2), full(X, 3), full(X, 2), glob}, -1)
		dP = n.mlp(inP, b.Pair)
	}
	ndims := X.Shape().Dimensions
	gl := func(v *graph.Node) *graph.Node { return graph.BroadcastToDims(graph.InsertAxes(v, 2), ndims...) }
	inX := graph.Concatenate([]*graph.Node{X, s.diag, s.row, s.col, gl(s.gP), gl(s.gN)}, -1)
	return dP, n.mlp(inX, b.Node)
}

// layerNorm normalises over the channel axis only (App. B.2), with the
// PyTorch epsilon.
func (n *net) layerNorm(x *graph.Node, ln arch.LayerNorm, pair bool) *graph.Node {
	r := x.Rank()
	mean := graph.ReduceAndKeep(x, graph.ReduceMean, -1)
	xc := graph.Sub(x, mean)
	v := graph.ReduceAndKeep(graph.Square(xc), graph.ReduceMean, -1)
	y := graph.Div(xc, graph.Sqrt(graph.AddScalar(v, arch.LayerNormEps)))
	// A padded coordinate's zero token would come out as the bias.
	return n.coords.maskTokens(graph.Add(graph.Mul(y, bcastTo(n.t(ln.G), r)), bcastTo(n.t(ln.B), r)), pair)
}

// adapter applies one family's descriptor MLPs (App. B.1, "Factor-type
// adapters"), masked to the tokens of that family; pair outputs are
// symmetrised.
func (n *net) adapter(node, pair, m *graph.Node, a arch.Adapter) (x, p *graph.Node) {
	x = graph.Mul(n.mlp(node, a.Node), graph.InsertAxes(m, -1))
	p = graph.Mul(sym(n.mlp(pair, a.Pair)), graph.InsertAxes(m, -1, -1))
	return n.coords.maskTokens(x, false), n.coords.maskTokens(p, true)
}

// adapters maps the batch descriptors to tokens: P (B,K,d,d,C) and
// X (B,K,d,C), token 0 being the prior (paper eq. (node-pair)).
func (n *net) adapters(in *batchNodes) (P, X *graph.Node) {
	xp, pp := n.adapterSum(in.priorNode, in.priorPair, in.priorMask, n.decl.PriorAdapter)
	xl, pl := n.adapterSum(in.likNode, in.likPair, in.likMask, n.decl.LikAdapter)
	if xl == nil { // no likelihood factor in the whole batch: padding tokens only
		dims := xp.Shape().Dimensions // (B,d,C)
		np := in.likMask.Shape().Dimensions[1]
		xl = graph.Zeros(xp.Graph(), shapes.Make(xp.DType(), dims[0], np, dims[1], dims[2]))
		pl = graph.Zeros(xp.Graph(), shapes.Make(xp.DType(), dims[0], np, dims[1], dims[1], dims[2]))
	}
	X = graph.Concatenate([]*graph.Node{graph.InsertAxes(xp, 1), xl}, 1)
	P = graph.Concatenate([]*graph.Node{graph.InsertAxes(pp, 1), pl}, 1)
	return P, X
}

// adapterSum is the tokens of one group of families (prior or
// likelihood): each present family's adapter, masked to its tokens by
// masks (…, F), summed. nil when no family of the group is present.
func (n *net) adapterSum(nodes, pairs []*graph.Node, masks *graph.Node, as []arch.Adapter) (x, p *graph.Node) {
	var present []int
	for f := range as {
		if nodes[f] != nil {
			present = append(present, f)
		}
	}
	if len(present) > 1 && n.grad && !n.unfactorised {
		return n.adaptersStacked(nodes, pairs, masks, as, present)
	}
	for _, f := range present {
		xn, pn := n.adapter(nodes[f], pairs[f], graph.SliceAxis(masks, masks.Rank()-1, graph.AxisElem(f)), as[f])
		x, p = addOrSet(x, xn), addOrSet(p, pn)
	}
	return x, p
}

func addOrSet(acc, v *graph.Node) *graph.Node {
	if acc == nil {
		return v
	}
	return graph.Add(acc, v)
}

// attention is the factor-axis multi-head attention of a BoxTransformer
// block (paper eqs. (boxtransformer-qkv), (attention_v_tilde); App. B.2,
// eq. (merge-scores)) on normalised tokens; it returns the mixed values
// before the output map. Heads split the channels into contiguous groups.
func (n *net) attention(P, X, mask *graph.Node, blk arch.MergeBlock) (mp, mx *graph.Node) {
	h := n.cfg.Heads
	dims := X.Shape().Dimensions
	B, K, d, C := dims[0], dims[1], dims[2], dims[3]
	u := C / h
	ps, xs := n.boxMLPs(P, X, []arch.BoxMLP{blk.Q, blk.K, blk.V})
	qp, kp, vp := sym(ps[0]), sym(ps[1]), sym(ps[2])
	qx, kx, vx := xs[0], xs[1], xs[2]
	// Heads: (B,K,n,h,u) → (B,h,K,n·u), with n = d for nodes and d² for pairs.
	heads := func(v *graph.Node, nd int) *graph.Node {
		v = graph.Reshape(v, B, K, nd, h, u)
		return graph.Reshape(graph.TransposeAllAxes(v, 0, 3, 1, 2, 4), B, h, K, nd*u)
	}
	unheads := func(v *graph.Node, nd int) *graph.Node { // (B,h,K,n·u) → (B,K,n,C)
		v = graph.Reshape(v, B, h, K, nd, u)
		return graph.Reshape(graph.TransposeAllAxes(v, 0, 2, 3, 1, 4), B, K, nd, C)
	}
	score := func(q, k *graph.Node) *graph.Node {
		return graph.DotGeneral(q, []int{3}, []int{0, 1}, k, []int{3}, []int{0, 1})
	}
	sNode := n.coords.scaleByCount(score(heads(qx, d), heads(kx, d)), d, 1)
	sPair := n.coords.scaleByCount(score(heads(qp, d*d), heads(kp, d*d)), d, 2)
	w := softmax(n.t(blk.Mix), 0)
	s := graph.MulScalar(graph.Add(graph.Mul(sNode, pick(w, 0)), graph.Mul(sPair, pick(w, 1))), 1/math.Sqrt(float64(u)))
	// Padded keys get a −1e9 offset: their weight underflows to exactly 0.
	keyOff := graph.MulScalar(graph.OneMinus(graph.Reshape(mask, B, 1, 1, K)), -1e9)
	a := softmax(graph.Add(s, keyOff), -1) // (B,h,K,K)
	mix := func(v *graph.Node) *graph.Node {
		return graph.DotGeneral(a, []int{3}, []int{0, 1}, v, []int{2}, []int{0, 1})
	}
	mx = unheads(mix(heads(vx, d)), d)
	mp = graph.Reshape(unheads(mix(heads(vp, d*d)), d*d), B, K, d, d, C)
	return mp, mx
}

// boxTransformer is one merge block (paper eqs. (boxtransformer-output),
// (boxtransformer-ffn); App. B.2): pre-norm attention, the output map's
// increment added to the un-normalised tokens, then the FFN increment.
func (n *net) boxTransformer(P, X, mask *graph.Node, blk arch.MergeBlock) (*graph.Node, *graph.Node) {
	mp, mx := n.attention(n.layerNorm(P, blk.LNAttnPair, true), n.layerNorm(X, blk.LNAttnNode, false), mask, blk)
	dP, dX := n.boxMLP(mp, mx, blk.Out, false)
	P = sym(graph.Add(P, sym(dP)))
	X = graph.Add(X, dX)
	dP, dX = n.boxMLP(n.layerNorm(P, blk.LNFFNPair, true), n.layerNorm(X, blk.LNFFNNode, false), blk.FFN, false)
	P = sym(graph.Add(P, sym(dP)))
	X = graph.Add(X, dX)
	return P, X
}

// pooling is the paper's Pooling: the tokens summed over factors, the
// prior included (App. B.2): node (B,d,C) and symmetrised pair (B,d,d,C).
// Padded tokens are masked out.
func pooling(P, X, mask *graph.Node) (pp, xp *graph.Node) {
	xp = graph.ReduceSum(graph.Mul(X, graph.InsertAxes(mask, -1, -1)), 1)
	pp = sym(graph.ReduceSum(graph.Mul(P, graph.InsertAxes(mask, -1, -1, -1)), 1))
	return pp, xp
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

// softmax over one axis, as exp(x − max) / Σ exp(x − max). GoMLX v0.28's
// graph.Softmax adds a fused softmax node beside this same form, which the
// Go backend fails to run in bfloat16 and which the census would count
// twice; XLA fuses this form by itself.
func softmax(x *graph.Node, axis int) *graph.Node {
	top := graph.StopGradient(graph.ReduceAndKeep(x, graph.ReduceMax, axis))
	num := graph.Exp(graph.Sub(x, top))
	return graph.Div(num, graph.ReduceAndKeep(num, graph.ReduceSum, axis))
}
