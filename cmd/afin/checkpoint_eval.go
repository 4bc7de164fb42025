package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/afin-bench/afin/afin"
)

// runCheckpointEval is `afin checkpoint eval`: the held-out conjugate
// check of a checkpoint, the number a new checkpoint must beat the
// shipped one on (M1 relative to the prior mean's, AFIN and AFIN+SNIS).
func runCheckpointEval(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "checkpoint eval", "DIR [--grid full|small] [--tasks K] [--proposals P] [--seed S] [--json]")
	gridName := fs.String("grid", "full", "held-out grid: full (d ∈ {2,4,8,16} × N ∈ {1,16,64,256}, both conjugate priors and Gaussian likelihoods) or small (d ∈ {2,4,8} × N ∈ {8,32,64})")
	tasks := fs.Int("tasks", 4, "tasks per (d, N) cell")
	proposals := fs.Int("proposals", 10000, "AFIN+SNIS proposals per task")
	seed := fs.Uint64("seed", 2026, "seed of the held-out tasks and proposals")
	asJSON := fs.Bool("json", false, "print JSON")
	dir, err := parseCheckpointArgs(fs, args, "DIR")
	if err != nil {
		return err
	}
	var grid afin.ConjugateGrid
	switch *gridName {
	case "full":
		grid = afin.FullGrid
	case "small":
		grid = afin.SmallGrid
	default:
		return badInput(fmt.Errorf("--grid: want full or small, got %q", *gridName))
	}
	if *tasks < 1 || *tasks > 1000 || *proposals < 10 || *proposals > 10_000_000 {
		return badInput(errors.New("--tasks must be in [1, 1000] and --proposals in [10, 10⁷]"))
	}
	m, err := afin.Load(dir, engineChoice())
	if err != nil {
		return badInput(err)
	}
	env.noteKernel()
	cells, err := afin.EvaluateConjugate(ctx, m, grid, *seed, *tasks, *proposals)
	if err != nil {
		return err
	}
	ra, rs := afin.ConjugateSummary(cells)
	if *asJSON {
		return writeJSON(env.stdout, map[string]any{"dir": dir, "hash": m.Hash, "grid": grid.Name,
			"tasks_per_cell": *tasks, "proposals": *proposals, "seed": *seed,
			"m1_afin_over_prior": ra, "m1_snis_over_prior": rs, "cells": cells})
	}
	fmt.Fprintf(env.stdout, "%4s %4s %10s %10s %10s %8s\n", "d", "N", "M1 prior", "M1 afin", "M1 snis", "outside")
	for _, c := range cells {
		fmt.Fprintf(env.stdout, "%4d %4d %10.4f %10.4f %10.4f %8v\n", c.D, c.N, c.M1Prior, c.M1AFIN, c.M1SNIS,
			c.D > m.Support.DMax || c.N > m.Support.NMax)
	}
	fmt.Fprintf(env.stdout, "mean M1 relative to the prior mean's: afin %.4f, afin+snis %.4f (%s grid, %d tasks per cell, %d proposals)\n",
		ra, rs, grid.Name, *tasks, *proposals)
	return nil
}
