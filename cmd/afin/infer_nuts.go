package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"
	"syscall"
	"time"

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
		if err := checkDrawCount("--draws × --chains", task.D, *draws, *chains); err != nil {
			return nil, err
		}
		// The draws come out through OnDraw (Discard leaves the random
		// streams unchanged) so that R̂ and ESS are computed after the
		// CPU clock stops: cpu_seconds, like seconds and like Stan's own
		// clock, covers warm-up and sampling only.
		kept := make([][]float64, *chains)
		for c := range kept {
			kept[c] = make([]float64, 0, *draws*task.D)
		}
		cpu0 := processCPUSeconds()
		res, err := nuts.Sample(ctx, task, task.D, nuts.Config{
			Warmup: *warmup, Draws: *draws, Chains: *chains, Seed: opts.Seed,
			Dense: *dense, MaxDepth: *maxDepth,
			Init: task.Prior.Location(), Jitter: *jitter,
			Progress: opts.Stderr,
			Discard:  true,
			OnDraw:   func(c int, z []float64) { kept[c] = append(kept[c], z...) },
		})
		cpu := processCPUSeconds() - cpu0
		if err != nil {
			return nil, err
		}
		res.Chains = kept
		res.Convergence = nuts.Diagnose(kept, task.D)
		if w := nutsWarning(res); w != "" {
			fmt.Fprintln(opts.Stderr, "afin infer: warning:", w)
		}
		return &inferResult{
			Seconds:     res.Seconds,
			Draws:       res.Draws(),
			Diagnostics: withCPUSeconds(nutsDiagnostics(res), cpu),
		}, nil
	}
}

// withCPUSeconds adds cpu_seconds, the process's user+system CPU time
// over the sampling: on a loaded or shared machine a fairer cost than
// wall-clock seconds, and with GOMAXPROCS=1 directly comparable with a
// single-core Stan run (tools/stancompare).
func withCPUSeconds(diag map[string]any, cpu float64) map[string]any {
	diag["cpu_seconds"] = jsonNumber(cpu)
	return diag
}

// processCPUSeconds is the user plus system CPU time of this process so
// far, NaN if getrusage fails (reported as null).
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
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

// nutsWarning says, in one line, why a run's draws should not be trusted
// (the thresholds of Vehtari et al. 2021 and Stan), or "" when none.
func nutsWarning(res *nuts.Result) string {
	var why []string
	if c := res.Convergence; !(c.MaxRhat < 1.01) {
		why = append(why, fmt.Sprintf("max R̂ %.4g ≥ 1.01", c.MaxRhat))
	}
	if c := res.Convergence; !(c.MinESSBulk >= 100) {
		why = append(why, fmt.Sprintf("min bulk ESS %.0f < 100", c.MinESSBulk))
	}
	if res.Divergences > 0 {
		why = append(why, fmt.Sprintf("%d divergent transitions", res.Divergences))
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, ", ") + "; the draws may not represent the posterior (try more --warmup/--draws or --dense-mass)"
}

// jsonNumber maps non-finite values (which encoding/json rejects) to null.
func jsonNumber(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}
