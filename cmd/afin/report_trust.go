package main

import (
	"context"
	"fmt"

	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reports"
)

// isTrust reports whether args ask for `afin report trust`.
func isTrust(args []string) bool { return len(args) > 0 && args[0] == "trust" }

// runReportTrust is `afin report trust --results DIR`: each method's
// answers counted as accurate or wrong, flagged or silent (reports.Classify),
// printed as Markdown; --details adds one row per answer.
func runReportTrust(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "report trust", "--results DIR [--suite S] [--details]")
	resultsDir := fs.String("results", "results/external", "results directory: every *.jsonl file under it (subdirectories too) is merged")
	suite := fs.String("suite", "", "only this suite's records (default: every suite in the directory)")
	details := fs.Bool("details", false, "also print every answer with its errors, flags and class")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	recs, _, err := loadResults(env, *resultsDir)
	if err != nil {
		return err
	}
	if *suite != "" {
		var kept []records.Record
		for _, r := range recs {
			if r.Suite == *suite {
				kept = append(kept, r)
			}
		}
		recs = kept
	}
	if len(recs) == 0 {
		return badInput(noRecordsError("--results", *resultsDir, " (run `afin bench --suite external` first)"))
	}
	tables := []*reports.Table{reports.TrustTable(recs, "trust")}
	if *details {
		tables = append(tables, reports.TrustDetailTable(recs, "trust_detail"))
	}
	for i, t := range tables {
		md, err := t.Markdown()
		if err != nil {
			return fmt.Errorf("report trust: %w", err)
		}
		if i > 0 {
			fmt.Fprintln(env.stdout)
		}
		fmt.Fprint(env.stdout, md)
	}
	return nil
}
