package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// bindAFINSNIS uses the AFIN posterior as an importance proposal: its
// draws weighted by p̃/q, self-normalised.
func bindAFINSNIS(fs *flag.FlagSet) inferFunc {
	ckpt := fs.String("checkpoint", "", "afin-snis: checkpoint directory (default: the shipped one)")
	proposals := fs.Int("proposals", 10000, "afin-snis: proposal draws from the AFIN posterior")
	fs.IntVar(proposals, "draws", 10000, "afin-snis: same as --proposals")
	return func(ctx context.Context, task *factor.Task, opts inferOptions) (*inferResult, error) {
		if *proposals < 2 {
			return nil, badInput(fmt.Errorf("--proposals must be >= 2, got %d", *proposals))
		}
		r, err := runAFIN(*ckpt, task, *proposals, opts.Seed, true)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		d := task.D
		logP := make([]float64, *proposals)
		for n := range logP {
			if n%4096 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			logP[n] = task.LogDensity(r.z[n*d : (n+1)*d])
		}
		dr, info, err := posterior.SNIS(d, r.z, r.logQ, logP)
		if err != nil {
			return nil, fmt.Errorf("afin-snis: %w", err)
		}
		snis := time.Since(t0).Seconds()
		dg := r.diagnostics()
		dg["snis_seconds"] = snis
		dg["proposals"] = *proposals
		dg["pareto_k"] = jsonNumber(info.ParetoK)
		dg["max_weight"] = jsonNumber(info.MaxWeight)
		dg["entropy_ratio"] = jsonNumber(info.EntropyRatio)
		dg["ess"] = jsonNumber(info.ESS)
		dg["non_finite"] = info.NonFinite
		return &inferResult{Seconds: r.fwd + r.samp + snis, Draws: dr, Diagnostics: dg}, nil
	}
}
