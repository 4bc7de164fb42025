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
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reports"
)

// checkOptions are `afin check`'s flags.
type checkOptions struct {
	results, baseline, write string
	rel, abs                 float64
	failWarned, allowMixed   bool
	set                      map[string]bool // the flags given
}

func runCheck(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "check", "--results DIR [--baseline FILE] [--write-baseline FILE] [--allow-mixed]")
	var o checkOptions
	fs.StringVar(&o.results, "results", "results", "results directory to check")
	fs.StringVar(&o.baseline, "baseline", "", "baseline JSON to compare against (default: the smoke baseline built into the binary, a copy of "+bench.SmokeBaselineFile+")")
	fs.StringVar(&o.write, "write-baseline", "", "instead of checking, write a baseline from the results to this file: every scored metric of every suite (refused when no record is scored)")
	fs.Float64Var(&o.rel, "rel", 0.25, "relative tolerance of a written baseline (on 1 − the metric for accuracy and AUC)")
	fs.Float64Var(&o.abs, "abs", 0.002, "absolute tolerance of a written baseline")
	fs.BoolVar(&o.failWarned, "fail-on-warnings", false, "fail (exit 1) when any scored record carries a warning flag of any kind (not converged, outside training support, poor fit, shifted, too wide or narrow, near a fit-check threshold, degenerate weights, failed MCMC checks, …), after the accuracy gate")
	fs.BoolVar(&o.allowMixed, "allow-mixed", false, "accept results that mix profiles, commits or checkpoints, or whose profile is not the baseline's (by default the gate refuses to compare unlike runs)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	if err := o.check(); err != nil {
		return err
	}
	loaded, bad, err := loadStore(env, o.results)
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
		return badInput(noRecordsError("--results", o.results, ""))
	}
	// A gate (or a baseline) over records of several profiles, commits or
	// checkpoints compares unlike runs: its verdict means nothing unless
	// the mix is what the user wants.
	if len(loaded.Mixed) > 0 && !o.allowMixed {
		return badInput(fmt.Errorf("--results: %s holds unlike runs: %s; rerun into a fresh directory, or pass --allow-mixed if the mix is intended",
			o.results, strings.Join(loaded.Mixed, "; ")))
	}
	if o.write != "" {
		return writeCheckBaseline(env, recs, o)
	}
	return runGates(env, recs, o)
}

// check refuses flags that contradict each other. --rel and --abs are
// the tolerances written into a new baseline; the gate itself uses the
// baseline's own. Given without --write-baseline they would be ignored,
// and so would --baseline with it.
func (o checkOptions) check() error {
	if o.write == "" && (o.set["rel"] || o.set["abs"]) {
		return badInput(errors.New("--rel and --abs set the tolerances of a baseline written with --write-baseline; the gate uses those stored in --baseline"))
	}
	if o.write != "" && o.failWarned {
		return badInput(errors.New("--fail-on-warnings checks results against the gate; --write-baseline writes a baseline instead"))
	}
	if o.set["baseline"] && o.baseline == "" {
		return badInput(errors.New("--baseline: empty path (leave the flag out for the built-in smoke baseline)"))
	}
	if o.write != "" && o.set["baseline"] {
		return badInput(errors.New("--baseline and --write-baseline exclude each other: one checks against a baseline, the other writes one"))
	}
	if o.write != "" {
		for _, tol := range []struct {
			name string
			v    float64
		}{{"--rel", o.rel}, {"--abs", o.abs}} {
			if !(tol.v >= 0) || math.IsInf(tol.v, 0) {
				return badInput(fmt.Errorf("%s: must be finite and ≥ 0, got %g", tol.name, tol.v))
			}
		}
	}
	return nil
}

