package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// corrupt writes writeStore's four records (two settings, one unit each
// with two budgets) with their plan, in shards shards, then applies edit
// to the records before they are written.
func corrupt(t *testing.T, dir string, shards int, edit func([]records.Record) []records.Record) {
	t.Helper()
	writeStore(t, dir, 0.05)
	recs, err := records.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan := &records.Plan{Suite: "synthetic", Profile: "", Shards: shards}
	units := map[string]int{}
	for _, r := range recs {
		i, ok := units[r.UnitKey()]
		if !ok {
			i = len(plan.Units)
			units[r.UnitKey()] = i
			plan.Units = append(plan.Units, records.PlanUnit{Unit: r.UnitKey(), Shard: i % shards})
		}
		plan.Units[i].Points = append(plan.Units[i].Points, r.Key())
	}
	if err := records.WritePlan(dir, plan); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "synthetic.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := records.WriteRecords(f, edit(recs)); err != nil {
		t.Fatal(err)
	}
}

// Report and check on corrupted results directories: an absurd metric
// (m1 = 1e308) is named by file:line, left out of the report, which says
// so at its top and exits 1, and refused by the gate; a record deleted,
// or a shard of a 2-shard plan missing, reads "incomplete: X of Y units"
// at the top of the report and on stderr of both.
func TestReportAndCheckOnCorruptedResults(t *testing.T) {
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name, "synthetic.jsonl") }
	for _, tc := range []struct {
		name       string
		shards     int
		edit       func([]records.Record) []records.Record
		reportCode int
		checkCode  int
		problem    string
	}{
		{"absurd m1", 1, func(r []records.Record) []records.Record { r[1].M1 = 1e308; return r }, 1, 2,
			file("absurd m1") + ":2: m1 = 1e+308 is implausible: beyond 1e+12 (the ceiling 1e+12 of any metric)"},
		{"a record deleted", 1, func(r []records.Record) []records.Record { return r[1:] }, 0, 1,
			"incomplete: 1 of 2 units (suite synthetic, profile ); first missing: synthetic|a/b/easy|0|nuts| (1 of 2 points)"},
		{"one shard of two", 2, func(r []records.Record) []records.Record { return r[:2] }, 0, 1,
			"incomplete: 1 of 2 units (suite synthetic, profile , 2 shards); no record of shard(s) 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, out := filepath.Join(dir, tc.name), filepath.Join(dir, tc.name+"-report")
			corrupt(t, res, tc.shards, tc.edit)
			code, _, stderr := runCLI("report", "--results", res, "--out", out, "--quiet")
			if code != tc.reportCode || !strings.Contains(stderr, "warning: "+tc.problem) {
				t.Errorf("report: exit %d (want %d), stderr:\n%s\nwant a warning %q", code, tc.reportCode, stderr, tc.problem)
			}
			page, err := os.ReadFile(filepath.Join(out, "index.html"))
			if err != nil {
				t.Fatal(err)
			}
			html := string(page)
			banner := strings.Index(html, `id="problems"`)
			first := strings.Index(html, "<h2")
			if banner < 0 || first >= 0 && banner > first || !strings.Contains(html, tc.problem) {
				t.Errorf("the report's top does not say %q (banner at %d, first section at %d)", tc.problem, banner, first)
			}
			// The banner names the value; no number of the report's own does.
			if _, after, _ := strings.Cut(html[max(banner, 0):], "</div>"); strings.Contains(after, "e+30") {
				t.Error("the absurd value reached the report's numbers")
			}
			code, _, stderr = runCLI("check", "--results", res, "--baseline", filepath.Join("..", "..", "bench", "baselines", "smoke.json"))
			if code != tc.checkCode || !strings.Contains(stderr, tc.problem) {
				t.Errorf("check: exit %d (want %d), stderr:\n%s\nwant %q", code, tc.checkCode, stderr, tc.problem)
			}
		})
	}
}
