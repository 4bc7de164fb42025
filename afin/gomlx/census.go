package gomlx

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
)

// ProgramCensus is one program a training run would compile, as built
// (never compiled) on the Go backend: what a CPU can show of what XLA
// will compile on a GPU, whose compile time grows with the nodes and,
// most, with the matrix products (each a library call or a generated
// kernel that XLA autotunes).
type ProgramCensus struct {
	Program string `json:"program"`
	// D and N are the bucket's padded latent dimension and site count;
	// Tasks is its chunk (tasks per program run).
	D     int `json:"d"`
	N     int `json:"n"`
	Tasks int `json:"tasks"`
	// Nodes counts the graph's GoMLX nodes, MatrixProducts its
	// DotGeneral nodes.
	Nodes          int `json:"nodes"`
	MatrixProducts int `json:"matrix_products"`
	// PeakBytes is the memory plan's modelled peak of one run (memory.go).
	PeakBytes int64 `json:"peak_bytes"`
}

// Census lists the Gaussian training programs a run over d ≤ dMax and
// N ≤ nMax in micro-batches of tasks tasks would compile (the programs
// CompileAhead compiles), each at the chunk the memory plan gives it
// under the engine's budget, precision and rematerialisation.
func (e *Engine) Census(dMax, nMax, tasks int) ([]ProgramCensus, error) {
	const kind = "gaussian_loss"
	var out []ProgramCensus
	for _, b := range Buckets(dMax, nMax) {
		c, err := e.chunkFor(kind, b[0], b[1], tasks)
		if err != nil {
			return nil, err
		}
		pc, err := e.census(execKey{kind: kind, p: allFamilies, b: c, d: b[0], np: b[1], masked: true})
		if err != nil {
			return nil, fmt.Errorf("afin: census of %s (d=%d, N=%d, %d tasks): %w", kind, b[0], b[1], c, err)
		}
		out = append(out, pc)
	}
	return out, nil
}

// census builds one program's graph and counts it.
func (e *Engine) census(key execKey) (pc ProgramCensus, err error) {
	be, err := newBackend("")
	if err != nil {
		return pc, err
	}
	defer be.Finalize()
	pc = ProgramCensus{Program: key.kind, D: key.d, N: key.np, Tasks: key.b}
	err = catch(func() error {
		g := graph.NewGraph(be, "census")
		defer g.Finalize()
		outs := e.buildOn(g, key)
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
