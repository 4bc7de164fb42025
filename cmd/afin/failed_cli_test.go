package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// appendRecord appends r to the store's synthetic.jsonl.
func appendRecord(t *testing.T, dir string, r *records.Record) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "synthetic.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := records.WriteRecords(f, []records.Record{*r}); err != nil {
		t.Fatal(err)
	}
}

// A failed unit fails the gate by name and shows in the report's Failures
// section; once a rerun's success follows it, report and gate take the
// success and pass.
func TestFailedUnitsInReportAndGate(t *testing.T) {
	dir := t.TempDir()
	good, failed, retried := filepath.Join(dir, "good"), filepath.Join(dir, "failed"), filepath.Join(dir, "retried")
	baseline := filepath.Join(dir, "baseline.json")
	writeStore(t, good, 0.05)
	if code, _, stderr := runCLI("check", "--results", good, "--write-baseline", baseline); code != 0 {
		t.Fatalf("write-baseline: exit %d: %s", code, stderr)
	}
	// The failed store lacks one scored point and holds its failure.
	writeStore(t, failed, 0.05)
	data, _ := os.ReadFile(filepath.Join(failed, "synthetic.jsonl"))
	lines := strings.SplitAfter(string(data), "\n")
	os.WriteFile(filepath.Join(failed, "synthetic.jsonl"), []byte(strings.Join(lines[1:], "")), 0o644)
	f := &records.Record{Suite: "synthetic", Setting: "a/b/easy", Group: "easy", Method: "nuts", BudgetKind: "draws", Budget: 100}
	f.MarkFailed("exec:x at draws 100: exit status 3; output tail: the sampler diverged")
	appendRecord(t, failed, f)
	// The retried store holds each success and a failure of one key (the
	// reader prefers the success whatever the order).
	writeStore(t, retried, 0.05)
	appendRecord(t, retried, f)

	cases := []struct {
		name, results string
		code          int
		want          string // in stderr
	}{
		{"failed unit", failed, 1, "a/b/easy seed 0 NUTS at 100 draws: exec:x at draws 100: exit status 3"},
		{"superseded by a success", retried, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI("check", "--results", tc.results, "--baseline", baseline)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("check: exit %d, want %d with %q\n%s\n%s", code, tc.code, tc.want, stdout, stderr)
			}
			out := filepath.Join(dir, "report-"+filepath.Base(tc.results))
			code, stdout, stderr = runCLI("report", "--results", tc.results, "--out", out)
			if code != 0 || strings.Contains(stdout, "Failed units") != (tc.code != 0) {
				t.Fatalf("report: exit %d, failures shown %v\n%s\n%s", code, strings.Contains(stdout, "Failed units"), stdout, stderr)
			}
		})
	}
}
