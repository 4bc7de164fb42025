package gomlx

import (
	"fmt"
	"strings"
	"sync"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // the pure Go backend: works offline everywhere
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// batchNodes are the graph inputs of one Batch.
type batchNodes struct {
	priorNode, priorPair []*graph.Node
	priorMask            *graph.Node
	likNode, likPair     []*graph.Node
	likMask              *graph.Node
}

// presence is a bit set of the families a batch contains: bit f for prior
// family f, bit 8+f for likelihood family f. Only present likelihood
// families' adapters are built into the graph (an absent family would
// contribute exact zeros). The prior adapters act on one token per task,
// so all four are always built: that keeps the number of distinct graphs
// (each compiled and cached) small during training.
type presence uint16

func batchPresence(b *arch.Batch) presence {
	var p presence
	for f := range arch.PriorFamilies {
		p |= 1 << f
	}
	nl := len(arch.LikFamilies)
	for tok := 0; tok < b.B*b.NPad; tok++ {
		for f := range arch.LikFamilies {
			if b.LikMask[tok*nl+f] != 0 {
				p |= 1 << (8 + f)
			}
		}
	}
	return p
}

func (p presence) prior(f int) bool { return p&(1<<f) != 0 }
func (p presence) lik(f int) bool   { return p&(1<<(8+f)) != 0 }

func splitBatchNodes(in []*graph.Node, p presence) *batchNodes {
	b := &batchNodes{
		priorNode: make([]*graph.Node, len(arch.PriorFamilies)), priorPair: make([]*graph.Node, len(arch.PriorFamilies)),
		likNode: make([]*graph.Node, len(arch.LikFamilies)), likPair: make([]*graph.Node, len(arch.LikFamilies)),
	}
	k := 0
	next := func() *graph.Node { k++; return in[k-1] }
	for f := range arch.PriorFamilies {
		if p.prior(f) {
			b.priorNode[f], b.priorPair[f] = next(), next()
		}
	}
	b.priorMask = next()
	for f := range arch.LikFamilies {
		if p.lik(f) {
			b.likNode[f], b.likPair[f] = next(), next()
		}
	}
	b.likMask = next()
	return b
}

// batchInputs returns the batch's tensors in graph-input order (present
// families only). Targets are passed separately.
func batchInputs(b *arch.Batch, p presence) []any {
	B, d, np := b.B, b.D, b.NPad
	var out []any
	for f := range arch.PriorFamilies {
		if p.prior(f) {
			out = append(out,
				tensors.FromFlatDataAndDimensions(b.PriorNode[f], B, d, arch.PriorNodeWidth[f]),
				tensors.FromFlatDataAndDimensions(b.PriorPair[f], B, d, d, arch.PriorPairWidth[f]))
		}
	}
	out = append(out, tensors.FromFlatDataAndDimensions(b.PriorMask, B, len(arch.PriorFamilies)))
	for f := range arch.LikFamilies {
		if p.lik(f) {
			out = append(out,
				tensors.FromFlatDataAndDimensions(b.LikNode[f], B, np, d, arch.LikNodeWidth[f]),
				tensors.FromFlatDataAndDimensions(b.LikPair[f], B, np, d, d, arch.LikPairWidth[f]))
		}
	}
	return append(out, tensors.FromFlatDataAndDimensions(b.LikMask, B, np, len(arch.LikFamilies)))
}

// newBackend returns the GoMLX backend of a GOMLX_BACKEND value, or the
// pure Go one for "" (GoMLX's default would try to download XLA). The
// pure Go backend runs ops sequentially: its parallel op scheduler can
// deadlock with its parallel matmul when few cores are available
// (observed with GOMAXPROCS=2), and matmuls still use all cores.
func newBackend(cfg string) (backends.Backend, error) {
	if cfg == "" || cfg == "go" {
		cfg = "go:ops_sequential"
	}
	return newBackendFrom(cfg)
}

// newBackendFrom turns GoMLX's panics on a bad configuration (an unknown
// backend, a plugin that does not load) into an error naming it.
func newBackendFrom(cfg string) (be backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("GOMLX_BACKEND=%q: %v (builds without the xla tag have only the pure Go backend, \"go\")", cfg, r)
		}
	}()
	return backends.NewWithConfig(cfg)
}

