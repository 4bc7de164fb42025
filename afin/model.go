package afin

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // graph-building code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// net builds the AFIN graph from parameter nodes. unfactorised switches the
// first layer of every BoxMLP branch to the literal concatenate-then-matmul
// form; it exists so tests can check the factorised form equals it.
type net struct {
	cfg          Config
	p            map[string]*Node
	unfactorised bool
	nodeOnly     bool // skip BoxLayer pair branches (see boxBranchesNode)
}

func newNet(cfg Config, params []*Param, nodes []*Node) *net {
	n := &net{cfg: cfg, p: make(map[string]*Node, len(params))}
	for i, p := range params {
		n.p[p.Name] = nodes[i]
	}
	return n
}

func (n *net) param(name string) *Node {
	v, ok := n.p[name]
	if !ok {
		panic(fmt.Sprintf("afin: missing parameter %s", name))
	}
	return v
}

// bcastTo reshapes v (whose dims are a suffix of the target rank) to rank r
// by inserting leading unit axes, so binary ops broadcast it.
func bcastTo(v *Node, r int) *Node {
	dims := v.Shape().Dimensions
	if len(dims) == r {
		return v
	}
	nd := make([]int, r)
	for i := range nd {
		nd[i] = 1
	}
	copy(nd[r-len(dims):], dims)
	return Reshape(v, nd...)
}

func silu(x *Node) *Node { return Mul(x, Logistic(x)) }

// matmul contracts the last axis of x with the first axis of w (in, out).
func matmul(x, w *Node) *Node {
	return dotg(x, []int{x.Rank() - 1}, nil, w, []int{0}, nil)
}

func (n *net) linear(x *Node, prefix string) *Node {
	y := matmul(x, n.param(prefix+"/w"))
	return Add(y, bcastTo(n.param(prefix+"/b"), y.Rank()))
}

// mlpFrom finishes MLP(·, ·, ·, L) given the first layer's output h
// (bias included, before the activation).
func (n *net) mlpFrom(h *Node, prefix string, layers int) *Node {
	for k := 1; k < layers; k++ {
		h = n.linear(silu(h), fmt.Sprintf("%s/l%d", prefix, k))
	}
	return h
}

func (n *net) mlp(x *Node, prefix string, layers int) *Node {
	return n.mlpFrom(n.linear(x, prefix+"/l0"), prefix, layers)
}

// sym averages a pair tensor (…, d, d, C) with its transpose over the two
// coordinate axes at positions rank-3 and rank-2.
func sym(p *Node) *Node {
	r := p.Rank()
	return MulScalar(Add(p, Transpose(p, r-3, r-2)), 0.5)
}

// diagOf extracts P_ii from (…, d, d, C) as (…, d, C). It masks with the
// identity and sums rather than slicing: the simplego backend cannot
// differentiate Slice (its gradient needs Pad).
func diagOf(p *Node) *Node {
	dims := p.Shape().Dimensions
	r := len(dims)
	d := dims[r-2]
	eye := Reshape(DiagonalWithValue(Scalar(p.Graph(), p.DType(), 1), d), d, d, 1)
	return ReduceSum(Mul(p, bcastTo(eye, r)), r-2)
}

// oneHot is the constant unit vector e_k of length n.
func oneHot(g *Graph, dt dtypes.DType, k, n int) *Node {
	v := make([]float32, n)
	v[k] = 1
	return ConvertDType(Const(g, v), dt)
}

// chunk returns rows [k·c, (k+1)·c) of a weight matrix (6c, H), as a
// contraction with a unit vector (differentiable on every backend).
func chunk(w *Node, k, c int) *Node {
	dims := w.Shape().Dimensions
	parts := dims[0] / c
	w3 := Reshape(w, parts, c, dims[1])
	return Einsum("k,kch->ch", oneHot(w.Graph(), w.DType(), k, parts), w3)
}

// pick returns element k of a vector as a scalar, differentiably.
func pick(v *Node, k int) *Node {
	return ReduceAllSum(Mul(v, oneHot(v.Graph(), v.DType(), k, v.Shape().Dimensions[0])))
}

