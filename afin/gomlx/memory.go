package gomlx

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
)

// The memory plan: the GoMLX twin of cpu.PredictPeakBytes. A pass's peak
// is modelled from its programs' own graphs, as a sequential executor
// would need them: nodes run one at a time in graph order, each output is
// allocated when its node runs and freed after its last consumer, a
// program's inputs live throughout and its outputs to its end. A pass
// adds to its largest program's peak what lives outside that program:
// every weight, in training every gradient sum, and the boundaries the
// backward will read (each body block's input tokens, held until its
// backward). XLA fuses elementwise chains and reorders to lower a
// program's peak, so on a GPU the model errs high; deploy/gpu/bench.sh
// reports it beside the measured peak. So: a pass's peak is every weight
// (and in training the gradient sums, twice), the chunk's inputs, the token
// sets held (two in a forward; in training each block's input, the
// head's and an adjoint), and the largest scratch of one program (its
// modelled peak less its inputs).

// PredictBytes is the modelled peak (bytes) of one chunk of b tasks of a
// Gaussian pass of kind "gaussian" (inference) or "gaussian_loss"
// (training) at the bucket of (d, n).
func (e *Engine) PredictBytes(kind string, b, d, n int) (int64, error) {
	return e.predict(planKey{kind: kind, d: BucketD(d), np: BucketN(n)}, b)
}

// training reports whether a pass kind takes gradients.
func training(kind string) bool { return kind == "gaussian_loss" || kind == "flow_loss" }

// passPrograms are the programs a pass runs at chunk b: each body
// block's forward (and, training, backward), then its head.
func (e *Engine) passPrograms(pk planKey, b int) []progKey {
	ps := progShape{b: b, d: pk.d, np: pk.np}
	lowp := training(pk.kind) && e.precision == "bf16"
	var out []progKey
	seen := map[string]bool{}
	for _, st := range e.body() {
		if seen[st.block] {
			continue
		}
		seen[st.block] = true
		out = append(out, progKey{block: st.block, dir: forwardPass, ps: ps, lowp: lowp})
		if training(pk.kind) {
			out = append(out, progKey{block: st.block, dir: backwardPass, ps: ps, lowp: lowp})
		}
	}
	head := progKey{block: pk.kind, dir: forwardPass, ps: ps}
	switch pk.kind {
	case "gaussian":
		head.block = "gaussian_decoder"
	case "gaussian_loss", "flow_loss":
		head.dir = backwardPass
	default:
		head.ps.s = pk.s
	}
	return append(out, head)
}

func (e *Engine) predict(pk planKey, b int) (int64, error) {
	be, err := newBackend("")
	if err != nil {
		return 0, err
	}
	defer be.Finalize()
	var scratch int64
	aux := map[slot]bool{}
	for _, k := range e.passPrograms(pk, b) {
		pc, err := e.censusOn(be, k)
		if err != nil {
			return 0, fmt.Errorf("afin: memory plan of %s: %w", k, err)
		}
		var in int64
		for _, s := range e.programInputs(k) {
			in += int64(s.Memory())
		}
		scratch = max(scratch, pc.PeakBytes-in)
		for _, s := range e.blocks[k.block].aux {
			aux[s] = true
		}
	}
	ps := progShape{b: b, d: pk.d, np: pk.np, s: pk.s}
	var weights, env int64
	for _, p := range e.params {
		weights += 4 * int64(p.Size())
	}
	for s := range aux {
		env += int64(e.slotShape(s, ps).Memory())
	}
	tokens := int64(e.slotShape(slotP, ps).Memory() + e.slotShape(slotX, ps).Memory())
	held := int64(2) // a block's input and output tokens
	if training(pk.kind) {
		held = int64(len(e.body()) + 1) // every block's input, the head's and an adjoint
		weights *= 3                    // and the gradient sums, a chunk's old and new (chunkSums)
	}
	return weights + env + held*tokens + scratch, nil
}

// buildOn builds a program's graph in g, on parameters of its input
// shapes, without compiling it: what the memory plan and the census read.
func (e *Engine) buildOn(g *graph.Graph, k progKey) []*graph.Node {
	var in []*graph.Node
	for i, s := range e.programInputs(k) {
		in = append(in, graph.Parameter(g, fmt.Sprintf("in%d", i), s))
	}
	return e.buildProgram(k, in)
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

// plan is a pass's chunk: the largest batch bucket whose modelled peak
// fits the budget (at least one task), or maxChunk without a budget. The
// model is linear in the tasks (every activation has a task axis), so it
// is built at one and two tasks and extended; it is kept for the note a
// pass gives (note).
func (e *Engine) plan(pk planKey) (int, error) {
	if e.budget <= 0 {
		return maxChunk, nil
	}
	one, err := e.predict(pk, 1)
	if err != nil {
		return 0, err
	}
	two, err := e.predict(pk, 2)
	if err != nil {
		return 0, err
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
