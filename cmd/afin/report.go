package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/afin-bench/afin/afin/checkpoint"

	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reports"
)

func runReport(ctx context.Context, env *cliEnv, args []string) error {
	if isCompare(args) {
		return runReportCompare(ctx, env, args)
	}
	if isTrust(args) {
		return runReportTrust(ctx, env, args)
	}
	fs := newFlagSet(env, "report", "--results DIR --out DIR [--checkpoint DIR] [--quiet] | --compare A B [--markdown FILE] | trust --results DIR [--details]")
	resultsDir := fs.String("results", "results", "results directory: every *.jsonl file under it (subdirectories too) is merged")
	out := fs.String("out", "report", "output directory for index.html and tables/")
	quiet := fs.Bool("quiet", false, "do not print the tables")
	ckDir := fs.String("checkpoint", "", "the AFIN checkpoint the results ran with, described in the report's banner (default: AFIN_CHECKPOINT, then the shipped one); checked against the records' checkpoint hash")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkOutputDir("--out", *out); err != nil {
		return err
	}
	loaded, bad, err := loadStore(env, *resultsDir)
	if err != nil {
		return err
	}
	recs := loaded.Records
	if len(recs) == 0 {
		return badInput(noRecordsError("--results", *resultsDir, " (run `afin bench` first)"))
	}
	rep, err := reports.Build(recs)
	if err != nil {
		return err
	}
	rep.Warnings = loaded.Warnings
	rep.Problems = resultProblems(loaded, bad)
	for _, l := range rep.Outliers {
		fmt.Fprintln(env.stderr, "warning:", l)
	}
	rep.SetCheckpoint(describeCheckpoint(*ckDir))
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
	// The report is written (a person can look at it), but its means
	// left absurd values out: a program running report must see that too.
	if len(bad) > 0 {
		return fmt.Errorf("report written, but %d metric(s) were implausible and left out of it; first: %s", len(bad), bad[0])
	}
	return nil
}

// resultProblems are the lines the report states above everything else:
// plans the records do not complete, and metrics left out as implausible.
func resultProblems(l *records.Loaded, bad []records.ImplausibleMetric) []string {
	out := l.Incomplete()
	for _, b := range bad {
		out = append(out, b.String()+": left out of the means")
	}
	return out
}

// loadResults reads a results directory for report and check: a record
// that breaks the schema or a key stored twice with different results is
// an error (exit 2: the directory is bad input); what was repaired or
// mixed is printed as one warning line each on stderr.
func loadResults(env *cliEnv, dir string) ([]records.Record, []string, error) {
	l, _, err := loadStore(env, dir)
	if err != nil {
		return nil, nil, err
	}
	return l.Records, l.Warnings, nil
}

// loadStore is loadResults returning all the reader found, for a caller
// that acts on a mix (check) or on the problems: the metrics it left out
// as implausible (records.Implausible: they read as NaN, unscorable) and
// the plans the records do not complete, each printed on stderr with
// where it is.
func loadStore(env *cliEnv, dir string) (*records.Loaded, []records.ImplausibleMetric, error) {
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
	for _, w := range l.Incomplete() {
		fmt.Fprintln(env.stderr, "warning:", w)
	}
	bad := l.ExcludeImplausible()
	for _, b := range bad {
		fmt.Fprintf(env.stderr, "warning: %s: left out (read as unscorable)\n", b)
	}
	return l, bad, nil
}

// describeCheckpoint reads what the report's banner says about a
// checkpoint: its manifest, its hash (the records' provenance names the
// same hash) and, when the directory keeps it, the training log's last
// step and wall-clock time. A checkpoint that cannot be read is
// described by the error, so the report still renders and says so.
func describeCheckpoint(dir string) *reports.CheckpointInfo {
	if dir == "" {
		d, err := defaultCheckpoint()
		if err != nil {
			return &reports.CheckpointInfo{Err: err.Error()}
		}
		dir = d
	}
	m, err := checkpoint.ReadManifest(dir)
	if err != nil {
		return &reports.CheckpointInfo{Dir: dir, Err: err.Error()}
	}
	h, err := checkpoint.Hash(dir)
	if err != nil {
		return &reports.CheckpointInfo{Dir: dir, Err: err.Error()}
	}
	su := m.Support
	ck := &reports.CheckpointInfo{
		Dir: dir, Hash: h, Config: m.Config.Name, Decoder: m.Config.Decoder, Params: m.Params,
		Step: m.Step, Weights: m.Weights, Source: m.Source,
		Support: fmt.Sprintf("d %d–%d, N %d–%d; priors %s; likelihoods %s; designs %s", su.DMin, su.DMax, su.NMin, su.NMax,
			strings.Join(su.Priors, ", "), strings.Join(su.Likelihoods, ", "), strings.Join(su.Designs, ", ")),
	}
	ck.TrainSteps, ck.TrainSeconds = lastTrainLog(filepath.Join(dir, "train.jsonl"))
	return ck
}

// lastTrainLog is the step and seconds of a training log's last
// readable line (0, 0 without a log).
func lastTrainLog(path string) (int, float64) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var l struct {
			Step    int     `json:"step"`
			Seconds float64 `json:"seconds"`
		}
		if json.Unmarshal([]byte(lines[i]), &l) == nil && l.Seconds > 0 {
			return l.Step, l.Seconds
		}
	}
	return 0, 0
}
