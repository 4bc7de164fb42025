package gomlx

import (
	"fmt"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // the pure Go backend: works offline everywhere
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
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
func newBackend(cfg string) (compute.Backend, error) {
	if cfg == "" || cfg == "go" {
		cfg = "go:ops_sequential"
	}
	return newBackendFrom(cfg)
}

// newBackendFrom turns GoMLX's panics on a bad configuration (an unknown
// backend, a plugin that does not load) into an error naming it.
func newBackendFrom(cfg string) (be compute.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("GOMLX_BACKEND=%q: %v (builds without the xla tag have only the pure Go backend, \"go\")", cfg, r)
		}
	}()
	return compute.NewWithConfig(cfg)
}
