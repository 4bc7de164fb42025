package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/afin-bench/afin/afin"
)

// errEnginesDisagree is the failure of `afin checkpoint engines`.
var errEnginesDisagree = errors.New("the GoMLX and native forward passes disagree")

// runCheckpointEngines is `afin checkpoint engines`: the GoMLX graph on
// the configured backend (XLA on a GPU) against the native CPU path, on
// the same weights and simulated tasks. deploy/gpu runs it before
// trusting a GPU.
func runCheckpointEngines(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "checkpoint engines", "DIR [--batches B] [--tasks K] [--d-max D] [--n-max N] [--tol T] [--json]")
	batches := fs.Int("batches", 6, "batches, each with its own (d, N) from the training mixture")
	tasks := fs.Int("tasks", 4, "tasks per batch")
	dMax := fs.Int("d-max", 16, "largest d drawn")
	nMax := fs.Int("n-max", 256, "largest N drawn")
	seed := fs.Uint64("seed", 1, "seed of the tasks")
	tol := fs.Float64("tol", 1e-4, "largest relative difference of mean and precision (Gaussian) or 10× this absolute in log q (flow)")
	asJSON := fs.Bool("json", false, "print JSON")
	dir, err := parseCheckpointArgs(fs, args, "DIR")
	if err != nil {
		return err
	}
	if *batches < 1 || *tasks < 1 || *dMax < 1 || *dMax > 64 || *nMax < 1 || *nMax > 4096 || !(*tol > 0) {
		return badInput(errors.New("--batches, --tasks ≥ 1; --d-max in [1, 64]; --n-max in [1, 4096]; --tol > 0"))
	}
	m, err := afin.Load(dir, engineChoice())
	if err != nil {
		return badInput(err)
	}
	ag, err := m.CompareEngines(ctx, *seed, *batches, *tasks, *dMax, *nMax)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(env.stdout, ag); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.stdout, "%d tasks in %d batches; GoMLX (%s) vs native: mean %.2e, precision %.2e relative; log q %.2e absolute\n",
			ag.Tasks, ag.Batches, ag.Backend, ag.MaxRelMean, ag.MaxRelPrec, ag.MaxAbsLogQ)
		fmt.Fprintf(env.stdout, "time: GoMLX %.3f s (%d programs compiled), native %.3f s\n", ag.GoMLXSeconds, ag.Compiles, ag.NativeSeconds)
	}
	if ag.MaxRelMean > *tol || ag.MaxRelPrec > *tol || ag.MaxAbsLogQ > 10**tol {
		return errEnginesDisagree
	}
	return nil
}
