package afin

import (
	"fmt"
	"os"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // the pure Go backend: works offline everywhere
	. "github.com/gomlx/gomlx/pkg/core/graph"    //nolint:staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// batchNodes are the graph inputs of one Batch.
type batchNodes struct {
	priorNode, priorPair []*Node
	priorMask            *Node
	likNode, likPair     []*Node
	likMask              *Node
	z                    *Node
}

// numBatchInputs is the number of graph inputs a Batch contributes
// (without the targets).
var numBatchInputs = 2*len(priorFamilies) + 1 + 2*len(likFamilies) + 1

func splitBatchNodes(in []*Node, withZ bool) *batchNodes {
	b := &batchNodes{}
	k := 0
	next := func() *Node { k++; return in[k-1] }
	for range priorFamilies {
		b.priorNode = append(b.priorNode, next())
		b.priorPair = append(b.priorPair, next())
	}
	b.priorMask = next()
	for range likFamilies {
		b.likNode = append(b.likNode, next())
		b.likPair = append(b.likPair, next())
	}
	b.likMask = next()
	if withZ {
		b.z = next()
	}
	return b
}

// inputs returns the batch's tensors in graph-input order.
func (b *Batch) inputs(withZ bool) ([]any, error) {
	B, d, np := b.B, b.D, b.NPad
	var out []any
	for f, name := range priorFamilies {
		out = append(out,
			tensors.FromFlatDataAndDimensions(b.PriorNode[f], B, d, priorNodeWidth[name]),
			tensors.FromFlatDataAndDimensions(b.PriorPair[f], B, d, d, priorPairWidth[name]))
	}
	out = append(out, tensors.FromFlatDataAndDimensions(b.PriorMask, B, len(priorFamilies)))
	for f, name := range likFamilies {
		out = append(out,
			tensors.FromFlatDataAndDimensions(b.LikNode[f], B, np, d, likNodeWidth[name]),
			tensors.FromFlatDataAndDimensions(b.LikPair[f], B, np, d, d, likPairWidth[name]))
	}
	out = append(out, tensors.FromFlatDataAndDimensions(b.LikMask, B, np, len(likFamilies)))
	if withZ {
		if b.Z == nil {
			return nil, fmt.Errorf("afin: batch has no targets")
		}
		out = append(out, tensors.FromFlatDataAndDimensions(b.Z, B, d))
	}
	return out, nil
}

// newBackend returns the GoMLX backend named by GOMLX_BACKEND, or the
// pure Go one when unset (the default would try to download XLA). The
// pure Go backend runs ops sequentially: its parallel op scheduler can
// deadlock with its parallel matmul when few cores are available
// (observed with GOMAXPROCS=2), and matmuls still use all cores.
func newBackend() (backends.Backend, error) {
	cfg := os.Getenv("GOMLX_BACKEND")
	if cfg == "" || cfg == "go" {
		cfg = "go:ops_sequential"
	}
	return backends.NewWithConfig(cfg)
}

// engine compiles and runs the network graphs for one configuration.
type engine struct {
	cfg          Config
	params       []*Param // shapes and names; Data is not read by the graphs
	backend      backends.Backend
	fwd, lossExe *Exec
	unfactorised bool
}

func newEngine(cfg Config, params []*Param, unfactorised bool) (*engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Decoder != "gaussian" {
		return nil, fmt.Errorf("afin: the %s decoder is not built yet (only gaussian)", cfg.Decoder)
	}
	be, err := newBackend()
	if err != nil {
		return nil, fmt.Errorf("afin: GoMLX backend: %w", err)
	}
	e := &engine{cfg: cfg, params: params, backend: be, unfactorised: unfactorised}
	np := len(params)
	e.fwd, err = NewExec(be, func(in []*Node) []*Node {
		n := newNet(cfg, params, in[:np])
		n.unfactorised = e.unfactorised
		P, X := n.encode(splitBatchNodes(in[np:], false))
		mu, lam := n.gaussian(P, X)
		return []*Node{mu, lam}
	})
	if err != nil {
		return nil, err
	}
	e.fwd.SetMaxCache(-1)
	e.lossExe, err = NewExec(be, func(in []*Node) []*Node {
		pn := in[:np]
		n := newNet(cfg, params, pn)
		n.unfactorised = e.unfactorised
		bn := splitBatchNodes(in[np:], true)
		P, X := n.encode(bn)
		mu, lam := n.gaussian(P, X)
		lq := gaussLogQ(mu, lam, bn.z)
		d := float64(lam.Shape().Dimensions[1])
		loss := Neg(DivScalar(ReduceAllMean(lq), d))
		return append([]*Node{loss, lq}, Gradient(loss, pn...)...)
	})
	if err != nil {
		return nil, err
	}
	e.lossExe.SetMaxCache(-1)
	return e, nil
}

func paramTensors(params []*Param, data [][]float32) []any {
	out := make([]any, len(params))
	for i, p := range params {
		out[i] = tensors.FromFlatDataAndDimensions(data[i], p.Shape...)
	}
	return out
}

func finalize(ts []*tensors.Tensor) {
	for _, t := range ts {
		t.FinalizeAll()
	}
}

// forward returns μ (B×d) and Λ (B×d×d) for a batch under the given
// weights (one []float32 per parameter).
func (e *engine) forward(w []any, b *Batch) (mu, lam []float32, err error) {
	in, err := b.inputs(false)
	if err != nil {
		return nil, nil, err
	}
	out, err := e.fwd.Exec(append(append([]any{}, w...), in...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("afin: forward pass: %w", err)
	}
	defer finalize(out)
	return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1]), nil
}

// lossGrad returns the mean loss −log q(z)/d, the per-task log q and the
// gradients with respect to every parameter.
func (e *engine) lossGrad(w []any, b *Batch) (loss float64, logq []float32, grads [][]float32, err error) {
	in, err := b.inputs(true)
	if err != nil {
		return 0, nil, nil, err
	}
	out, err := e.lossExe.Exec(append(append([]any{}, w...), in...)...)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("afin: training pass: %w", err)
	}
	defer finalize(out)
	loss = float64(tensors.MustCopyFlatData[float32](out[0])[0])
	logq = tensors.MustCopyFlatData[float32](out[1])
	grads = make([][]float32, len(e.params))
	for i := range e.params {
		grads[i] = tensors.MustCopyFlatData[float32](out[2+i])
	}
	return loss, logq, grads, nil
}
