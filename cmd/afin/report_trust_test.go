package main

import (
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// TestReportTrust drives `afin report trust` on a results directory of
// hand-made records: the summary counts each class, --details lists each
// answer, a record without marginals is left out and counted, and
// --suite keeps one suite.
func TestReportTrust(t *testing.T) {
	dir := t.TempDir()
	st, err := records.OpenStore(dir, "external.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(suite, setting, method string, mean, lo, hi float64) *records.Record {
		r := &records.Record{Suite: suite, Setting: setting, Method: method, BudgetKind: "draws", Budget: 100,
			Provenance: records.Provenance{Profile: "smoke"}}
		if mean >= 0 {
			r.Marginals = &records.Marginals{MaxMeanErr: records.Num(mean), MinSDRatio: records.Num(lo), MaxSDRatio: records.Num(hi)}
		}
		return r
	}
	flagged := mk("external", "b", "afin-snis", 0.3, 0.9, 1.1)
	flagged.Diagnostics = map[string]records.Num{"pareto_k": 1.5}
	for _, r := range []*records.Record{
		mk("external", "a", "afin", 40, 0.1, 3),
		mk("external", "a", "nuts", 0.1, 0.95, 1.05),
		flagged,
		mk("external", "c", "afin", -1, 0, 0), // an old record: no marginals
		mk("synthetic", "s", "afin", 0.1, 1, 1),
	} {
		if err := st.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	code, out, stderr := runCLI("report", "trust", "--results", dir, "--suite", "external", "--details")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"| afin      | 1 sd, 0.5–2      | 0                | 0                               | 0              | 1             | 0                  |",
		"| afin-snis | 1 sd, 0.5–2      | 0                | 1                               | 0              | 0             | 0                  |",
		"| nuts      | 0.5 sd, 0.8–1.25 | 1                | 0                               | 0              | 0             | 0                  |",
		"1 record(s) without per-coordinate errors",
		"k̂ 1.5 > 0.7",
		"Trust: every answer",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "| afin ") != 2 { // one summary row, one detail row (synthetic left out)
		t.Errorf("want afin in one summary and one detail row:\n%s", out)
	}

	for _, args := range [][]string{
		{"report", "trust", "--results", t.TempDir()},
		{"report", "trust", "--results", dir, "--suite", "uci"},
		{"report", "trust", "--bogus"},
	} {
		if code, _, stderr := runCLI(args...); code != 2 {
			t.Errorf("afin %s: exit %d (%s), want 2", strings.Join(args, " "), code, stderr)
		}
	}
}
