package main

import (
	"context"
	"fmt"

	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reports"
)

func runReport(ctx context.Context, env *cliEnv, args []string) error {
	if isCompare(args) {
		return runReportCompare(ctx, env, args)
	}
	fs := newFlagSet(env, "report", "--results DIR --out DIR [--quiet] | --compare A B [--markdown FILE]")
	resultsDir := fs.String("results", "results", "results directory: every *.jsonl file under it (subdirectories too) is merged")
	out := fs.String("out", "report", "output directory for index.html and tables/")
	quiet := fs.Bool("quiet", false, "do not print the tables")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkOutputDir("--out", *out); err != nil {
		return err
	}
	recs, warnings, err := loadResults(env, *resultsDir)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return badInput(fmt.Errorf("--results: no records in %s (run `afin bench` first)", *resultsDir))
	}
	rep, err := reports.Build(recs)
	if err != nil {
		return err
	}
	rep.Warnings = warnings
	if !*quiet {
		if err := rep.PrintTables(env.stdout); err != nil {
			return err
		}
	}
	index, err := rep.WriteDir(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "\nreport: %s (%d records, %d charts); tables: %s/tables/\n", index, rep.Records, rep.Charts(), *out)
	return nil
}

// loadResults reads a results directory for report and check: a record
// that breaks the schema or a key stored twice with different results is
// an error (exit 2: the directory is bad input); what was repaired or
// mixed is printed as one warning line each on stderr.
func loadResults(env *cliEnv, dir string) ([]records.Record, []string, error) {
	l, err := records.Load(dir)
	if err != nil {
		return nil, nil, badInput(fmt.Errorf("--results: %w", err))
	}
	if err := l.ConflictError(); err != nil {
		return nil, nil, badInput(fmt.Errorf("--results: %w", err))
	}
	for _, w := range l.Warnings {
		fmt.Fprintln(env.stderr, "warning:", w)
	}
	return l.Records, l.Warnings, nil
}