// boxBranches evaluates the pair and node branch MLPs of a
// BoxLayer/BoxTensorMap on tokens P (B,K,d,d,C), X (B,K,d,C) with the 6C
// summaries of facts §2. It returns the raw branch outputs (pair output
// not yet symmetrised).
func (n *net) boxBranches(P, X *Node, prefix string, layers int) (dP, dX *Node) {
	c := X.Shape().Dimensions[X.Rank()-1]
	row := ReduceMean(P, 3) // (B,K,d,C): mean over j
	col := ReduceMean(P, 2) // (B,K,d,C): mean over i, indexed by j
	diag := diagOf(P)
	gP := ReduceMean(P, 2, 3) // (B,K,C)
	gN := ReduceMean(X, 2)    // (B,K,C)
	wp := n.param(prefix + "/pair/l0/w")
	bp := n.param(prefix + "/pair/l0/b")
	wn := n.param(prefix + "/node/l0/w")
	bn := n.param(prefix + "/node/l0/b")
	var hp, hn *Node
	if n.unfactorised {
		dims := P.Shape().Dimensions
		full := func(v *Node, axis int) *Node { // (B,K,d,C) → (B,K,d,d,C) along axis
			return BroadcastToDims(InsertAxes(v, axis), dims...)
		}
		glob := func(v *Node) *Node { return BroadcastToDims(InsertAxes(v, 2, 2), dims...) }
		inP := Concatenate([]*Node{P, full(row, 3), full(col, 2), full(X, 3), full(X, 2), glob(gP)}, -1)
		hp = Add(matmul(inP, wp), bcastTo(bp, 5))
		ndims := X.Shape().Dimensions
		gl := func(v *Node) *Node { return BroadcastToDims(InsertAxes(v, 2), ndims...) }
		inX := Concatenate([]*Node{X, diag, row, col, gl(gP), gl(gN)}, -1)
		hn = Add(matmul(inX, wn), bcastTo(bn, 4))
	} else {
		// The first layer is linear in the concatenation, so it splits into
		// one product per part, each at its own (smaller) shape, broadcast-added.
		if !n.nodeOnly {
			perI := Add(matmul(row, chunk(wp, 1, c)), matmul(X, chunk(wp, 3, c))) // (B,K,d,H)
			perJ := Add(matmul(col, chunk(wp, 2, c)), matmul(X, chunk(wp, 4, c))) // (B,K,d,H)
			glob := Add(matmul(gP, chunk(wp, 5, c)), bcastTo(bp, 3))              // (B,K,H)
			hp = matmul(P, chunk(wp, 0, c))                                       // (B,K,d,d,H)
			hp = Add(hp, Add(InsertAxes(perI, 3), InsertAxes(perJ, 2)))           // + (B,K,d,1,H) + (B,K,1,d,H)
			hp = Add(hp, InsertAxes(glob, 2, 2))                                  // + (B,K,1,1,H)
		}
		hn = Add(matmul(X, chunk(wn, 0, c)), matmul(diag, chunk(wn, 1, c)))
		hn = Add(hn, Add(matmul(row, chunk(wn, 2, c)), matmul(col, chunk(wn, 3, c))))
		gn := Add(Add(matmul(gP, chunk(wn, 4, c)), matmul(gN, chunk(wn, 5, c))), bcastTo(bn, 3))
		hn = Add(hn, InsertAxes(gn, 2)) // (B,K,d,H)
	}
	if n.nodeOnly {
		hp = nil
	}
	if hp != nil {
		dP = n.mlpFrom(hp, prefix+"/pair", layers)
	}
	dX = n.mlpFrom(hn, prefix+"/node", layers)
	return dP, dX
}

// boxBranchesNode is boxBranches without the pair branch (dP is nil),
// for a BoxLayer whose pair output is discarded.
func (n *net) boxBranchesNode(P, X *Node, prefix string, layers int) (dP, dX *Node) {
	n2 := *n
	n2.nodeOnly = true
	return n2.boxBranches(P, X, prefix, layers)
}

func layerNorm(x, g, b *Node) *Node {
	r := x.Rank()
	mean := ReduceAndKeep(x, ReduceMean, -1)
	xc := Sub(x, mean)
	v := ReduceAndKeep(Square(xc), ReduceMean, -1)
	y := Div(xc, Sqrt(AddScalar(v, 1e-5)))
	return Add(Mul(y, bcastTo(g, r)), bcastTo(b, r))
}

func (n *net) ln(x *Node, prefix string) *Node {
	return layerNorm(x, n.param(prefix+"/g"), n.param(prefix+"/b"))
}

