package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// exactStream is the PCG stream for draws from the exact posterior.
const exactStream = 0xe7ac

// bindExact registers --n-draws: the closed form needs no draws, but
// --draws-out and the metrics work on draw files.
func bindExact(fs *flag.FlagSet) inferFunc {
	nDraws := fs.Int("n-draws", 0, "draws to sample from the exact Gaussian posterior (for --draws-out)")
	return func(ctx context.Context, task *factor.Task, opts inferOptions) (*inferResult, error) {
		if *nDraws < 0 {
			return nil, badInput(fmt.Errorf("--n-draws: must be ≥ 0, got %d", *nDraws))
		}
		if err := checkDrawCount("--n-draws", task.D, *nDraws); err != nil {
			return nil, err
		}
		if !factor.IsConjugate(task) {
			return nil, badInput(fmt.Errorf("method exact needs a conjugate task (diag_gaussian or fullrank_gaussian prior, only gaussian and lin_gaussian factors); this task has %s; use --method nuts for a reference", describeFamilies(task)))
		}
		start := time.Now()
		mean, cov, err := factor.ExactPosterior(task)
		if err != nil {
			return nil, err
		}
		res := &inferResult{Mean: mean, Cov: square(cov, task.D)}
		if *nDraws > 0 {
			rng := rand.New(rand.NewPCG(opts.Seed, exactStream))
			z, err := factor.GaussianDraws(rng, mean, cov, *nDraws)
			if err != nil {
				return nil, fmt.Errorf("sampling the exact posterior: %w", err)
			}
			res.Draws = &posterior.Draws{D: task.D, Z: z}
		}
		res.Seconds = time.Since(start).Seconds()
		return res, nil
	}
}

// describeFamilies names a task's prior and factor families, each once.
func describeFamilies(t *factor.Task) string {
	var fams []string
	for _, f := range t.Factors {
		if !slices.Contains(fams, f.Family()) {
			fams = append(fams, f.Family())
		}
	}
	if len(fams) == 0 {
		return "prior " + t.Prior.Family() + " and no factors"
	}
	return "prior " + t.Prior.Family() + " and factors " + strings.Join(fams, ", ")
}