// writeCheckBaseline writes a baseline of recs at the flags' tolerances.
func writeCheckBaseline(env *cliEnv, recs []records.Record, o checkOptions) error {
	if err := checkOutputFile("--write-baseline", o.write); err != nil {
		return err
	}
	b := &reports.Baseline{
		Description: "accuracy baseline written by `afin check --write-baseline` from " + o.results,
		Profile:     soleProfile(recs),
		Tolerance:   reports.Tolerance{Relative: o.rel, Absolute: o.abs},
		Entries:     reports.Summarize(recs),
	}
	if len(b.Entries) == 0 {
		return badInput(fmt.Errorf("--write-baseline: %s has no scored records (every one of its %d records failed), so a baseline would gate nothing; not written", o.results, len(recs)))
	}
	if err := b.Validate(); err != nil {
		return badInput(fmt.Errorf("--write-baseline: %w", err))
	}
	if err := reports.WriteBaseline(o.write, b); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "wrote %d baseline entries to %s\n", len(b.Entries), o.write)
	return nil
}

// runGates runs the accuracy gate against the baseline, then the suites'
// own gates, then reports warnings (failing on them when asked).
func runGates(env *cliEnv, recs []records.Record, o checkOptions) error {
	// The default is the copy built into the binary, not a path relative
	// to the working directory: the gate is the same from anywhere.
	var base *reports.Baseline
	var err error
	if o.baseline == "" {
		base, err = reports.ParseBaseline(bench.SmokeBaseline(), "built-in "+bench.SmokeBaselineFile)
	} else {
		base, err = reports.ReadBaseline(o.baseline)
	}
	if err != nil {
		return badInput(err)
	}
	if err := sameProfile(recs, base, o); err != nil {
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
		return fmt.Errorf("accuracy gate failed: %s%s", res.Summary(len(base.Entries)), suitesHint(recs, base, o))
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
	if o.failWarned && len(warned) > 0 {
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

// soleProfile is the bench profile every record was made at, "" when
// they name none or several.
func soleProfile(recs []records.Record) string {
	p := ""
	for i := range recs {
		switch q := recs[i].Provenance.Profile; {
		case q == "":
		case p == "":
			p = q
		case q != p:
			return ""
		}
	}
	return p
}

// baselineName is how check's messages name the baseline in use.
func baselineName(o checkOptions) string {
	if o.baseline == "" {
		return "the built-in baseline (" + bench.SmokeBaselineFile + ")"
	}
	return "baseline " + o.baseline
}

// sameProfile refuses results of another profile than the baseline's: a
// quick run has more seeds and budgets than a smoke baseline, so the gate
// would fail on entries that are missing or new and say nothing of
// accuracy. It says what to run instead. --allow-mixed accepts the mix.
func sameProfile(recs []records.Record, base *reports.Baseline, o checkOptions) error {
	if base.Profile == "" || o.allowMixed {
		return nil
	}
	var other []string
	seen := map[string]bool{}
	for i := range recs {
		if p := recs[i].Provenance.Profile; p != "" && p != base.Profile && !seen[p] {
			seen[p] = true
			other = append(other, p)
		}
	}
	if len(other) == 0 {
		return nil
	}
	return fmt.Errorf("--results: %s holds %s-profile results and %s is the %s profile's; "+
		"gate them against a baseline of their own profile (`afin check --results KNOWN_GOOD_DIR --write-baseline FILE` from a known-good %s run, then `afin check --results %s --baseline FILE`), "+
		"or run the %s profile and gate that (`afin bench --suite SUITE --profile %s --results DIR && afin check --results DIR`; `go tool task check` for the smoke suite); --allow-mixed gates them anyway",
		o.results, strings.Join(other, "- and "), baselineName(o), base.Profile, other[0], o.results, base.Profile, base.Profile)
}

// suitesHint names, after a failed gate, the results' suites that the
// baseline has no entry for: their entries all count as not in the
// baseline, and the fix is a baseline of their own.
func suitesHint(recs []records.Record, base *reports.Baseline, o checkOptions) string {
	gated := map[string]bool{}
	for _, e := range base.Entries {
		gated[e.Suite] = true
	}
	var missing []string
	seen := map[string]bool{}
	for i := range recs {
		if s := recs[i].Suite; !gated[s] && !seen[s] {
			seen[s] = true
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s gates no %s results: write a baseline for them with `afin check --results KNOWN_GOOD_DIR --write-baseline FILE` and pass --baseline FILE",
		baselineName(o), strings.Join(missing, " or "))
}
