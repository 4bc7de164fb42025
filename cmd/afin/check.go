package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/afin-bench/afin/bench"
	"github.com/afin-bench/afin/reports"
)

func runCheck(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "check", "--results DIR [--baseline FILE] [--write-baseline FILE] [--allow-mixed]")
	resultsDir := fs.String("results", "results", "results directory to check")
	baseline := fs.String("baseline", "", "baseline JSON to compare against (default: the smoke baseline built into the binary, a copy of "+bench.SmokeBaselineFile+")")
	write := fs.String("write-baseline", "", "instead of checking, write a baseline from the results to this file")
	rel := fs.Float64("rel", 0.25, "relative tolerance of a written baseline")
	abs := fs.Float64("abs", 0.002, "absolute tolerance of a written baseline")
	failWarned := fs.Bool("fail-on-warnings", false, "fail (exit 1) when any scored record carries a warning flag (not converged, outside training support, poor fit, degenerate weights, failed MCMC checks), after the accuracy gate")
	allowMixed := fs.Bool("allow-mixed", false, "accept results that mix profiles, commits or checkpoints (by default the gate refuses to compare unlike runs)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// --rel and --abs are the tolerances written into a new baseline; the
	// gate itself uses the baseline's own. Given without --write-baseline
	// they would be ignored, and so would --baseline with it.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *write == "" && (set["rel"] || set["abs"]) {
		return badInput(errors.New("--rel and --abs set the tolerances of a baseline written with --write-baseline; the gate uses those stored in --baseline"))
	}
	if *write != "" && *failWarned {
		return badInput(errors.New("--fail-on-warnings checks results against the gate; --write-baseline writes a baseline instead"))
	}
	if set["baseline"] && *baseline == "" {
		return badInput(errors.New("--baseline: empty path (leave the flag out for the built-in smoke baseline)"))
	}
	if *write != "" && set["baseline"] {
		return badInput(errors.New("--baseline and --write-baseline exclude each other: one checks against a baseline, the other writes one"))
	}
	if *write != "" {
		for _, tol := range []struct {
			name string
			v    float64
		}{{"--rel", *rel}, {"--abs", *abs}} {
			if !(tol.v >= 0) || math.IsInf(tol.v, 0) {
				return badInput(fmt.Errorf("%s: must be finite and ≥ 0, got %g", tol.name, tol.v))
			}
		}
	}
	loaded, bad, err := loadStore(env, *resultsDir)
	if err != nil {
		return err
	}
	// A gate (or a baseline) over absurd numbers means nothing: refused,
	// as a record that breaks the schema is.
	if len(bad) > 0 {
		return badInput(fmt.Errorf("--results: %d metric(s) are implausible (records.MetricBound); first: %s", len(bad), bad[0]))
	}
	recs := loaded.Records
	if len(recs) == 0 {
		return badInput(noRecordsError("--results", *resultsDir, ""))
	}
	// A gate (or a baseline) over records of several profiles, commits or
	// checkpoints compares unlike runs: its verdict means nothing unless
	// the mix is what the user wants.
	if len(loaded.Mixed) > 0 && !*allowMixed {
		return badInput(fmt.Errorf("--results: %s holds unlike runs: %s; rerun into a fresh directory, or pass --allow-mixed if the mix is intended",
			*resultsDir, strings.Join(loaded.Mixed, "; ")))
	}
	if *write != "" {
		if err := checkOutputFile("--write-baseline", *write); err != nil {
			return err
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
	// The default is the copy built into the binary, not a path relative
	// to the working directory: the gate is the same from anywhere.
	var base *reports.Baseline
	if *baseline == "" {
		base, err = reports.ParseBaseline(bench.SmokeBaseline(), "built-in "+bench.SmokeBaselineFile)
	} else {
		base, err = reports.ReadBaseline(*baseline)
	}
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
	// A suite's own gate (the calibration suite's SBC bands of its
	// calibrated control) after the accuracy gate.
	if err := reports.SuiteGates(recs); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "accuracy gate passed: %d baseline entries within tolerance\n", len(base.Entries))
	// Warnings are reported always and fail the check only when asked:
	// the committed smoke baseline's own runs carry some.
	warned := reports.Warned(recs)
	for _, w := range warned {
		fmt.Fprintln(env.stderr, "afin check: warning:", w)
	}
	if *failWarned && len(warned) > 0 {
		return fmt.Errorf("warning gate failed (--fail-on-warnings): %d method(s) have flagged records; first: %s", len(warned), warned[0])
	}
	return nil
}

// noRecordsError is the error of a results directory that holds no
// records, saying why when the path is missing or not a directory (a
// typo reads differently from a run that has not happened yet). hint
// ends the message when the directory exists.
func noRecordsError(flagName, dir, hint string) error {
	why := hint
	if fi, err := os.Stat(dir); err != nil {
		why = ": the directory does not exist"
	} else if !fi.IsDir() {
		why = ": it is a file, not a directory"
	}
	return fmt.Errorf("%s: no records in %s%s", flagName, dir, why)
}
