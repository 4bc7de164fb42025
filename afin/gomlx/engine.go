package gomlx

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Engine compiles and runs the network's block programs (block.go) for
// one configuration and chains them on the device (chain.go). Passes are
// padded to the bounded shapes of shapes.go and split into chunks that
// the memory plan (memory.go) says fit the budget, so a whole training
// run compiles a fixed, small set of small programs and keeps every one.
type Engine struct {
	cfg          arch.Config
	decl         *arch.Network  // the programs' parameters, in decl.Tensors() order
	params       []*arch.Tensor // decl.Tensors(); their Data is not read by the programs
	backend      compute.Backend
	unfactorised bool
	precision    string // "fp32" or "bf16" (see SetPrecision)

	// blocks are the configuration's blocks by name, inst each block's
	// instances' weights (indices into params).
	blocks map[string]*block
	inst   map[string][][]int

	// budget is the device memory a pass may plan for (bytes); 0 plans
	// nothing (whole batches up to maxChunk).
	budget int64
	// Notes, when set, receives one line for each event a user should
	// know of (a chunk halved after the device ran out of memory).
	Notes func(string)

	mu         sync.Mutex
	execs      map[progKey]*graph.Exec
	done       map[progKey]bool // compiled
	chunks     map[planKey]int  // tasks per chunk, by pass and bucket
	models     map[planKey]linearModel
	noted      map[planKey]bool
	compiles   int
	compileSec float64
	retries    int
}

// planKey names a pass over one bucket: its chunk size and memory model.
type planKey struct {
	kind     string // "gaussian", "gaussian_loss", "flow_loss", "flow_sample" or "flow_density"
	d, np, s int
}

// maxChunk is the most tasks one chunk takes.
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
	blocks := []*block{adaptersBlock(), encoderLayerBlock(), mergeBlockBlock()}
	if cfg.Decoder == "flow" {
		blocks = append(blocks, flowDensityHead(), flowSampleHead(), flowLoss())
	} else {
		blocks = append(blocks, gaussianHead(), gaussianLoss())
	}
	inst, err := instanceWeights(decl, blocks)
	if err != nil {
		return nil, err
	}
	be, err := newBackend(backend)
	if err != nil {
		return nil, fmt.Errorf("afin: GoMLX backend: %w", err)
	}
	e := &Engine{cfg: cfg, decl: decl, params: decl.Tensors(), backend: be, unfactorised: unfactorised,
		precision: "fp32", blocks: map[string]*block{}, inst: inst,
		execs: map[progKey]*graph.Exec{}, done: map[progKey]bool{}, chunks: map[planKey]int{}, models: map[planKey]linearModel{}, noted: map[planKey]bool{}}
	for _, b := range blocks {
		e.blocks[b.name] = b
	}
	return e, nil
}

// SetBudget sets the device memory (bytes) the memory plan fits each
// pass's chunk into; 0 plans nothing. Set it before the first pass.
func (e *Engine) SetBudget(bytes int64) { e.budget = bytes }

// SetPrecision chooses the training passes' arithmetic: "fp32", or
// "bf16" (the adapters, encoder and merge in bfloat16 from float32 master
// weights; tokens between blocks, the head and every gradient in
// float32). Inference and the fidelity check always run in float32.
func (e *Engine) SetPrecision(p string) error {
	switch p {
	case "fp32", "bf16":
		e.precision = p
		return nil
	}
	return fmt.Errorf("afin: precision %q: want fp32 or bf16", p)
}

// exec returns the executor of one program (its first run compiles it).
func (e *Engine) exec(k progKey) (*graph.Exec, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.execs[k]; ok {
		return x, nil
	}
	x, err := graph.NewExec(e.backend, func(in []*graph.Node) []*graph.Node { return e.buildProgram(k, in) })
	if err != nil {
		return nil, fmt.Errorf("afin: %s: %w", k, err)
	}
	e.execs[k] = x
	return x, nil
}

// precompile compiles x for its program's input shapes unless it has
// been, counting the program and its seconds.
func (e *Engine) precompile(k progKey, x *graph.Exec) error {
	e.mu.Lock()
	done := e.done[k]
	e.mu.Unlock()
	if done {
		return nil
	}
	t0 := time.Now()
	if err := catch(func() error {
		_, err := x.Compile(e.programInputs(k)...)
		return err
	}); err != nil {
		return err
	}
	dt := time.Since(t0).Seconds()
	e.mu.Lock()
	first := !e.done[k]
	if first {
		e.compiles++
		e.compileSec += dt
		e.done[k] = true
	}
	notes := e.Notes
	e.mu.Unlock()
	if first && notes != nil {
		// deploy/gpu/bench.sh reads these lines for each block's compile time.
		notes(fmt.Sprintf("compiled %s in %.2f s", k, dt))
	}
	return nil
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

// trainingPasses are the training passes of a run over d ≤ dMax and N ≤
// nMax: one per (d, N) bucket, the flow decoder's at each exact d.
func (e *Engine) trainingPasses(dMax, nMax int) []planKey {
	var out []planKey
	if e.cfg.Decoder == "flow" {
		for d := 1; d <= dMax; d++ {
			for n := BucketN(1); ; n = BucketN(n + 1) {
				out = append(out, planKey{kind: "flow_loss", d: d, np: n})
				if n >= nMax {
					break
				}
			}
		}
		return out
	}
	for _, b := range Buckets(dMax, nMax) {
		out = append(out, planKey{kind: "gaussian_loss", d: b[0], np: b[1]})
	}
	return out
}

// trainingPrograms are the programs a training pass compiles at its
// planned chunk for micro-batches of tasks tasks.
func (e *Engine) trainingPrograms(pk planKey, tasks int) ([]progKey, error) {
	c, err := e.chunkFor(pk, tasks)
	if err != nil {
		return nil, err
	}
	return e.passPrograms(pk, c), nil
}

// CompileAhead compiles the training programs of every pass over d ≤
// dMax, N ≤ nMax (trainingPasses) for batches of tasks tasks, workers at a
// time, and returns how many it compiled. When ctx ends it starts no
// more and returns at once; compiles in flight finish unused.
func (e *Engine) CompileAhead(ctx context.Context, dMax, nMax, tasks, workers int) (int, error) {
	var keys []progKey
	for _, pk := range e.trainingPasses(dMax, nMax) {
		ks, err := e.trainingPrograms(pk, tasks)
		if err != nil {
			return 0, err
		}
		keys = append(keys, ks...)
	}
	sem := make(chan struct{}, max(workers, 1))
	errs := make(chan error, len(keys))
	var wg sync.WaitGroup
	for _, k := range keys {
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
			x, err := e.exec(k)
			if err == nil {
				err = e.precompile(k, x)
			}
			if err != nil {
				errs <- fmt.Errorf("afin: compiling %s: %w", k, err)
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
