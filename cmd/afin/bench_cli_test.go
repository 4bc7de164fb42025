package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestBenchFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "--suite is required"},
		{[]string{"bench", "--suite", "nope"}, "unknown suite"},
		{[]string{"bench", "--suite", "synthetic", "--profile", "huge"}, "unknown profile"},
		{[]string{"bench", "--suite", "synthetic", "--shard", "3/3"}, "--shard"},
		{[]string{"bench", "--suite", "synthetic", "--seeds", "1,x"}, "--seeds"},
		{[]string{"bench", "--suite", "synthetic", "--methods", "frvi-snis", "--results", "/nonexistent/x"}, "not part of this suite"},
		{[]string{"bench", "--suite", "synthetic", "--checkpoint-flow", "x", "--results", "/nonexistent/x"}, "--checkpoint-flow is a flag of suite decoders"},
		{[]string{"bench", "--suite", "decoders", "--checkpoint-flow", "x", "--results", "/nonexistent/x"}, "--checkpoint-gaussian is required"},
		{[]string{"report", "--results", "/nonexistent/dir"}, "no records"},
		{[]string{"check", "--results", "/nonexistent/dir"}, "no records"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("afin %s: exit %d, stderr %q; want exit 2 mentioning %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// afin bench refuses, before any work, a results directory holding a
// conflicting duplicate (naming the key and both lines) and one whose
// records carry another commit (naming both, unless --allow-mixed).
func TestBenchRefusesConflictsAndMixedCommits(t *testing.T) {
	if records.BinaryOf(records.CurrentProvenance(context.Background(), "", "")) == "unknown" {
		t.Skip("neither a commit nor a build known here: a resume cannot differ in commit")
	}
	dir := t.TempDir()
	writeStore(t, dir, 0.05) // records without a commit
	args := []string{"bench", "--suite", "synthetic", "--profile", "smoke", "--methods", "nuts", "--seeds", "0", "--results", dir}
	code, _, stderr := runCLI(args...)
	if code != 2 || !strings.Contains(stderr, "another commit or build (4 of commit unknown)") || !strings.Contains(stderr, "--allow-mixed") {
		t.Fatalf("resume of another commit: exit %d, stderr %q", code, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "synthetic.jsonl"))
	first, _, _ := strings.Cut(string(data), "\n")
	os.WriteFile(filepath.Join(dir, "stray.jsonl"), []byte(strings.Replace(first, `"m1":0.1`, `"m1":0.3`, 1)+"\n"), 0o644)
	code, _, stderr = runCLI(append(args, "--allow-mixed")...)
	if code != 2 || !strings.Contains(stderr, "synthetic|a/b/easy|0|nuts|||draws|100") || !strings.Contains(stderr, "stray.jsonl:1") || !strings.Contains(stderr, "synthetic.jsonl:1") {
		t.Fatalf("conflicting duplicate: exit %d, stderr %q", code, stderr)
	}
}

// writeStore writes a tiny results store with one method at two budgets.
func writeStore(t *testing.T, dir string, sw2 float64) {
	t.Helper()
	var recs []records.Record
	for _, setting := range []string{"a/b/easy", "c/d/hard"} {
		for _, b := range []int{100, 400} {
			recs = append(recs, records.Record{Suite: "synthetic", Setting: setting, Group: strings.Split(setting, "/")[2],
				Method: "nuts", BudgetKind: "draws", Budget: b, M1: 0.1, M2: 0.2, SW2: records.Num(sw2 * 100 / float64(b)), Seconds: records.Num(float64(b) / 1e4)})
		}
	}
	os.MkdirAll(dir, 0o755)
	f, err := os.Create(filepath.Join(dir, "synthetic.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := records.WriteRecords(f, recs); err != nil {
		t.Fatal(err)
	}
}

// The accuracy gate passes on the results it was written from and fails
// (exit 1, with the regressed row flagged) when SW2 gets worse beyond the
// tolerance.
func TestCheckGateCLI(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	writeStore(t, good, 0.05)
	writeStore(t, bad, 0.08) // +60%, beyond the 25% tolerance
	baseline := filepath.Join(dir, "baseline.json")
	if code, _, stderr := runCLI("check", "--results", good, "--write-baseline", baseline); code != 0 {
		t.Fatalf("write-baseline: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := runCLI("check", "--results", good, "--baseline", baseline); code != 0 {
		t.Fatalf("gate fails on its own baseline: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := runCLI("check", "--results", bad, "--baseline", baseline)
	if code != 1 || !strings.Contains(stdout, "REGRESSED [SW2]") || !strings.Contains(stderr, "accuracy gate failed: 2 regressed") {
		t.Fatalf("worse SW2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, _ := runCLI("check", "--results", good, "--baseline", filepath.Join(dir, "missing.json")); code != 2 {
		t.Errorf("missing baseline file: exit %d, want 2", code)
	}
}

// Flagged records pass the accuracy gate with a warning on stderr, and
// fail it (exit 1, naming the method and the flag) with
// --fail-on-warnings; unflagged records pass both ways.
func TestCheckFailOnWarnings(t *testing.T) {
	dir := t.TempDir()
	clean, flagged := filepath.Join(dir, "clean"), filepath.Join(dir, "flagged")
	writeStore(t, clean, 0.05)
	writeStore(t, flagged, 0.05)
	path := filepath.Join(flagged, "synthetic.jsonl")
	recs, err := records.ReadDir(flagged)
	if err != nil {
		t.Fatal(err)
	}
	recs[0].Flags = map[string]string{"degenerate": "the weighted answer rests on 1 effective draws of 100"}
	recs[0].Warnings = []string{recs[0].Flags["degenerate"]}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := records.WriteRecords(f, recs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	baseline := filepath.Join(dir, "baseline.json")
	if code, _, stderr := runCLI("check", "--results", clean, "--write-baseline", baseline); code != 0 {
		t.Fatalf("write-baseline: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		name, results string
		fail          bool
		code          int
		stderr        string
	}{
		{"clean", clean, false, 0, ""},
		{"clean, --fail-on-warnings", clean, true, 0, ""},
		{"flagged", flagged, false, 0, "afin check: warning: NUTS: 1 of 4 records carry a warning (1/4 degenerate weights or sd 0)"},
		{"flagged, --fail-on-warnings", flagged, true, 1, "warning gate failed (--fail-on-warnings): 1 method(s) have flagged records; first: NUTS"},
	} {
		args := []string{"check", "--results", tc.results, "--baseline", baseline}
		if tc.fail {
			args = append(args, "--fail-on-warnings")
		}
		code, _, stderr := runCLI(args...)
		if code != tc.code || (tc.stderr == "") != (stderr == "") || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s: exit %d (want %d), stderr %q (want %q)", tc.name, code, tc.code, stderr, tc.stderr)
		}
	}
}

func TestReportCLI(t *testing.T) {
	dir := t.TempDir()
	res, out := filepath.Join(dir, "res"), filepath.Join(dir, "out")
	writeStore(t, res, 0.05)
	code, stdout, stderr := runCLI("report", "--results", res, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Synthetic suite: headline") || !strings.Contains(stdout, "index.html") {
		t.Errorf("stdout:\n%s", stdout)
	}
	for _, f := range []string{"index.html", "tables/headline_synthetic.tex", "tables/headline_synthetic.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// Records written before the results package existed (a smoke run of the
// first release, in records/testdata) still make a report.
func TestReportReadsFirstSchema(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI("report", "--results", filepath.Join("..", "..", "records", "testdata"), "--out", out)
	if code != 0 || !strings.Contains(stdout, "6 records") {
		t.Fatalf("exit %d: stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestBenchOpenMLRefused: a data directory without the files, or a bad
// raw file, is bad input (exit 2, one line naming the problem) and writes
// no results.
func TestBenchOpenMLRefused(t *testing.T) {
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "haberman"), 0o755)
	os.WriteFile(filepath.Join(bad, "haberman", "haberman.arff"), []byte("@relation h\n@attribute a string\n@data\nx\n"), 0o644)
	for _, c := range []struct {
		env, want string
	}{
		{filepath.Join(t.TempDir(), "none"), "AFIN_OPENML_DIR"},
		{t.TempDir(), "lacks 3 of 3 raw files"},
	} {
		t.Setenv("AFIN_OPENML_DIR", c.env)
		res := filepath.Join(t.TempDir(), "r")
		code, _, stderr := runCLI("bench", "--suite", "openml", "--profile", "smoke", "--results", res)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("data dir %q: exit %d, stderr %q", c.env, code, stderr)
		}
		if _, err := os.Stat(res); err == nil {
			t.Errorf("data dir %q: results directory created", c.env)
		}
	}
	// A bad file: exit 2 naming file and line (the other two files are
	// the repository's copies, linked beside it).
	src := filepath.Join("..", "..", "datasets", "openml")
	for _, ds := range []string{"heart-statlog", "blood-transfusion-service-center"} {
		os.Symlink(mustAbs(t, filepath.Join(src, ds)), filepath.Join(bad, ds))
	}
	res := filepath.Join(t.TempDir(), "r")
	code, _, stderr := runCLI("bench", "--suite", "openml", "--profile", "smoke", "--results", res, "--data-dir", bad)
	if code != 2 || !strings.Contains(stderr, "haberman.arff:2: @attribute: a: unsupported type") {
		t.Errorf("bad file: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(res); err == nil {
		t.Error("bad file: results directory created")
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
