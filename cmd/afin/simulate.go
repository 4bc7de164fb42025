package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/progress"
	"github.com/afin-bench/afin/internal/streams"
)

// maxSimEntries bounds n·d, the size of a simulated design (128 MB);
// mixtureDMax is the largest d the simulator draws when --d is left out.
const (
	maxSimEntries = 1 << 24
	mixtureDMax   = 16
)

func runSimulate(ctx context.Context, env *cliEnv, args []string) error {
	// Every flag is optional: what is left out is drawn as in training.
	fs := newFlagSet(env, "simulate", "[--prior P] [--likelihood L[,L...]] [--d D] [--n N] [--design F] [--kappa-max K] [--seed S] [--name NAME]")
	prior := fs.String("prior", "", "prior family: "+strings.Join(factor.PriorFamilies, ", ")+" (default: drawn uniformly, as in training)")
	lik := fs.String("likelihood", "", "likelihood family, or a comma-separated list for a heterogeneous task: "+
		strings.Join(factor.LikelihoodFamilies, ", ")+" (default: the paper's homogeneous/heterogeneous draw)")
	d := fs.Int("d", 0, "latent dimension (default: drawn from the paper's (d, N) mixture)")
	n := fs.Int("n", 0, "number of likelihood factors (default: drawn from the paper's (d, N) mixture)")
	design := fs.String("design", "", "design family: "+strings.Join(factor.DesignFamilies, ", ")+
		" or mixture (default: mixture, the training mix iid 0.7 and 0.1 each other)")
	kappa := fs.Float64("kappa-max", 40, "largest condition number of the design spectra")
	seed := fs.Uint64("seed", 0, "random seed (same seed, same task)")
	name := fs.String("name", "", "task name to record (default: one built from the flags)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o := factor.SimOptions{Prior: *prior, Design: *design, KappaMax: *kappa}
	if o.Design == "mixture" {
		o.Design = ""
	} else if o.Design != "" && !slices.Contains(factor.DesignFamilies, o.Design) {
		// Said here, not by factor, so the list matches --help's.
		return badInput(fmt.Errorf("--design: unknown design %q (valid: %s, mixture)", o.Design, strings.Join(factor.DesignFamilies, ", ")))
	}
	// Leaving --d or --n out draws it; an explicit value must be usable.
	var bad error
	fs.Visit(func(f *flag.Flag) {
		if (f.Name == "d" && *d < 1 || f.Name == "n" && *n < 1) && bad == nil {
			bad = badInput(fmt.Errorf("--%s: must be ≥ 1, got %s", f.Name, f.Value))
		}
	})
	if bad != nil {
		return bad
	}
	o.D, o.N = *d, *n
	// The task JSON allows d up to factor.MaxDim, but the simulator's O(d³)
	// precision and rotation draws, or n·d design entries by the billion,
	// would exhaust memory or run for hours instead of failing.
	if o.D > maxOutputD {
		return badInput(fmt.Errorf("--d: must be ≤ %d (infer and reference refuse larger tasks), got %d", maxOutputD, o.D))
	}
	if dd := cmp.Or(o.D, mixtureDMax); o.N > maxSimEntries/dd {
		return badInput(fmt.Errorf("--n: n·d must be ≤ %d (design entries), got n=%d with d up to %d", maxSimEntries, o.N, dd))
	}
	if *lik != "" {
		for _, l := range strings.Split(*lik, ",") {
			o.Likelihoods = append(o.Likelihoods, strings.TrimSpace(l))
		}
		if k := len(o.Likelihoods); k > 1 && o.N > 0 && o.N < k {
			return badInput(fmt.Errorf("--n: a heterogeneous task over %d likelihoods needs n ≥ %d, got %d", k, k, o.N))
		}
	}
	if err := o.Check(); err != nil {
		return badInput(err)
	}
	bars := stageBars{w: env.stderr, d: o.D}
	task, err := factor.SimulateContext(ctx, streams.New(*seed, streams.Simulate), o, bars.tick)
	bars.finish(err == nil)
	if err != nil {
		if ctx.Err() != nil {
			return err // interrupted: run reports it (status 130)
		}
		return badInput(err)
	}
	task.Name = *name
	if task.Name == "" {
		task.Name = simulatedName(task, *design, *seed)
	}
	data, err := factor.MarshalTask(task)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(env.stdout, "%s\n", data)
	return err
}

// progressMinD is the largest d whose simulation is never announced:
// up to it every stage ends within seconds (d = 1024: 2.6 s for a
// full-rank prior, 12 s for a correlated design of 1024 rows, at load 17
// on 2 cores).
const progressMinD = 1024

// stageBars announces each O(d³) stage of a simulation at d above
// progressMinD on w (stdout is the task, so a line on stderr is what a
// person sees) and shows its progress bar when w and stdout are
// terminals (progress.New).
type stageBars struct {
	w     io.Writer
	d     int
	stage string
	bar   *progress.Bar
}

// tick is the simulator's factor.Tick. A stage of at least d units of
// O(d²) work each (a rotation's columns, a precision's rows, the rows of
// a design through a full rotation) is O(d³).
func (s *stageBars) tick(stage string, done, total int) {
	if s.d <= progressMinD || total < s.d {
		return
	}
	if stage != s.stage {
		s.finish(true)
		fmt.Fprintf(s.w, "afin simulate: %s: %d steps of O(d²) work at d = %d, long at this size (Ctrl-C stops it)\n", stage, total, s.d)
		s.stage, s.bar = stage, progress.New(s.w, "simulate: "+stage, total)
	}
	if done > 0 {
		s.bar.Add(1)
	}
}

// finish ends the current stage's bar: done (its last unit finished) or
// stopped short.
func (s *stageBars) finish(done bool) {
	if done {
		s.bar.Add(1) // tick reports units as they start
	}
	s.bar.Finish()
	s.bar = nil
}

// simulatedName records what was drawn, so a saved task says where it
// came from.
func simulatedName(t *factor.Task, design string, seed uint64) string {
	var fams []string
	for _, f := range t.Factors {
		if !slices.Contains(fams, f.Family()) {
			fams = append(fams, f.Family())
		}
	}
	if design == "" {
		design = "mixture"
	}
	return fmt.Sprintf("simulated %s/%s d=%d n=%d design=%s seed=%d",
		t.Prior.Family(), strings.Join(fams, "+"), t.D, t.N(), design, seed)
}
