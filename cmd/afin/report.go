package main

import (
	"context"
	"fmt"

	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reports"
)

func runReport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "report", "--results DIR --out DIR [--quiet]")
	resultsDir := fs.String("results", "results", "results directory: every *.jsonl file under it (subdirectories too) is merged")
	out := fs.String("out", "report", "output directory for index.html and tables/")
	quiet := fs.Bool("quiet", false, "do not print the tables")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	recs, err := records.ReadDir(*resultsDir)
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
