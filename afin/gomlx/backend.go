package gomlx

import (
	"fmt"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // the pure Go backend: works offline everywhere
	"github.com/gomlx/gomlx/core/graph"
)

// batchNodes are the adapters' inputs: each family's descriptors and
// the family masks.
type batchNodes struct {
	priorNode, priorPair []*graph.Node
	priorMask            *graph.Node
	likNode, likPair     []*graph.Node
	likMask              *graph.Node
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
