package gomlx

import (
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// The whole-graph form: the network as one program at a batch's exact d
// and N (no coordinate masks, no padding, no chunks), differentiated by
// GoMLX's autodiff over every weight at once. It is what the engine
// compiled before it compiled blocks, and the reference the block chain
// must equal.

func finalize(ts []*tensors.Tensor) {
	for _, t := range ts {
		t.FinalizeAll()
	}
}

// wholeInputs are the program's inputs after the weights: every family's
// descriptors and masks at the batch's shape, the token mask, then extra.
func wholeInputs(b *arch.Batch, extra ...*tensors.Tensor) []any {
	B, d, np := b.B, b.D, b.NPad
	var in []any
	for f := range arch.PriorFamilies {
		in = append(in, tensors.FromFlatDataAndDimensions(b.PriorNode[f], B, d, arch.PriorNodeWidth[f]),
			tensors.FromFlatDataAndDimensions(b.PriorPair[f], B, d, d, arch.PriorPairWidth[f]))
	}
	in = append(in, tensors.FromFlatDataAndDimensions(b.PriorMask, B, len(arch.PriorFamilies)))
	for f := range arch.LikFamilies {
		in = append(in, tensors.FromFlatDataAndDimensions(b.LikNode[f], B, np, d, arch.LikNodeWidth[f]),
			tensors.FromFlatDataAndDimensions(b.LikPair[f], B, np, d, d, arch.LikPairWidth[f]))
	}
	in = append(in, tensors.FromFlatDataAndDimensions(b.LikMask, B, np, len(arch.LikFamilies)))
	in = append(in, tensors.FromFlatDataAndDimensions(tokenMask(b), B, 1+np))
	for _, x := range extra {
		in = append(in, x)
	}
	return in
}

// wholeEmbed is the unpadded network up to the merged tokens.
func wholeEmbed(e *Engine, in []*graph.Node, grad bool) (n *net, P, X, tokens *graph.Node, rest []*graph.Node) {
	np := len(e.params)
	n = newNet(e.decl, in[:np])
	n.unfactorised, n.grad = e.unfactorised, grad
	in = in[np:]
	bn := &batchNodes{priorNode: make([]*graph.Node, len(arch.PriorFamilies)), priorPair: make([]*graph.Node, len(arch.PriorFamilies)),
		likNode: make([]*graph.Node, len(arch.LikFamilies)), likPair: make([]*graph.Node, len(arch.LikFamilies))}
	for f := range arch.PriorFamilies {
		bn.priorNode[f], bn.priorPair[f], in = in[0], in[1], in[2:]
	}
	bn.priorMask, in = in[0], in[1:]
	for f := range arch.LikFamilies {
		bn.likNode[f], bn.likPair[f], in = in[0], in[1], in[2:]
	}
	bn.likMask, tokens, in = in[0], in[1], in[2:]
	P, X = n.adapters(bn)
	for _, l := range e.decl.Encoder {
		P, X = n.encoderLayer(P, X, l)
	}
	for _, blk := range e.decl.Merge {
		P, X = n.boxTransformer(P, X, tokens, blk)
	}
	return n, P, X, tokens, in
}

// wholeRun compiles and runs one whole-graph program on the weights w.
func wholeRun(t *testing.T, e *Engine, w []any, b *arch.Batch, build func(in []*graph.Node) []*graph.Node, extra ...*tensors.Tensor) []*tensors.Tensor {
	t.Helper()
	x, err := graph.NewExec(e.backend, build)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Finalize()
	var out []*tensors.Tensor
	if err := catch(func() error {
		var err error
		out, err = x.Call(append(append([]any{}, w...), wholeInputs(b, extra...)...)...)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// wholeForward is μ and Λ of the Gaussian decoder.
func wholeForward(t *testing.T, e *Engine, w []any, b *arch.Batch) (mu, lam []float32) {
	t.Helper()
	out := wholeRun(t, e, w, b, func(in []*graph.Node) []*graph.Node {
		n, P, X, tokens, _ := wholeEmbed(e, in, false)
		mu, lam := n.gaussianDecoder(pooling(P, X, tokens))
		return []*graph.Node{mu, lam}
	})
	defer finalize(out)
	return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1])
}

// wholeLossGrad is the mean −log q(z)/d over the batch and its gradient
// with respect to every weight, for either decoder.
func wholeLossGrad(t *testing.T, e *Engine, w []any, b *arch.Batch, strength float32) (float64, [][]float32) {
	t.Helper()
	z := tensors.FromFlatDataAndDimensions(b.Z, b.B, b.D)
	st := tensors.FromScalar(strength)
	out := wholeRun(t, e, w, b, func(in []*graph.Node) []*graph.Node {
		n, P, X, tokens, rest := wholeEmbed(e, in, true)
		var lq *graph.Node
		if e.cfg.Decoder == "flow" {
			l, _ := n.flowDensity(n.flowContext(pooling(P, X, tokens)), graph.InsertAxes(rest[0], 1), rest[1])
			lq = graph.Reshape(l, b.B)
		} else {
			mu, lam := n.gaussianDecoder(pooling(P, X, tokens))
			lq = n.gaussLogQ(mu, lam, rest[0])
		}
		loss := graph.Neg(graph.DivScalar(graph.ReduceAllMean(lq), float64(b.D)))
		return append([]*graph.Node{loss}, graph.Gradient(loss, in[:len(e.params)]...)...)
	}, z, st)
	defer finalize(out)
	g := make([][]float32, len(e.params))
	for i := range g {
		g[i] = tensors.MustCopyFlatData[float32](out[1+i])
	}
	return float64(tensors.MustCopyFlatData[float32](out[0])[0]), g
}
