package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/afin-bench/afin/reference"
)

// referenceOutput is what `afin reference --json` prints.
type referenceOutput struct {
	Kind        string         `json:"kind"`
	D           int            `json:"d"`
	Key         string         `json:"key"`
	CacheHit    bool           `json:"cache_hit"`
	CachePath   string         `json:"cache_path,omitempty"`
	NDraws      int            `json:"n_draws"` // the kept subsample
	Mean        []float64      `json:"mean"`
	Cov         [][]float64    `json:"cov"`
	Diagnostics map[string]any `json:"diagnostics,omitempty"`
}

func runReference(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "reference", "--task FILE [--profile quick|paper] [--draws N] [--warmup W] [--chains C] [--cache-dir DIR] [--json]")
	taskPath := fs.String("task", "", "task JSON file (- for stdin)")
	profile := fs.String("profile", reference.ProfileQuick, "defaults: smoke (2 chains, 2000 draws, 300 warm-up), quick (4 chains, 20000 draws, 1000 warm-up) or paper (4 chains, 10^6 draws, 10^4 warm-up)")
	draws := fs.Int("draws", 0, "total post-warm-up draws over all chains (0: the profile's)")
	warmup := fs.Int("warmup", 0, "warm-up iterations per chain (0: the profile's)")
	chains := fs.Int("chains", 0, "chains (0: the profile's)")
	subsample := fs.Int("subsample", 50000, "evenly thinned draws kept for SW2")
	dense := fs.Bool("dense-mass", false, "adapt a dense mass matrix")
	seed := fs.Uint64("seed", 0, "random seed")
	cacheDir := fs.String("cache-dir", "", "cache directory (default $AFIN_CACHE_DIR, else the user cache dir's afin/references)")
	noCache := fs.Bool("no-cache", false, "neither read nor write the cache")
	drawsOut := fs.String("draws-out", "", "write the subsample to this CSV file")
	drawsFormat := fs.String("draws-format", drawsFormatAfin, "--draws-out format: afin (z1..zd) or posterior (.chain,.iteration,.draw,z[1],..., read by R posterior and ArviZ)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	withBudgetHelp(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for name, v := range map[string]int{"draws": *draws, "warmup": *warmup, "chains": *chains} {
		if v < 0 {
			return badInput(fmt.Errorf("--%s must be >= 0, got %d", name, v))
		}
	}
	if err := checkDrawsFormat(*drawsFormat); err != nil {
		return err
	}
	task, err := loadRunInputs(env, *taskPath, *drawsOut)
	if err != nil {
		return err
	}
	if !*noCache {
		if err := checkOutputDir("--cache-dir", *cacheDir); err != nil {
			return err
		}
	}
	s, err := reference.Settings{
		Profile: *profile, Draws: *draws, Warmup: *warmup, Chains: *chains, Subsample: *subsample,
		Dense: *dense, Seed: *seed, CacheDir: flagOrEnv(*cacheDir, cacheDirEnv), NoCache: *noCache, Progress: env.stderr,
	}.Resolve()
	if err != nil {
		return badInput(err)
	}
	if err := checkDrawCount("--subsample", task.D, s.Subsample); err != nil {
		return err
	}
	ref, err := reference.Get(ctx, task, s)
	if err != nil {
		var ce *reference.ConvergenceError
		if errors.As(err, &ce) {
			printReference(env.stderr, ce.Reference)
		}
		return err
	}
	if *drawsOut != "" {
		// The thinned subsample keeps NUTS's chains in equal parts, one
		// after the other; an exact reference is independent draws.
		if err := writeDrawsIn(*drawsOut, *drawsFormat, ref.Draws, ref.Diagnostics.Chains); err != nil {
			return err
		}
	}
	out := referenceOutput{
		Kind: ref.Kind, D: ref.D, Key: ref.Key, CacheHit: ref.CacheHit, CachePath: ref.CachePath,
		NDraws: ref.Draws.Len(), Mean: ref.Mean, Cov: square(ref.Cov, ref.D),
	}
	if ref.Kind == reference.KindNUTS {
		dg := ref.Diagnostics
		out.Diagnostics = map[string]any{
			"chains": dg.Chains, "draws": dg.Draws, "warmup": dg.Warmup, "divergences": dg.Divergences,
			"accept_rate": jsonNumber(dg.AcceptRate), "step_size": jsonNumber(dg.StepSize),
			"ess_bulk": jsonNumber(dg.MinESSBulk), "ess_tail": jsonNumber(dg.MinESSTail),
			"rhat": jsonNumber(dg.MaxRhat), "grad_evals": dg.GradEvals, "seconds": jsonNumber(dg.Seconds),
		}
	}
	if *asJSON {
		return json.NewEncoder(env.stdout).Encode(out)
	}
	printReference(env.stdout, ref)
	return nil
}

func printReference(w io.Writer, ref *reference.Reference) {
	switch {
	case ref.Kind == reference.KindExact:
		fmt.Fprintf(w, "reference: exact conjugate posterior (not cached: it is closed-form), key %.12s\n", ref.Key)
	case ref.CacheHit:
		fmt.Fprintf(w, "reference: nuts, cache hit: %s\n", ref.CachePath)
	case ref.CachePath != "":
		if _, err := os.Stat(ref.CachePath); err == nil {
			fmt.Fprintf(w, "reference: nuts, cache miss: computed in %.3g s, cached at %s\n", ref.Diagnostics.Seconds, ref.CachePath)
		} else {
			fmt.Fprintf(w, "reference: nuts, computed in %.3g s, not cached\n", ref.Diagnostics.Seconds)
		}
	default:
		fmt.Fprintf(w, "reference: nuts, computed in %.3g s (cache disabled)\n", ref.Diagnostics.Seconds)
	}
	if ref.Kind == reference.KindNUTS {
		dg := ref.Diagnostics
		fmt.Fprintf(w, "chains %d × %d draws after %d warm-up; divergences %d; accept %.3f; step %.3g; min bulk ESS %.0f; max R̂ %.4f; gradients %d\n",
			dg.Chains, dg.Draws/max(dg.Chains, 1), dg.Warmup, dg.Divergences, dg.AcceptRate, dg.StepSize, dg.MinESSBulk, dg.MaxRhat, dg.GradEvals)
	}
	fmt.Fprintf(w, "%6s %12s %12s\n", "coord", "mean", "sd")
	for i, m := range ref.Mean {
		fmt.Fprintf(w, "%6d %12.5g %12.5g\n", i+1, m, sqrt(max(ref.Cov[i*ref.D+i], 0)))
	}
}