// Engine compiles and runs the network graphs for one configuration: one
// executor (one compiled program) per graph kind, present families and
// input shape, least recently used ones freed beyond maxExec.
type Engine struct {
	cfg          arch.Config
	decl         *arch.Network  // the graphs' parameters, in decl.Tensors() order
	params       []*arch.Tensor // decl.Tensors(); their Data is not read by the graphs
	backend      backends.Backend
	unfactorised bool

	mu      sync.Mutex
	execs   map[execKey]*execEntry
	maxExec int // compiled programs kept; least recently used beyond are freed
	tick    int
	// compiles counts the programs built so far: on XLA each is a
	// compilation, so a training run whose count keeps rising is
	// recompiling (N bucketing should bound it).
	compiles int
}

// execKey names one compiled program: graph kind, present families and
// the input sizes (batch, d, padded N, extra leading size).
type execKey struct {
	kind          string
	p             presence
	b, d, np, ext int
}

type execEntry struct {
	x    *graph.Exec
	used int
}

// New returns the engine of a configuration on a GoMLX backend, named as
// GOMLX_BACKEND names it ("" or "go": the pure Go backend).
func New(cfg arch.Config, backend string) (*Engine, error) {
	return newEngine(cfg, false, backend)
}

func newEngine(cfg arch.Config, unfactorised bool, backend string) (*Engine, error) {
	decl, err := arch.New(cfg)
	if err != nil {
		return nil, err
	}
	be, err := newBackend(backend)
	if err != nil {
		return nil, fmt.Errorf("afin: GoMLX backend: %w", err)
	}
	return &Engine{cfg: cfg, decl: decl, params: decl.Tensors(), backend: be, unfactorised: unfactorised,
		execs: map[execKey]*execEntry{}, maxExec: 64}, nil
}

// exec returns the executor of one program. Its inputs are the
// parameters, the batch tensors and then the kind's extra inputs. Each
// (d, N bucket, families) shape is its own program; a training run meets
// hundreds, so only the most recently used maxExec stay compiled.
func (e *Engine) exec(key execKey) (*graph.Exec, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tick++
	if x, ok := e.execs[key]; ok {
		x.used = e.tick
		return x.x, nil
	}
	if len(e.execs) >= e.maxExec {
		var oldest execKey
		first := true
		for k, v := range e.execs {
			if first || v.used < e.execs[oldest].used {
				oldest, first = k, false
			}
		}
		e.execs[oldest].x.Finalize()
		delete(e.execs, oldest)
	}
	kind, p := key.kind, key.p
	np := len(e.params)
	nb := 2*(bits(uint16(p)&0xff)+bits(uint16(p)>>8)) + 2
	e.compiles++
	x, err := graph.NewExec(e.backend, func(in []*graph.Node) []*graph.Node {
		pn := in[:np]
		n := newNet(e.decl, pn)
		n.unfactorised = e.unfactorised
		n.grad = strings.HasSuffix(kind, "_loss")
		bn := splitBatchNodes(in[np:np+nb], p)
		extra := in[np+nb:]
		P, X := n.embed(bn)
		switch kind {
		case "gaussian":
			mu, lam := n.gaussianDecoder(P, X)
			return []*graph.Node{mu, lam}
		case "gaussian_loss":
			mu, lam := n.gaussianDecoder(P, X)
			lq := gaussLogQ(mu, lam, extra[0])
			return lossOutputs(lq, X.Shape().Dimensions[1], pn)
		case "flow_loss":
			z := graph.InsertAxes(extra[0], 1)
			lq, _ := n.flowDensity(n.flowContext(P, X), z, extra[1])
			return lossOutputs(graph.Reshape(lq, lq.Shape().Dimensions[0]), X.Shape().Dimensions[1], pn)
		case "flow_sample":
			z, lq := n.flowSample(n.flowContext(P, X), extra[0], extra[1])
			return []*graph.Node{z, lq}
		case "flow_density":
			lq, base := n.flowDensity(n.flowContext(P, X), extra[0], extra[1])
			return []*graph.Node{lq, base}
		}
		panic("afin: unknown graph kind " + kind)
	})
	if err != nil {
		return nil, err
	}
	e.execs[key] = &execEntry{x: x, used: e.tick}
	return x, nil
}

func bits(v uint16) int {
	n := 0
	for ; v != 0; v &= v - 1 {
		n++
	}
	return n
}

// lossOutputs are [mean −log q/d, log q per task, gradients...].
func lossOutputs(lq *graph.Node, d int, params []*graph.Node) []*graph.Node {
	loss := graph.Neg(graph.DivScalar(graph.ReduceAllMean(lq), float64(d)))
	return append([]*graph.Node{loss, lq}, graph.Gradient(loss, params...)...)
}

