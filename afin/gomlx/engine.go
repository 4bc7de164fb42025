package gomlx

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Engine compiles and runs the network graphs for one configuration: one
// executor (one compiled program) per graph kind, present families and
// input shape. Gaussian passes are padded to the bounded shapes of
// shapes.go and split into chunks that the memory plan (memory.go) says
// fit the budget, so a whole training run compiles a fixed, small set of
// programs and keeps every one.
type Engine struct {
	cfg          arch.Config
	decl         *arch.Network  // the graphs' parameters, in decl.Tensors() order
	params       []*arch.Tensor // decl.Tensors(); their Data is not read by the graphs
	backend      compute.Backend
	unfactorised bool
	precision    string // "fp32" or "bf16" (see SetPrecision)

	// remat recomputes encoder layers and merge blocks in the backward of
	// training graphs (remat.go).
	remat bool
	// budget is the device memory a program may plan for (bytes); 0
	// plans nothing (whole batches up to maxChunk).
	budget int64
	// Notes, when set, receives one line for each event a user should
	// know of (a chunk halved after the device ran out of memory).
	Notes func(string)

	mu         sync.Mutex
	execs      map[execKey]*graph.Exec
	done       map[execKey]bool // compiled
	chunks     map[planKey]int  // tasks per program run, by kind and bucket
	models     map[planKey]linearModel
	compiles   int
	compileSec float64
	retries    int
}

// execKey names one compiled program: graph kind, present families, the
// input sizes (batch, d, padded N, extra leading size) and whether the
// latent coordinates are padded (masked).
type execKey struct {
	kind          string
	p             presence
	b, d, np, ext int
	masked        bool
}

// planKey names a bucket's chunk size.
type planKey struct {
	kind  string
	d, np int
}

// allFamilies is the presence of a padded program: every family's
// adapter is built, so a program serves any mixture of families.
const allFamilies presence = 0x0f | 0x1f<<8

// maxChunk is the most tasks one program run takes.
const maxChunk = 512

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
		precision: "fp32", execs: map[execKey]*graph.Exec{}, done: map[execKey]bool{}, chunks: map[planKey]int{}, models: map[planKey]linearModel{}}, nil
}

// SetBudget sets the device memory (bytes) the memory plan fits each
// program run into; 0 plans nothing. Set it before the first pass.
func (e *Engine) SetBudget(bytes int64) { e.budget = bytes }

// SetRemat turns rematerialisation on or off for training graphs: less
// memory for the backward (the plan fits larger chunks) for about a
// third more arithmetic. Set it before the first pass.
func (e *Engine) SetRemat(on bool) { e.remat = on }

// SetPrecision chooses the training graphs' arithmetic: "fp32", or
// "bf16" (activations and products in bfloat16 from float32 master
// weights; the decoder, the loss and every gradient leave in float32).
// Inference and the fidelity check always run in float32.
func (e *Engine) SetPrecision(p string) error {
	switch p {
	case "fp32", "bf16":
		e.precision = p
		return nil
	}
	return fmt.Errorf("afin: precision %q: want fp32 or bf16", p)
}

// exec returns the executor of one program (its first run compiles it).
func (e *Engine) exec(key execKey) (*graph.Exec, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.execs[key]; ok {
		return x, nil
	}
	x, err := graph.NewExec(e.backend, func(in []*graph.Node) []*graph.Node { return e.build(key, in) })
	if err != nil {
		return nil, fmt.Errorf("afin: %s program: %w", key.kind, err)
	}
	e.execs[key] = x
	if m, ok := e.models[planKey{kind: key.kind, d: key.d, np: key.np}]; ok && e.Notes != nil {
		// deploy/gpu/bench.sh sets this line beside XLA's own figure.
		e.Notes(fmt.Sprintf("memory plan: %s program (d=%d, N=%d, %d tasks a run): modelled peak %d bytes (%.2f GiB of the %.2f GiB budget)",
			key.kind, key.d, key.np, key.b, m.peak(key.b), float64(m.peak(key.b))/(1<<30), float64(e.budget)/(1<<30)))
	}
	return x, nil
}