// adapters maps the batch descriptors to tokens: P (B,K,d,d,C), X (B,K,d,C)
// and the token mask (B,K), token 0 being the prior.
func (n *net) adapters(in *batchNodes) (P, X, mask *Node) {
	L := n.cfg.AdapterL
	var xp, pp *Node
	for f, name := range priorFamilies {
		if in.priorNode[f] == nil {
			continue // absent from the batch
		}
		m := SliceAxis(in.priorMask, 1, AxisElem(f)) // (B,1)
		xn := Mul(n.mlp(in.priorNode[f], "adapters/prior/"+name+"/node", L), InsertAxes(m, -1))
		pn := Mul(sym(n.mlp(in.priorPair[f], "adapters/prior/"+name+"/pair", L)), InsertAxes(m, -1, -1))
		if xp == nil {
			xp, pp = xn, pn
		} else {
			xp, pp = Add(xp, xn), Add(pp, pn)
		}
	}
	var xl, pl *Node
	for f, name := range likFamilies {
		if in.likNode[f] == nil {
			continue
		}
		m := SliceAxis(in.likMask, 2, AxisElem(f)) // (B,Np,1)
		xn := Mul(n.mlp(in.likNode[f], "adapters/lik/"+name+"/node", L), InsertAxes(m, -1))
		pn := Mul(sym(n.mlp(in.likPair[f], "adapters/lik/"+name+"/pair", L)), InsertAxes(m, -1, -1))
		if xl == nil {
			xl, pl = xn, pn
		} else {
			xl, pl = Add(xl, xn), Add(pl, pn)
		}
	}
	if xl == nil { // no likelihood factor in the whole batch: padding tokens only
		dims := xp.Shape().Dimensions // (B,d,C)
		np := in.likMask.Shape().Dimensions[1]
		xl = Zeros(xp.Graph(), shapes.Make(xp.DType(), dims[0], np, dims[1], dims[2]))
		pl = Zeros(xp.Graph(), shapes.Make(xp.DType(), dims[0], np, dims[1], dims[1], dims[2]))
	}
	X = Concatenate([]*Node{InsertAxes(xp, 1), xl}, 1)
	P = Concatenate([]*Node{InsertAxes(pp, 1), pl}, 1)
	B := in.priorMask.Shape().Dimensions[0]
	ones := Ones(in.priorMask.Graph(), shapes.Make(in.priorMask.DType(), B, 1)) // the prior token is always real
	mask = Concatenate([]*Node{ones, ReduceSum(in.likMask, 2)}, 1)
	return P, X, mask
}

// attention is one factor-axis multi-head attention sublayer on normalised
// tokens; it returns the mixed values (before the output map).
func (n *net) attention(P, X, mask *Node, prefix string) (mp, mx *Node) {
	L := n.cfg.MergeL
	h := n.cfg.Heads
	dims := X.Shape().Dimensions
	B, K, d, C := dims[0], dims[1], dims[2], dims[3]
	u := C / h
	qp, qx := n.boxBranches(P, X, prefix+"/q", L)
	kp, kx := n.boxBranches(P, X, prefix+"/k", L)
	vp, vx := n.boxBranches(P, X, prefix+"/v", L)
	qp, kp, vp = sym(qp), sym(kp), sym(vp)
	// Heads: (B,K,n,h,u) → (B,h,K,n·u), with n = d for nodes and d² for pairs.
	heads := func(v *Node, nd int) *Node {
		v = Reshape(v, B, K, nd, h, u)
		return Reshape(TransposeAllAxes(v, 0, 3, 1, 2, 4), B, h, K, nd*u)
	}
	unheads := func(v *Node, nd int) *Node { // (B,h,K,n·u) → (B,K,n,C)
		v = Reshape(v, B, h, K, nd, u)
		return Reshape(TransposeAllAxes(v, 0, 2, 3, 1, 4), B, K, nd, C)
	}
	score := func(q, k *Node) *Node { return dotg(q, []int{3}, []int{0, 1}, k, []int{3}, []int{0, 1}) }
	sNode := MulScalar(score(heads(qx, d), heads(kx, d)), 1/float64(d))
	sPair := MulScalar(score(heads(qp, d*d), heads(kp, d*d)), 1/float64(d*d))
	w := Softmax(n.param(prefix+"/mix"), 0)
	s := MulScalar(Add(Mul(sNode, pick(w, 0)), Mul(sPair, pick(w, 1))), 1/math.Sqrt(float64(u)))
	// Padded keys get a −1e9 offset: their weight underflows to exactly 0.
	keyOff := MulScalar(OneMinus(Reshape(mask, B, 1, 1, K)), -1e9)
	a := Softmax(Add(s, keyOff), -1) // (B,h,K,K)
	mix := func(v *Node) *Node { return dotg(a, []int{3}, []int{0, 1}, v, []int{2}, []int{0, 1}) }
	mx = unheads(mix(heads(vx, d)), d)
	mp = Reshape(unheads(mix(heads(vp, d*d)), d*d), B, K, d, d, C)
	return mp, mx
}

