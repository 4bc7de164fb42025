package train

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/engine"
	"github.com/afin-bench/afin/afin/gomlx"
	"github.com/afin-bench/afin/factor"
)

// configureEngine gives the run's engine its precision,
// memory budget and a line on the log for each of its notes. "tf32" is a
// setting of the backend, made by the command; the graphs stay float32.
func (tr *Trainer) configureEngine(bd *engine.Binder, o TrainOptions) error {
	if err := bd.Configure(tr.settings(o)); err != nil {
		return fmt.Errorf("afin train: %w", err)
	}
	if o.Precision == "tf32" && !bd.Native() && !strings.HasSuffix(tr.Engine.Backend, ",tf32") && tr.Log != nil {
		fmt.Fprintf(tr.Log, "afin train: precision tf32 takes effect on a CUDA backend only; on %q the products stay float32\n", tr.Engine.Backend)
	}
	return nil
}

func (tr *Trainer) settings(o TrainOptions) engine.Settings {
	s := engine.Settings{Precision: o.Precision, MemoryBudget: tr.MemoryBudget}
	if tr.Log != nil {
		s.Notes = func(line string) { fmt.Fprintf(tr.Log, "afin train: %s\n", line) }
	}
	return s
}

// compileAhead compiles the training programs of the run's support
// before the first step and says how long it took.
func (tr *Trainer) compileAhead(ctx context.Context, bd *engine.Binder, o TrainOptions) error {
	if bd.Native() || !tr.CompileAhead {
		return nil
	}
	sim := factor.SimOptions{DMin: o.DMin, DMax: o.DMax, NMin: o.NMin, NMax: o.NMax}
	_, dMax, _, nMax := sim.Support()
	t0 := time.Now()
	n, err := bd.CompileAhead(ctx, dMax, nMax, o.BatchTasks, runtime.GOMAXPROCS(0))
	if tr.Log != nil && err == nil {
		fmt.Fprintf(tr.Log, "afin train: compiled %d programs in %.1f s (%.1f s of compiling in parallel)\n", n, time.Since(t0).Seconds(), bd.Stats().CompileSeconds)
	}
	return err
}

// Census lists, without training, the block programs the run (cfg, o)
// would compile on the gomlx engine with the trainer's memory budget and
// precision (engine.Census), whichever engine it chooses: each body
// block's forward and backward and the loss head's backward, for every
// (d, N) bucket of the support (the flow decoder's at each exact d).
func (tr *Trainer) Census(cfg arch.Config, o TrainOptions) ([]gomlx.ProgramCensus, error) {
	sim := factor.SimOptions{DMin: o.DMin, DMax: o.DMax, NMin: o.NMin, NMax: o.NMax}
	_, dMax, _, nMax := sim.Support()
	return engine.Census(cfg, tr.settings(o), dMax, nMax, o.BatchTasks)
}
