package main

import (
	"context"
	"fmt"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/factor"
)

// runCheckpointSupport derives a checkpoint's training ranges from the
// simulator configuration of its recorded sizes and families (what
// `afin train` drew its tasks with) and its OOD statistics from simulated
// tasks through its weights; --write stores them (config.json's
// training_support.ranges and ood.json), leaving the weights untouched.
func runCheckpointSupport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "checkpoint support", "DIR [--write] [--ranges-only] [--fit N --calibrate N --test N]")
	write := fs.Bool("write", false, "write the ranges into config.json and the statistics into "+checkpoint.OODFile)
	o := afin.DefaultOODOptions
	fs.IntVar(&o.Fit, "fit", o.Fit, "simulated tasks for the summaries' mean and covariance")
	fs.IntVar(&o.Calibrate, "calibrate", o.Calibrate, "simulated tasks for the threshold")
	fs.IntVar(&o.Test, "test", o.Test, "fresh simulated tasks for the false-flag rate")
	fs.Float64Var(&o.Quantile, "quantile", o.Quantile, "quantile of the calibration distances flagged above")
	seed := fs.Uint64("seed", o.Seed, "simulation seed")
	rangesOnly := fs.Bool("ranges-only", false, "derive the ranges only (no OOD statistics: a few seconds instead of minutes)")
	dir, err := parseCheckpointArgs(fs, args, "DIR")
	if err != nil {
		return err
	}
	o.Seed = *seed
	if err := o.Check(); err != nil {
		return badInput(err)
	}
	m, err := afin.Load(dir, engineChoice())
	if err != nil {
		return badInput(err)
	}
	sup := m.Support
	r, err := factor.TrainingRanges(sup.SimOptions())
	if err != nil {
		return badInput(fmt.Errorf("%s: %w", dir, err))
	}
	sup.Ranges = r
	fmt.Fprint(env.stdout, afin.DescribeRanges(r))
	if *rangesOnly {
		if !*write {
			return nil
		}
		if err := checkpoint.WriteSupport(dir, sup); err != nil {
			return fmt.Errorf("writing the support of %s: %w", dir, err)
		}
		fmt.Fprintf(env.stdout, "wrote %s/%s (training_support.ranges)\n", dir, checkpoint.ConfigFile)
		return nil
	}
	last := -1
	o.Progress = func(done, total int) {
		if pct := 10 * done / total; pct != last {
			last = pct
			fmt.Fprintf(env.stderr, "afin checkpoint support: %d of %d simulated tasks\n", done, total)
		}
	}
	ood, err := m.FitOOD(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "ood          threshold %.4g (the %g quantile of %d simulated tasks; fitted on %d); false-flag rate %.2f%% (%d of %d fresh simulated tasks)\n",
		ood.Threshold, ood.Quantile, ood.CalibrationTasks, ood.FitTasks, 100*ood.FalseFlagRate,
		int(ood.FalseFlagRate*float64(ood.TestTasks)+0.5), ood.TestTasks)
	if !*write {
		return nil
	}
	if err := checkpoint.WriteSupport(dir, sup); err != nil {
		return fmt.Errorf("writing the support of %s: %w", dir, err)
	}
	if err := checkpoint.WriteOOD(dir, ood); err != nil {
		return fmt.Errorf("writing the OOD statistics of %s: %w", dir, err)
	}
	fmt.Fprintf(env.stdout, "wrote %s/%s (training_support.ranges) and %s/%s\n", dir, checkpoint.ConfigFile, dir, checkpoint.OODFile)
	return nil
}
