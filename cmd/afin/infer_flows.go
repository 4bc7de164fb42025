package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/afin-bench/afin/baselines/flows"
	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// bindIAF registers the IAF flags.
func bindIAF(fs *flag.FlagSet) inferFunc { return bindFlow(fs, flows.IAF) }

// bindMAF registers the MAF flags.
func bindMAF(fs *flag.FlagSet) inferFunc { return bindFlow(fs, flows.MAF) }

// bindNSF registers the NSF flags.
func bindNSF(fs *flag.FlagSet) inferFunc { return bindFlow(fs, flows.NSF) }

// bindFlow registers the flags shared by the three flow families: the
// optimisation protocol (the paper's 7-rate sweep unless --lr is given)
// and the architecture (defaults of flows.DefaultArch).
func bindFlow(fs *flag.FlagSet, kind flows.Kind) inferFunc {
	def := flows.DefaultArch()
	name := string(kind)
	steps := fs.Int("steps", 10000, name+": Adam steps per learning rate")
	lr := fs.Float64("lr", 0, name+": single learning rate (0: sweep the paper's 7 rates 1e-6..1e-2 and keep the best ELBO)")
	draws := fs.Int("draws", 4000, name+": draws from the fitted flow")
	mc := fs.Int("mc", 4, name+": Monte Carlo draws per gradient step (antithetic pairs)")
	layers := fs.Int("layers", def.Layers, name+": autoregressive transforms")
	hidden := fs.Int("hidden", def.Hidden, name+": MADE hidden width")
	depth := fs.Int("depth", def.Depth, name+": MADE hidden layers")
	bins, bound := &def.Bins, &def.Bound
	if kind == flows.NSF {
		bins = fs.Int("bins", def.Bins, "nsf: spline bins")
		bound = fs.Float64("bound", def.Bound, "nsf: spline window [-bound, bound]")
	}
	return func(ctx context.Context, task *factor.Task, opts inferOptions) (*inferResult, error) {
		arch := flows.Arch{Layers: *layers, Hidden: *hidden, Depth: *depth, Bins: *bins, Bound: *bound, MaxLogScale: def.MaxLogScale}
		switch {
		case *steps < 1:
			return nil, badInput(fmt.Errorf("--steps must be >= 1, got %d", *steps))
		case *draws < 1:
			return nil, badInput(fmt.Errorf("--draws must be >= 1, got %d", *draws))
		case *mc < 1:
			return nil, badInput(fmt.Errorf("--mc must be >= 1, got %d", *mc))
		case *lr < 0 || math.IsNaN(*lr) || math.IsInf(*lr, 0):
			return nil, badInput(fmt.Errorf("--lr must be a finite value >= 0, got %g", *lr))
		// Zero would silently mean the default inside flows.Arch.
		case *layers < 1:
			return nil, badInput(fmt.Errorf("--layers must be >= 1, got %d", *layers))
		case *hidden < 1:
			return nil, badInput(fmt.Errorf("--hidden must be >= 1, got %d", *hidden))
		case *depth < 1:
			return nil, badInput(fmt.Errorf("--depth must be >= 1, got %d", *depth))
		case *bins < 2:
			return nil, badInput(fmt.Errorf("--bins must be >= 2, got %d", *bins))
		case !(*bound > 0):
			return nil, badInput(fmt.Errorf("--bound must be > 0, got %g", *bound))
		}
		if err := arch.Check(); err != nil {
			return nil, badInput(fmt.Errorf("--%w", err))
		}
		if err := checkDrawCount("--draws", task.D, *draws); err != nil {
			return nil, err
		}
		o := flows.Options{Arch: arch, Budgets: []int{*steps}, MCSamples: *mc, Seed: opts.Seed, Progress: opts.Stderr}
		if *lr > 0 {
			o.LRs = []float64{*lr}
		}
		start := time.Now()
		res, err := flows.Fit(ctx, task, kind, o)
		if err != nil {
			return nil, err
		}
		q := res.Final()
		t0 := time.Now()
		z, _ := q.SampleN(rand.New(rand.NewPCG(opts.Seed, 0x5a4e)), *draws)
		sampling := time.Since(t0).Seconds()
		seconds := time.Since(start).Seconds()
		elbo := vi.ELBO(task, q, rand.New(rand.NewPCG(opts.Seed, 0xe1b0)), 2048)
		diverged := 0
		for _, e := range res.Sweep.Failures {
			if e != nil && errors.Is(e, vi.ErrDiverged) {
				diverged++
			}
		}
		return &inferResult{
			Seconds: seconds,
			Draws:   &posterior.Draws{D: task.D, Z: z},
			Diagnostics: map[string]any{
				"lr":                    q.LR,
				"steps":                 q.Steps,
				"lrs_tried":             len(res.Sweep.Runs),
				"lrs_diverged":          diverged,
				"elbo":                  jsonNumber(elbo + task.LogNormalizer()),
				"n_params":              q.NumParams(),
				"layers":                res.Arch.Layers,
				"hidden":                res.Arch.Hidden,
				"optimize_seconds":      res.Seconds,
				"sample_seconds":        sampling,
				"fit_seconds_chosen_lr": q.Seconds,
			},
		}, nil
	}
}
