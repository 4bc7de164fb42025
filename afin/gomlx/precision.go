package gomlx

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
)

const (
	f32  = dtypes.Float32
	bf16 = dtypes.BFloat16
)

// toBF16 converts nodes to bfloat16. The conversion's gradient converts
// the adjoint back, so the gradients of float32 master weights leave the
// graph in float32.
func toBF16(in []*graph.Node) []*graph.Node {
	out := make([]*graph.Node, len(in))
	for i, x := range in {
		out[i] = graph.ConvertDType(x, bf16)
	}
	return out
}

// float32From is the net on the float32 master weights params, with its
// coordinate masks in float32: the decoder and the loss of a bfloat16
// training graph run on it.
func (n *net) float32From(params []*graph.Node) *net {
	m := newNet(n.decl, params)
	m.unfactorised, m.grad = n.unfactorised, n.grad
	if c := n.coords; c != nil {
		m.coords = &coords{m: graph.ConvertDType(c.m, f32), dr: graph.ConvertDType(c.dr, f32)}
	}
	return m
}
