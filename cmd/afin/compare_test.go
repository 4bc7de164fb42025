package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// comparePair writes two results directories from the committed smoke
// results: A as is, B with AFIN's M1 half as large again.
func comparePair(t *testing.T) (string, string) {
	t.Helper()
	recs, err := records.ReadDir(filepath.Join("..", "..", "reports", "testdata", "smoke"))
	if err != nil || len(recs) == 0 {
		t.Fatalf("reading the smoke results: %v (%d records)", err, len(recs))
	}
	dir := t.TempDir()
	write := func(name string, recs []records.Record) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(d, "synthetic.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := records.WriteRecords(f, recs); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := write("a", recs)
	for i := range recs {
		if recs[i].Method == "afin" {
			recs[i].M1 *= 1.5
		}
	}
	return a, write("b", recs)
}

// TestReportCompare runs `afin report --compare A B`: it exits 0 with the
// comparison table (AFIN's M1 worse in each of the 3 tiers, nothing else
// flagged), the rule, and the Markdown when asked; bad input exits 2 with
// one line.
func TestReportCompare(t *testing.T) {
	a, b := comparePair(t)
	md := filepath.Join(t.TempDir(), "cmp.md")
	code, stdout, stderr := cliRun(t, "report", "--compare", a, b, "--markdown", md)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Comparison: A = " + a, "Medium (d=8, N=64)", "WORSE", "Flagged when", "comparison: 3 worse and 0 better beyond noise"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	body, err := os.ReadFile(md)
	if err != nil || !strings.Contains(string(body), "| **WORSE** ") {
		t.Errorf("markdown %q (%v): want a bold WORSE cell", body, err)
	}
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"one directory", []string{"report", "--compare", a}, "needs two results directories"},
		{"three directories", []string{"report", "--compare", a, b, a}, "got 3"},
		{"missing directory", []string{"report", "--compare", a, filepath.Join(a, "nope")}, "no records in"},
		{"bad z", []string{"report", "--compare", a, b, "--z", "0"}, "--z must be > 0"},
		{"unknown flag", []string{"report", "--compare", a, b, "--bogus"}, "bogus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cliRun(t, tc.args...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d, stderr %q; want 2 and one line containing %q", code, stderr, tc.msg)
			}
		})
	}
}

// TestCheckPrintsComparison checks that a failing gate prints the
// comparison against its baseline (a passing one does not).
func TestCheckPrintsComparison(t *testing.T) {
	a, b := comparePair(t)
	baseline := filepath.Join(t.TempDir(), "base.json")
	if code, _, stderr := cliRun(t, "check", "--results", a, "--write-baseline", baseline); code != 0 {
		t.Fatalf("write baseline: exit %d: %s", code, stderr)
	}
	if code, stdout, _ := cliRun(t, "check", "--results", a, "--baseline", baseline); code != 0 || strings.Contains(stdout, "Comparison:") {
		t.Errorf("passing gate: exit %d, comparison printed %v", code, strings.Contains(stdout, "Comparison:"))
	}
	code, stdout, stderr := cliRun(t, "check", "--results", b, "--baseline", baseline)
	if code != 1 || !strings.Contains(stderr, "accuracy gate failed") {
		t.Fatalf("exit %d, stderr %q; want 1 and the gate's verdict", code, stderr)
	}
	for _, want := range []string{"Comparison: A = baseline, B = this run", "│ all ", "WORSE"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
}