// encode runs adapters, encoder and merge blocks and pools over factors:
// node (B,d,C) and pair (B,d,d,C).
func (n *net) encode(in *batchNodes) (pool, xpool *Node) {
	P, X, mask := n.adapters(in)
	for l := 0; l < n.cfg.EncLayers; l++ {
		dP, dX := n.boxBranches(P, X, fmt.Sprintf("encoder/%d", l), n.cfg.BoxL)
		P = Add(P, sym(dP))
		X = Add(X, dX)
	}
	for b := 0; b < n.cfg.Blocks; b++ {
		pre := fmt.Sprintf("merge/%d", b)
		np, nx := n.ln(P, pre+"/ln_attn_pair"), n.ln(X, pre+"/ln_attn_node")
		mp, mx := n.attention(np, nx, mask, pre)
		dP, dX := n.boxBranches(mp, mx, pre+"/out", n.cfg.MergeL)
		P = sym(Add(P, sym(dP)))
		X = Add(X, dX)
		fp, fx := n.ln(P, pre+"/ln_ffn_pair"), n.ln(X, pre+"/ln_ffn_node")
		dP, dX = n.boxBranches(fp, fx, pre+"/ffn", n.cfg.MergeL)
		P = sym(Add(P, sym(dP)))
		X = Add(X, dX)
	}
	m := mask
	xpool = ReduceSum(Mul(X, InsertAxes(m, -1, -1)), 1)
	pool = sym(ReduceSum(Mul(P, InsertAxes(m, -1, -1, -1)), 1))
	return pool, xpool
}

// gaussian decodes pooled tokens into the mean (B,d) and the diagonally
// dominant precision (B,d,d) of facts §5.
func (n *net) gaussian(P, X *Node) (mu, lam *Node) {
	dims := X.Shape().Dimensions
	B, d := dims[0], dims[1]
	g := X.Graph()
	L := n.cfg.DecL
	eye := Reshape(DiagonalWithValue(Scalar(g, X.DType(), 1), d), 1, d, d)
	off := Reshape(n.mlp(P, "gaussian_decoder/offdiag", L), B, d, d)
	A := MulScalar(Add(off, Transpose(off, 1, 2)), 0.5*n.cfg.OffdiagMul)
	A = Mul(A, OneMinus(eye))
	a := ReduceSum(Abs(A), 2)
	e := AddScalar(Softplus(Reshape(n.mlp(X, "gaussian_decoder/diag", L), B, d)), 1e-4)
	lam = Add(A, Mul(InsertAxes(Add(a, e), -1), eye))

	mu = Reshape(n.mlp(richFeatures(P, X), "gaussian_decoder/mean", L), B, d)
	return mu, lam
}

// richFeatures are the decoder's per-coordinate inputs from pooled tokens
// P (B,d,d,C), X (B,d,C): [node_i, ½(row_i+col_i), diag_i, gN, gP] (B,d,5C).
func richFeatures(P, X *Node) *Node {
	dims := X.Shape().Dimensions
	row := ReduceMean(P, 2)
	col := ReduceMean(P, 1)
	diag := diagOf(P)
	gN := BroadcastToDims(InsertAxes(ReduceMean(X, 1), 1), dims...)
	gP := BroadcastToDims(InsertAxes(ReduceMean(P, 1, 2), 1), dims...)
	return Concatenate([]*Node{X, MulScalar(Add(row, col), 0.5), diag, gN, gP}, -1)
}

// gaussLogQ is log N(z; μ, Λ⁻¹) per task (B,). log det Λ comes from
// Gaussian elimination unrolled over d: the pivots of an SPD matrix are
// the squared Cholesky diagonal, so Σ log pivot = log det Λ exactly.
func gaussLogQ(mu, lam, z *Node) *Node {
	dims := lam.Shape().Dimensions
	d := dims[1]
	M := lam
	var logdet *Node
	g := lam.Graph()
	for j := 0; j < d; j++ {
		// Columns are read by contracting with e_j (no Slice: see diagOf);
		// M stays symmetric, so row j equals column j.
		ej := oneHot(g, lam.DType(), j, d)
		colj := Einsum("bij,j->bi", M, ej)                // (B,d)
		piv := ReduceSum(Mul(colj, Reshape(ej, 1, d)), 1) // (B,)
		if logdet == nil {
			logdet = Log(piv)
		} else {
			logdet = Add(logdet, Log(piv))
		}
		if j == d-1 {
			break
		}
		outer := Mul(InsertAxes(colj, 2), InsertAxes(colj, 1))
		M = Sub(M, Div(outer, Reshape(piv, dims[0], 1, 1)))
	}
	r := Sub(z, mu)
	t := Einsum("bij,bj->bi", lam, r)
	q := ReduceSum(Mul(r, t), 1)
	return Sub(MulScalar(Sub(logdet, q), 0.5), Scalar(lam.Graph(), lam.DType(), 0.5*float64(d)*math.Log(2*math.Pi)))
}
