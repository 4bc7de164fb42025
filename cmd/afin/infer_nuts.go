package main

import (
	"context"
	"flag"
	"fmt"
	"math"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/factor"
)

// bindNUTS registers the NUTS flags: the paper's setup (chains start at
// the prior location, diagonal metric, depth 10, acceptance target 0.8).
func bindNUTS(fs *flag.FlagSet) inferFunc {
	warmup := fs.Int("warmup", 1000, "NUTS: warm-up iterations per chain")
	draws := fs.Int("draws", 1000, "NUTS: draws per chain after warm-up")
	chains := fs.Int("chains", 4, "NUTS: chains, run concurrently")
	dense := fs.Bool("dense-mass", false, "NUTS: adapt a dense mass matrix (default diagonal)")
	jitter := fs.Float64("init-jitter", 0, "NUTS: start chains at prior location + U(-j, j) per coordinate (0: at the location)")
	maxDepth := fs.Int("max-depth", 10, "NUTS: maximum tree depth")
	return func(ctx context.Context, task *factor.Task, opts inferOptions) (*inferResult, error) {
		switch {
		case *warmup < 0:
			return nil, badInput(fmt.Errorf("--warmup must be >= 0, got %d", *warmup))
		case *draws < 4:
			return nil, badInput(fmt.Errorf("--draws must be >= 4 (per chain, for R̂ and ESS), got %d", *draws))
		case *chains < 1:
			return nil, badInput(fmt.Errorf("--chains must be >= 1, got %d", *chains))
		case *maxDepth < 1 || *maxDepth > 30:
			return nil, badInput(fmt.Errorf("--max-depth must be in [1, 30], got %d", *maxDepth))
		case *jitter < 0 || math.IsNaN(*jitter) || math.IsInf(*jitter, 0):
			return nil, badInput(fmt.Errorf("--init-jitter must be a finite value >= 0, got %g", *jitter))
		}
		res, err := nuts.Sample(ctx, task, task.D, nuts.Config{
			Warmup: *warmup, Draws: *draws, Chains: *chains, Seed: opts.Seed,
			Dense: *dense, MaxDepth: *maxDepth,
			Init: task.Prior.Location(), Jitter: *jitter,
			Progress: opts.Stderr,
		})
		if err != nil {
			return nil, err
		}
		return &inferResult{
			Seconds:     res.Seconds,
			Draws:       res.Draws(),
			Diagnostics: nutsDiagnostics(res),
		}, nil
	}
}

// nutsDiagnostics is the JSON diagnostics block of a NUTS run.
func nutsDiagnostics(res *nuts.Result) map[string]any {
	return map[string]any{
		"divergences":     res.Divergences,
		"accept_rate":     jsonNumber(res.AcceptRate),
		"step_size":       jsonNumber(res.StepSize),
		"ess_bulk":        jsonNumber(res.Convergence.MinESSBulk),
		"ess_tail":        jsonNumber(res.Convergence.MinESSTail),
		"rhat":            jsonNumber(res.Convergence.MaxRhat),
		"grad_evals":      res.GradEvals,
		"tree_depth_mean": jsonNumber(res.MeanDepth),
		"tree_depth_hist": res.DepthHist,
		"chains":          len(res.Chains),
	}
}

// jsonNumber maps non-finite values (which encoding/json rejects) to null.
func jsonNumber(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}
