package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// writeRecords writes recs to dir/name.
func writeRecords(t *testing.T, dir, name string, recs []records.Record) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := records.WriteRecords(f, recs); err != nil {
		t.Fatal(err)
	}
}

// openmlStore writes openml records of one method with the given held-out
// accuracy.
func openmlStore(t *testing.T, dir string, acc float64, failed bool) {
	t.Helper()
	var recs []records.Record
	nan := records.Num(math.NaN())
	for _, ds := range []string{"blood", "diabetes"} {
		r := records.Record{Suite: "openml", Setting: ds, Group: ds, Method: "nuts", BudgetKind: "draws", Budget: 400,
			M1: nan, M2: nan, SW2: nan, Seconds: 1,
			Diagnostics: map[string]records.Num{"test_acc": records.Num(acc), "test_nll": 0.45, "test_auc": 0.85},
			Provenance:  records.Provenance{GitCommit: "c0ffee", Profile: "smoke"}}
		if failed {
			r.Error, r.Diagnostics = "nuts: out of memory", nil
		}
		recs = append(recs, r)
	}
	writeRecords(t, dir, "openml.jsonl", recs)
}

// Row 5 of issue 40: --write-baseline on openml results writes their
// predictive metrics and the gate fails a worse accuracy; results with
// no scored record write nothing (exit 2, one line).
func TestCheckWriteBaselinePredictive(t *testing.T) {
	dir := t.TempDir()
	good, worse, failed := filepath.Join(dir, "good"), filepath.Join(dir, "worse"), filepath.Join(dir, "failed")
	openmlStore(t, good, 0.8, false)
	openmlStore(t, worse, 0.6, false)
	openmlStore(t, failed, 0.8, true)
	baseline := filepath.Join(dir, "b.json")
	code, stdout, stderr := runCLI("check", "--results", good, "--write-baseline", baseline)
	if code != 0 || !strings.Contains(stdout, "wrote 1 baseline entries") {
		t.Fatalf("write-baseline on openml results: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCLI("check", "--results", good, "--baseline", baseline); code != 0 {
		t.Fatalf("gate fails on its own baseline: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("check", "--results", worse, "--baseline", baseline)
	if code != 1 || !strings.Contains(stdout, "REGRESSED [test acc]") {
		t.Errorf("accuracy 0.8 → 0.6: exit %d, want 1 and test acc regressed\n%s%s", code, stdout, stderr)
	}
	empty := filepath.Join(dir, "empty.json")
	code, _, stderr = runCLI("check", "--results", failed, "--write-baseline", empty)
	if code != 2 || !strings.Contains(stderr, "no scored records") {
		t.Errorf("write-baseline from failed records only: exit %d, stderr %q; want 2 and a refusal", code, stderr)
	}
	if _, err := os.Stat(empty); err == nil {
		t.Error("a refused baseline was written")
	}
}

// Row 5 of issue 40: results of another profile checked against the
// built-in smoke baseline are refused with what to run instead; results
// of a suite the baseline does not gate fail with how to gate them.
func TestCheckBuiltinBaselineOtherProfile(t *testing.T) {
	dir := t.TempDir()
	quick := filepath.Join(dir, "quick")
	var recs []records.Record
	for _, b := range []int{100, 400} {
		recs = append(recs, records.Record{Suite: "synthetic", Setting: "a/b/easy", Group: "easy", Method: "nuts",
			BudgetKind: "draws", Budget: b, M1: 0.1, M2: 0.2, SW2: 0.1, Seconds: 1,
			Provenance: records.Provenance{GitCommit: "c0ffee", Profile: "quick"}})
	}
	writeRecords(t, quick, "synthetic.jsonl", recs)
	code, _, stderr := runCLI("check", "--results", quick)
	for _, want := range []string{"quick-profile results", "is the smoke profile's", "--write-baseline", "--baseline FILE", "--profile smoke"} {
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("quick results against the built-in baseline: exit %d, stderr %q lacks %q", code, stderr, want)
		}
	}
	smokeOpenML := filepath.Join(dir, "openml")
	openmlStore(t, smokeOpenML, 0.8, false)
	code, _, stderr = runCLI("check", "--results", smokeOpenML)
	if code != 1 || !strings.Contains(stderr, "gates no openml results") {
		t.Errorf("openml results against the built-in baseline: exit %d, stderr %q; want 1 and a hint", code, stderr)
	}
}

// Row 10 of issue 40: a NaN metric prints as NaN, not ∞, and regresses.
func TestCheckPrintsNaN(t *testing.T) {
	dir := t.TempDir()
	good, broken := filepath.Join(dir, "good"), filepath.Join(dir, "nan")
	writeStore(t, good, 0.05)
	recs, err := records.ReadDir(good)
	if err != nil {
		t.Fatal(err)
	}
	recs[0].M1 = records.Num(math.NaN())
	writeRecords(t, broken, "synthetic.jsonl", recs)
	baseline := filepath.Join(dir, "b.json")
	if code, _, stderr := runCLI("check", "--results", good, "--write-baseline", baseline); code != 0 {
		t.Fatalf("write-baseline: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI("check", "--results", broken, "--baseline", baseline)
	if code != 1 || !strings.Contains(stdout, "NaN /") || strings.Contains(stdout, "∞") || !strings.Contains(stdout, "REGRESSED [M1]") {
		t.Errorf("m1 = NaN: exit %d, want 1, NaN printed and M1 regressed\n%s%s", code, stdout, stderr)
	}
}

// Row 8 of issue 40: `afin report` says, on stderr and in the report,
// that one NUTS record's m1 of 50 (over a thousand times its setting's
// median) is an outlier, naming the rule.
func TestReportNamesOutlier(t *testing.T) {
	dir := t.TempDir()
	var recs []records.Record
	for s := range 12 {
		for _, b := range []int{100, 300, 1000, 3000} {
			m1 := 0.03 * (1 + 0.1*float64(s%5)) * 100 / float64(b+100)
			recs = append(recs, records.Record{Suite: "synthetic", Setting: "p/l" + string(rune('a'+s)) + "/easy", Group: "easy",
				Method: "nuts", BudgetKind: "draws", Budget: b, M1: records.Num(m1), M2: records.Num(2 * m1), SW2: records.Num(m1 / 2), Seconds: 1,
				Provenance: records.Provenance{GitCommit: "c0ffee", Profile: "quick"}})
		}
	}
	recs[4*3+3].M1 = 50
	res := filepath.Join(dir, "results")
	writeRecords(t, res, "synthetic.jsonl", recs)
	code, _, stderr := runCLI("report", "--results", res, "--out", filepath.Join(dir, "report"), "--quiet")
	if code != 0 || !strings.Contains(stderr, "p/ld/easy seed 0 NUTS at 3000 draws: m1 50.0") || !strings.Contains(stderr, "outlier rule") {
		t.Errorf("report over an m1 of 50: exit %d, stderr %q; want exit 0 and the record named", code, stderr)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `id="outliers"`) || !strings.Contains(string(html), "more than 100× above or below the median") {
		t.Error("index.html does not mark the outlier with its rule")
	}
}
