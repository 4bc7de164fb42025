package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/factor"
)

// bindFRVISNIS registers FRVI+SNIS: the FRVI fit is the proposal, and the
// output is its draws weighted by p̃/q.
func bindFRVISNIS(fs *flag.FlagSet) inferFunc {
	f := bindFRVIFlags(fs, "frvi-snis")
	proposals := fs.Int("proposals", 10000, "frvi-snis: proposal draws from the fitted Gaussian")
	return func(ctx context.Context, task *factor.Task, opts inferOptions) (*inferResult, error) {
		if *proposals < 2 {
			return nil, badInput(fmt.Errorf("--proposals must be >= 2, got %d", *proposals))
		}
		if err := checkDrawCount("--proposals", task.D, *proposals); err != nil {
			return nil, err
		}
		fit, err := f.fit(ctx, task, opts)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		dr, info, err := vi.SNIS(task, fit.q, rand.New(rand.NewPCG(opts.Seed, 0x5e15)), *proposals)
		if err != nil {
			return nil, fmt.Errorf("frvi-snis: %w", err)
		}
		snis := time.Since(t0).Seconds()
		dg := fit.diagnostics(task, opts.Seed)
		dg["steps"] = *f.steps
		dg["snis_seconds"] = snis
		dg["pareto_k"] = jsonNumber(info.ParetoK)
		dg["max_weight"] = jsonNumber(info.MaxWeight)
		dg["entropy_ratio"] = jsonNumber(info.EntropyRatio)
		dg["ess"] = jsonNumber(info.ESS)
		dg["non_finite"] = info.NonFinite
		return &inferResult{Seconds: fit.seconds + snis, Draws: dr, Diagnostics: dg}, nil
	}
}
