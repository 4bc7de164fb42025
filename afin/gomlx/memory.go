package gomlx

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
)

// The memory plan: the GoMLX twin of cpu.PredictPeakBytes. A program's
// peak is modelled from its own graph, as a sequential executor would
// need it: nodes run one at a time in graph order, each output is
// allocated when its node runs and freed after its last consumer, the
// inputs (weights, batch) live throughout and the outputs to the end.
// For a training graph the peak falls where the backward starts, with
// every activation the gradient reads still live. XLA fuses elementwise
// chains and reorders to lower the peak, so on a GPU the model errs
// high; deploy/gpu/bench.sh reports it beside the measured peak.

// PredictBytes is the modelled peak (bytes) of one run of a padded
// Gaussian program of kind "gaussian" or "gaussian_loss" over b tasks at
// the bucket of (d, n).
func (e *Engine) PredictBytes(kind string, b, d, n int) (int64, error) {
	return e.predict(execKey{kind: kind, p: allFamilies, b: b, d: BucketD(d), np: BucketN(n), masked: true})
}

func (e *Engine) predict(key execKey) (int64, error) {
	pc, err := e.census(key)
	return pc.PeakBytes, err
}

// buildOn builds a program's graph in g, on parameters of its input
// shapes, without compiling it: what the memory plan and tests read.
func (e *Engine) buildOn(g *graph.Graph, key execKey) []*graph.Node {
	var in []*graph.Node
	for i, s := range e.inputShapes(key) {
		in = append(in, graph.Parameter(g, fmt.Sprintf("in%d", i), s))
	}
	return e.build(key, in)
}

// livePeak is the largest sum of live output bytes over a sequential run
// of nodes (in graph order) with the given outputs. Nodes no output
// depends on are left out, as every backend leaves them unrun (GoMLX's
// autodiff builds some: the adjoints that reach a gradient stop).
func livePeak(nodes, outputs []*graph.Node) int64 {
	used := make([]bool, len(nodes))
	for _, o := range outputs {
		used[o.Id()] = true
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if used[i] {
			for _, x := range nodes[i].Inputs() {
				used[x.Id()] = true
			}
		}
	}
	last := make([]int, len(nodes)) // index of the last consumer; len = never freed
	size := make([]int64, len(nodes))
	for i, nd := range nodes {
		last[i] = i
		if !used[i] {
			continue
		}
		if nd.NumOutputs() == 1 {
			size[i] = int64(nd.Shape().Memory())
		}
		for _, x := range nd.Inputs() {
			last[x.Id()] = max(last[x.Id()], i)
		}
	}
	for _, o := range outputs {
		last[o.Id()] = len(nodes)
	}
	free := make([]int64, len(nodes)+1) // bytes freed after node i runs
	var live, peak int64
	for i, nd := range nodes {
		if nd.Type() == graph.NodeTypeParameter {
			last[i] = len(nodes)
		}
		live += size[i]
		peak = max(peak, live)
		free[last[i]] += size[i]
		live -= free[i]
	}
	return peak
}

// plan is a bucket's chunk: the largest batch bucket whose modelled peak
// fits the budget (at least one task), or maxChunk without a budget. The
// model is linear in the tasks (every activation has a task axis), so it
// is built at one and two tasks and extended; it is kept for the note a
// new program gets (exec).
func (e *Engine) plan(pk planKey) (int, error) {
	if e.budget <= 0 {
		return maxChunk, nil
	}
	key := execKey{kind: pk.kind, p: allFamilies, b: 1, d: pk.d, np: pk.np, masked: true}
	one, err := e.predict(key)
	if err != nil {
		return 0, fmt.Errorf("afin: memory plan of %s (d=%d, N=%d): %w", pk.kind, pk.d, pk.np, err)
	}
	key.b = 2
	two, err := e.predict(key)
	if err != nil {
		return 0, fmt.Errorf("afin: memory plan of %s (d=%d, N=%d): %w", pk.kind, pk.d, pk.np, err)
	}
	m := linearModel{fixed: 2*one - two, per: two - one}
	e.mu.Lock()
	e.models[pk] = m
	e.mu.Unlock()
	c := 1
	for _, b := range batchBuckets {
		if m.peak(b) <= e.budget {
			c = b
		}
	}
	return c, nil
}

// linearModel is a bucket's modelled peak as fixed + per·tasks (bytes).
type linearModel struct{ fixed, per int64 }

func (m linearModel) peak(tasks int) int64 { return m.fixed + int64(tasks)*m.per }
