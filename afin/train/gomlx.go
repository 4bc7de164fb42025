package train

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/afin-bench/afin/afin/gomlx"
	"github.com/afin-bench/afin/factor"
)

// setUpGoMLX gives the GoMLX engine (nil on the native path) the run's
// precision, rematerialisation, memory budget and a line on the log for each of its notes.
// "tf32" is a setting of the backend, made by the command; the graphs
// stay float32.
func (tr *Trainer) setUpGoMLX(e *gomlx.Engine, o TrainOptions) error {
	if e == nil {
		if o.Precision == "bf16" || o.Precision == "tf32" {
			return fmt.Errorf("afin train: precision %s needs the gomlx engine (AFIN_ENGINE=gomlx)", o.Precision)
		}
		if tr.Remat {
			return fmt.Errorf("afin train: remat needs the gomlx engine (AFIN_ENGINE=gomlx); the native engine plans its own memory")
		}
		return nil
	}
	e.SetRemat(tr.Remat)
	if o.Precision == "bf16" {
		if err := e.SetPrecision("bf16"); err != nil {
			return err
		}
	}
	if o.Precision == "tf32" && !strings.HasSuffix(tr.Engine.Backend, ",tf32") && tr.Log != nil {
		fmt.Fprintf(tr.Log, "afin train: precision tf32 takes effect on a CUDA backend only; on %q the products stay float32\n", tr.Engine.Backend)
	}
	e.SetBudget(tr.MemoryBudget)
	if tr.Log != nil {
		e.Notes = func(s string) { fmt.Fprintf(tr.Log, "afin train: %s\n", s) }
	}
	return nil
}

// compileAhead compiles the Gaussian training programs of the run's
// support before the first step and says how long it took.
func (tr *Trainer) compileAhead(ctx context.Context, e *gomlx.Engine, o TrainOptions) error {
	if e == nil || !tr.CompileAhead {
		return nil
	}
	sim := factor.SimOptions{DMin: o.DMin, DMax: o.DMax, NMin: o.NMin, NMax: o.NMax}
	_, dMax, _, nMax := sim.Support()
	t0 := time.Now()
	n, err := e.CompileAhead(ctx, dMax, nMax, o.BatchTasks, runtime.GOMAXPROCS(0))
	if tr.Log != nil && err == nil {
		fmt.Fprintf(tr.Log, "afin train: compiled %d programs in %.1f s (%.1f s of compiling in parallel)\n", n, time.Since(t0).Seconds(), e.CompileSeconds())
	}
	return err
}
