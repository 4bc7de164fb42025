// Package gomlx is the network as GoMLX programs, built from the
// declaration in package arch: the engine that runs on any GoMLX backend
// (XLA on a GPU), beside the native one in package cpu. Its files are
// cpu's, block for block: encoding.go (the adapters and one encoder
// layer), merge.go (one BoxTransformer block), pooling.go,
// gaussian_decoder.go and flow_decoder.go (the heads), over boxmlp.go
// and mlp.go.
//
// The engine compiles each block as its own small programs, a forward
// and a backward that recomputes the block's forward (block.go), shared
// by identical layers, and chains them on the device (chain.go). Passes
// are padded to a fixed set of shapes (shapes.go; coords.go keeps the
// padded network equal to the unpadded one) and split into chunks that a
// memory model of the blocks' own graphs fits in a budget (memory.go),
// so a training run compiles a fixed, small set of small programs
// (census.go counts them); training may run in bfloat16.
package gomlx

import (
	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/compute/dtypes"
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

// softmax over one axis, as exp(x − max) / Σ exp(x − max). GoMLX v0.28's
// graph.Softmax adds a fused softmax node beside this same form, which the
// Go backend fails to run in bfloat16 and which the census would count
// twice; XLA fuses this form by itself.
func softmax(x *graph.Node, axis int) *graph.Node {
	top := graph.StopGradient(graph.ReduceAndKeep(x, graph.ReduceMax, axis))
	num := graph.Exp(graph.Sub(x, top))
	return graph.Div(num, graph.ReduceAndKeep(num, graph.ReduceSum, axis))
}

func addOrSet(acc, v *graph.Node) *graph.Node {
	if acc == nil {
		return v
	}
	return graph.Add(acc, v)
}

const (
	f32  = dtypes.Float32
	bf16 = dtypes.BFloat16
)
