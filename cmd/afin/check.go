package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/afin-bench/afin/reports"
)

// defaultBaseline is the committed accuracy baseline of the smoke profile.
const defaultBaseline = "bench/baselines/smoke.json"

func runCheck(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "check", "--results DIR [--baseline FILE] [--write-baseline FILE]")
	resultsDir := fs.String("results", "results", "results directory to check")
	baseline := fs.String("baseline", defaultBaseline, "baseline JSON to compare against")
	write := fs.String("write-baseline", "", "instead of checking, write a baseline from the results to this file")
	rel := fs.Float64("rel", 0.25, "relative tolerance of a written baseline")
	abs := fs.Float64("abs", 0.002, "absolute tolerance of a written baseline")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	recs, _, err := loadResults(env, *resultsDir)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return badInput(fmt.Errorf("--results: no records in %s", *resultsDir))
	}
	if *write != "" {
		if err := checkOutputFile("--write-baseline", *write); err != nil {
			return err
		}
		if *rel < 0 || *abs < 0 {
			return badInput(errors.New("--rel and --abs must be ≥ 0"))
		}
		b := &reports.Baseline{
			Description: "accuracy baseline written by `afin check --write-baseline` from " + *resultsDir,
			Tolerance:   reports.Tolerance{Relative: *rel, Absolute: *abs},
			Entries:     reports.Summarize(recs),
		}
		if err := reports.WriteBaseline(*write, b); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "wrote %d baseline entries to %s\n", len(b.Entries), *write)
		return nil
	}
	base, err := reports.ReadBaseline(*baseline)
	if err != nil {
		return badInput(err)
	}
	res := reports.Check(recs, base)
	if err := res.Table.WriteTerminal(env.stdout); err != nil {
		return err
	}
	if res.Failed() {
		// What moved, and by how much, next to the verdict: the same table
		// as `afin report --compare`, the baseline as A.
		cmp := reports.CompareBaseline(recs, base)
		if err := cmp.Table.WriteTerminal(env.stdout); err != nil {
			return err
		}
		return fmt.Errorf("accuracy gate failed: %s", res.Summary(len(base.Entries)))
	}
	// NUTS is the calibrated control of the calibration suite: if it fails
	// its SBC bands, the suite (or the sampler) is broken.
	if f := reports.CalibrationFailures(recs, "nuts"); len(f) > 0 {
		return fmt.Errorf("calibration gate failed: %s", strings.Join(f, "; "))
	}
	fmt.Fprintf(env.stdout, "accuracy gate passed: %d baseline entries within tolerance\n", len(base.Entries))
	return nil
}