// Weights returns data as device tensors in the order of the engine's
// parameters, the form the passes take their weights in.
func (e *Engine) Weights(data [][]float32) []any {
	out := make([]any, len(e.params))
	for i, p := range e.params {
		out[i] = tensors.FromFlatDataAndDimensions(data[i], p.Shape...)
	}
	return out
}

func finalize(ts []*tensors.Tensor) {
	for _, t := range ts {
		t.FinalizeAll()
	}
}

// run executes a graph kind on a batch plus extra inputs.
func (e *Engine) run(kind string, w []any, b *arch.Batch, extra ...any) ([]*tensors.Tensor, error) {
	p := batchPresence(b)
	in := batchInputs(b, p)
	key := execKey{kind: kind, p: p, b: b.B, d: b.D, np: b.NPad}
	if len(extra) > 0 {
		if t, ok := extra[0].(*tensors.Tensor); ok && t.Rank() == 3 {
			key.ext = t.Shape().Dimensions[1] // draws per task
		}
	}
	x, err := e.exec(key)
	if err != nil {
		return nil, err
	}
	args := append(append(append([]any{}, w...), in...), extra...)
	out, err := x.Exec(args...)
	// Free the per-call input buffers now rather than at garbage
	// collection: a training run otherwise accumulates gigabytes.
	for _, a := range append(in, extra...) {
		if t, ok := a.(*tensors.Tensor); ok {
			t.FinalizeAll()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("afin: %s pass: %w", kind, err)
	}
	return out, nil
}

// Forward returns μ (B×d) and Λ (B×d×d) for a batch under the given
// weights (Gaussian decoder).
func (e *Engine) Forward(w []any, b *arch.Batch) (mu, lam []float32, err error) {
	if e.cfg.Decoder != "gaussian" {
		return nil, nil, fmt.Errorf("afin: checkpoint has a %s decoder, not a Gaussian one", e.cfg.Decoder)
	}
	out, err := e.run("gaussian", w, b)
	if err != nil {
		return nil, nil, err
	}
	defer finalize(out)
	return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1]), nil
}

// LossGrad returns the mean loss −log q(z)/d, the per-task log q and the
// gradients with respect to every parameter. strength is the flow's
// strength (ignored by the Gaussian decoder).
func (e *Engine) LossGrad(w []any, b *arch.Batch, strength float32) (loss float64, logq []float32, grads [][]float32, err error) {
	if b.Z == nil {
		return 0, nil, nil, fmt.Errorf("afin: batch has no targets")
	}
	z := tensors.FromFlatDataAndDimensions(b.Z, b.B, b.D)
	var out []*tensors.Tensor
	if e.cfg.Decoder == "flow" {
		out, err = e.run("flow_loss", w, b, z, tensors.FromScalar(strength))
	} else {
		out, err = e.run("gaussian_loss", w, b, z)
	}
	if err != nil {
		return 0, nil, nil, err
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

// FlowSample maps base draws eps (B×S×d) through each task's flow:
// z (B×S×d) and log q(z) (B×S).
func (e *Engine) FlowSample(w []any, b *arch.Batch, eps []float32, s int, strength float32) (z, logq []float32, err error) {
	out, err := e.run("flow_sample", w, b, tensors.FromFlatDataAndDimensions(eps, b.B, s, b.D), tensors.FromScalar(strength))
	if err != nil {
		return nil, nil, err
	}
	defer finalize(out)
	return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1]), nil
}

// FlowDensity evaluates log q at z (B×S×d) and returns the base points.
func (e *Engine) FlowDensity(w []any, b *arch.Batch, z []float32, s int, strength float32) (logq, base []float32, err error) {
	out, err := e.run("flow_density", w, b, tensors.FromFlatDataAndDimensions(z, b.B, s, b.D), tensors.FromScalar(strength))
	if err != nil {
		return nil, nil, err
	}
	defer finalize(out)
	return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1]), nil
}

// Release frees weight tensors now rather than at garbage collection (a
// training run binds new weights every step).
func Release(w []any) {
	for _, t := range w {
		if t, ok := t.(*tensors.Tensor); ok {
			t.FinalizeAll()
		}
	}
}

// Compiles is the number of programs compiled so far.
func (e *Engine) Compiles() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.compiles
}
