package gomlx

import (
	"fmt"

	"github.com/gomlx/compute"

	"github.com/gomlx/gomlx/core/graph"
)

// ProgramCensus is one block program a training run would compile, as built
// (never compiled) on the Go backend: what a CPU can show of what XLA
// will compile on a GPU, whose compile time grows with the nodes and,
// most, with the matrix products (each a library call or a generated
// kernel that XLA autotunes).
type ProgramCensus struct {
	Program string `json:"program"`
	// Program is the block and pass ("merge_block backward"); D and N
	// are the bucket's padded latent dimension and site count; Tasks is
	// its chunk (tasks per program run).
	D     int `json:"d"`
	N     int `json:"n"`
	Tasks int `json:"tasks"`
	// Nodes counts the graph's GoMLX nodes, MatrixProducts its
	// DotGeneral nodes.
	Nodes          int `json:"nodes"`
	MatrixProducts int `json:"matrix_products"`
	// PeakBytes is the modelled peak of one run of the program alone
	// (memory.go); Runs is how many times a pass runs it (the layers
	// that share it).
	PeakBytes int64 `json:"peak_bytes"`
	Runs      int   `json:"runs"`
}

// Census lists the training programs a run over d ≤ dMax and N ≤ nMax
// in micro-batches of tasks tasks would compile (the programs
// CompileAhead compiles), each at the chunk the memory plan gives its
// pass under the engine's budget and precision: for every (d, N) bucket,
// each body block's forward and backward and the loss head's backward.
// The flow decoder's programs run at each exact d ≤ dMax.
func (e *Engine) Census(dMax, nMax, tasks int) ([]ProgramCensus, error) {
	be, err := newBackend("")
	if err != nil {
		return nil, err
	}
	defer be.Finalize()
	var out []ProgramCensus
	for _, pk := range e.trainingPasses(dMax, nMax) {
		ks, err := e.trainingPrograms(pk, tasks)
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			pc, err := e.censusOn(be, k)
			if err != nil {
				return nil, fmt.Errorf("afin: census of %s: %w", k, err)
			}
			out = append(out, pc)
		}
	}
	return out, nil
}

// censusOn builds one program's graph on backend be and counts it.
func (e *Engine) censusOn(be compute.Backend, k progKey) (pc ProgramCensus, err error) {
	pc = ProgramCensus{Program: k.block + " " + k.dir.String(), D: k.ps.d, N: k.ps.np, Tasks: k.ps.b}
	for _, st := range e.body() {
		if st.block == k.block {
			pc.Runs++
		}
	}
	pc.Runs = max(pc.Runs, 1)
	err = catch(func() error {
		g := graph.NewGraph(be, "census")
		defer g.Finalize()
		outs := e.buildOn(g, k)
		for _, nd := range g.Nodes() {
			pc.Nodes++
			if nd.Type() == graph.NodeTypeDotGeneral {
				pc.MatrixProducts++
			}
		}
		pc.PeakBytes = livePeak(g.Nodes(), outs)
		return nil
	})
	return pc, err
}
