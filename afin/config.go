package afin

import (
	"context"
	"sort"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/engine"
	"github.com/afin-bench/afin/factor"
)

// Config fixes the architecture; it is declared in package arch, which
// every implementation of the network shares.
type Config = arch.Config

// Param is one named trainable tensor of the declaration (arch.Tensor).
type Param = arch.Tensor

// EngineChoice names the implementation that runs the network (see
// package engine); the zero value is the native one.
type EngineChoice = engine.Choice

// Batch is the network input for tasks sharing d (arch.Batch).
type Batch = arch.Batch

// SmallConfig is the configuration trainable on two CPU cores.
func SmallConfig(decoder string) Config { return arch.SmallConfig(decoder) }

// ConfigByName returns a named configuration ("small" or "paper").
func ConfigByName(name, decoder string) (Config, error) { return arch.ConfigByName(name, decoder) }

// NewBatch builds the network input (see arch.NewBatch).
func NewBatch(ctx context.Context, tasks []*factor.Task, nPad int, z [][]float64) (*Batch, error) {
	return arch.NewBatch(ctx, tasks, nPad, z)
}

// CountParams returns the total number of trainable scalars and the
// breakdown by top-level module.
func CountParams(c Config) (int, map[string]int) { return arch.MustNew(c).Count() }

// ModuleOrder lists module names in a stable order for printing.
func ModuleOrder(m map[string]int) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