// build is the graph of one program over its inputs: the parameters,
// the batch tensors, then (masked) the coordinate mask and counts, then
// the kind's extra inputs.
func (e *Engine) build(key execKey, in []*graph.Node) []*graph.Node {
	np := len(e.params)
	pn := in[:np]
	nb := 2*(bits(uint16(key.p)&0xff)+bits(uint16(key.p)>>8)) + 2
	bnodes := in[np : np+nb]
	extra := in[np+nb:]
	lowp := key.masked && strings.HasSuffix(key.kind, "_loss") && e.precision == "bf16"
	if lowp {
		pn, bnodes = toBF16(pn), toBF16(bnodes)
	}
	n := newNet(e.decl, pn)
	n.unfactorised = e.unfactorised
	n.grad = strings.HasSuffix(key.kind, "_loss")
	n.rematerialise = e.remat
	if key.masked {
		m, dr := extra[0], extra[1]
		if lowp {
			m, dr = graph.ConvertDType(m, bf16), graph.ConvertDType(dr, bf16)
		}
		n.coords = &coords{m: m, dr: dr}
		extra = extra[2:]
	}
	bn := splitBatchNodes(bnodes, key.p)
	P, X := n.embed(bn)
	if lowp { // the decoder and the loss in float32, from the master weights
		n = n.float32From(in[:np])
		P, X = graph.ConvertDType(P, f32), graph.ConvertDType(X, f32)
	}
	switch key.kind {
	case "gaussian":
		mu, lam := n.gaussianDecoder(P, X)
		return []*graph.Node{mu, lam}
	case "gaussian_loss":
		mu, lam := n.gaussianDecoder(P, X)
		lq := n.gaussLogQ(mu, lam, extra[0])
		if key.masked {
			return weightedLossOutputs(lq, n.coords.dr, extra[1], in[:np])
		}
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
	panic("afin: unknown graph kind " + key.kind)
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

// weightedLossOutputs are [Σ w·(−log q/d), log q per task, gradients...]
// with each task's own d: a chunk's share of a batch's mean loss when w
// is 1/B on real tasks and 0 on padding.
func weightedLossOutputs(lq, dr, w *graph.Node, params []*graph.Node) []*graph.Node {
	loss := graph.Neg(graph.ReduceAllSum(graph.Mul(w, graph.Div(lq, dr))))
	return append([]*graph.Node{loss, lq}, graph.Gradient(loss, params...)...)
}

// inputShapes are a program's input shapes, in build's order.
func (e *Engine) inputShapes(key execKey) []shapes.Shape {
	var out []shapes.Shape
	for _, p := range e.params {
		out = append(out, shapes.Make(f32, p.Shape...))
	}
	B, d, np := key.b, key.d, key.np
	for f := range arch.PriorFamilies {
		if key.p.prior(f) {
			out = append(out, shapes.Make(f32, B, d, arch.PriorNodeWidth[f]), shapes.Make(f32, B, d, d, arch.PriorPairWidth[f]))
		}
	}
	out = append(out, shapes.Make(f32, B, len(arch.PriorFamilies)))
	for f := range arch.LikFamilies {
		if key.p.lik(f) {
			out = append(out, shapes.Make(f32, B, np, d, arch.LikNodeWidth[f]), shapes.Make(f32, B, np, d, d, arch.LikPairWidth[f]))
		}
	}
	out = append(out, shapes.Make(f32, B, np, len(arch.LikFamilies)))
	if key.masked {
		out = append(out, shapes.Make(f32, B, d), shapes.Make(f32, B))
	}
	switch key.kind {
	case "gaussian_loss":
		out = append(out, shapes.Make(f32, B, d))
		if key.masked {
			out = append(out, shapes.Make(f32, B))
		}
	case "flow_loss":
		out = append(out, shapes.Make(f32, B, d), shapes.Make(f32))
	case "flow_sample", "flow_density":
		out = append(out, shapes.Make(f32, B, key.ext, d), shapes.Make(f32))
	}
	return out
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

// call runs a program on its arguments. A program's first call compiles
// it (timed apart, so compile seconds are known); the per-call inputs
// are freed at once rather than at garbage collection. A compile cannot
// be stopped, so when ctx ends during one, call returns at once and
// leaves the compile to finish unused (XLA takes minutes on a large
// program: the process should not wait for it to exit).
func (e *Engine) call(ctx context.Context, key execKey, w []any, in []any) ([]*tensors.Tensor, error) {
	abandoned := false // a compile left running still reads the inputs
	defer func() {
		if abandoned {
			return
		}
		for _, a := range in {
			if t, ok := a.(*tensors.Tensor); ok {
				t.FinalizeAll()
			}
		}
	}()
	x, err := e.exec(key)
	if err != nil {
		return nil, err
	}
	args := append(append([]any{}, w...), in...)
	if err := untilDone(ctx, func() error { return e.precompile(key, x, args) }); err != nil {
		if ctx.Err() != nil {
			abandoned = true
			return nil, err
		}
		return nil, fmt.Errorf("afin: %s program (d=%d, N=%d, %d tasks): %w", key.kind, key.d, key.np, key.b, err)
	}
	out, err := x.Call(args...)
	if err != nil {
		return nil, fmt.Errorf("afin: %s pass (d=%d, N=%d, %d tasks): %w", key.kind, key.d, key.np, key.b, err)
	}
	return out, nil
}

// precompile compiles x for args' shapes unless it has been, counting
// the program and its seconds.
func (e *Engine) precompile(key execKey, x *graph.Exec, args []any) error {
	e.mu.Lock()
	done := e.done[key]
	e.mu.Unlock()
	if done {
		return nil
	}
	t0 := time.Now()
	if err := catch(func() error {
		shs := make([]shapes.Shape, len(args))
		for i, a := range args {
			shs[i] = a.(*tensors.Tensor).Shape()
		}
		_, err := x.Compile(shs...)
		return err
	}); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done[key] {
		e.compiles++
		e.compileSec += time.Since(t0).Seconds()
		e.done[key] = true
	}
	return nil
}

// untilDone runs f and returns its error, or ctx's as soon as ctx ends
// (f then runs on, its result unused).
func untilDone(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// catch turns a GoMLX panic (its way of failing a build or compile) into
// an error.
func catch(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return f()
}

// Compiles is the number of programs compiled so far.
func (e *Engine) Compiles() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.compiles
}

// CompileSeconds is the wall time spent compiling programs so far.
func (e *Engine) CompileSeconds() float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.compileSec
}

// Retries is the number of program runs redone with half the chunk after
// the device ran out of memory.
func (e *Engine) Retries() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.retries
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

// outOfMemory reports whether err is the device refusing an allocation.
func outOfMemory(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "resource_exhausted") || strings.Contains(s, "out of memory")
}

// CompileAhead compiles the Gaussian training programs of every (d, N)
// bucket up to (dMax, nMax) for batches of tasks tasks, workers at a
// time, and returns how many it compiled. When ctx ends it starts no
// more and returns at once; compiles in flight finish unused.
func (e *Engine) CompileAhead(ctx context.Context, dMax, nMax, tasks, workers int) (int, error) {
	var keys []execKey
	for _, b := range Buckets(dMax, nMax) {
		c, err := e.chunkFor("gaussian_loss", b[0], b[1], tasks)
		if err != nil {
			return 0, err
		}
		keys = append(keys, execKey{kind: "gaussian_loss", p: allFamilies, b: c, d: b[0], np: b[1], masked: true})
	}
	sem := make(chan struct{}, max(workers, 1))
	errs := make(chan error, len(keys))
	var wg sync.WaitGroup
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if ctx.Err() != nil {
				return
			}
			args := make([]any, 0, len(e.params)+16)
			for _, s := range e.inputShapes(key) {
				args = append(args, tensors.FromShape(s))
			}
			x, err := e.exec(key)
			if err == nil {
				err = e.precompile(key, x, args)
			}
			if err != nil {
				errs <- fmt.Errorf("afin: compiling %s (d=%d, N=%d, %d tasks): %w", key.kind, key.d, key.np, key.b, err)
			}
		}()
	}
	// Cancelled, it returns without waiting for the compiles in flight.
	if err := untilDone(ctx, func() error { wg.Wait(); return nil }); err != nil {
		return 0, err
	}
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return len(keys), nil
}
