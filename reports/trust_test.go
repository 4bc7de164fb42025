package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

func marg(mean, lo, hi float64) *records.Marginals {
	return &records.Marginals{MaxMeanErr: records.Num(mean), MinSDRatio: records.Num(lo), MaxSDRatio: records.Num(hi)}
}

func diags(kv ...any) map[string]records.Num {
	out := map[string]records.Num{}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = records.Num(kv[i+1].(float64))
	}
	return out
}

// TestClassify covers the four classes under both tolerance sets, every
// kind of flag, the tolerance edges and the records that cannot be judged.
func TestClassify(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		rec   records.Record
		class int
		ok    bool
	}{
		// Amortised tolerance: 1 sd, 0.5–2.
		{"afin accurate silent", records.Record{Method: "afin", Marginals: marg(0.9, 0.6, 1.9)}, AccurateSilent, true},
		{"afin at the edges", records.Record{Method: "afin", Marginals: marg(1, 0.5, 2)}, AccurateSilent, true},
		{"afin mean off", records.Record{Method: "afin", Marginals: marg(1.01, 1, 1)}, WrongSilent, true},
		{"afin sd too narrow", records.Record{Method: "afin", Marginals: marg(0, 0.49, 1)}, WrongSilent, true},
		{"afin sd too wide", records.Record{Method: "afin", Marginals: marg(0, 1, 2.01)}, WrongSilent, true},
		{"afin wrong, outside support", records.Record{Method: "afin", Marginals: marg(40, 1, 1), OutsideSupport: "prior scale 100 > 1"}, WrongFlagged, true},
		{"afin-snis accurate, k̂ high", records.Record{Method: "afin-snis", Marginals: marg(0.2, 0.9, 1.1), Diagnostics: diags("pareto_k", 0.9)}, AccurateFlagged, true},
		{"afin-snis k̂ NaN flags", records.Record{Method: "afin-snis", Marginals: marg(3, 0.9, 1.1), Diagnostics: diags("pareto_k", nan)}, WrongFlagged, true},
		{"afin-snis k̂ +Inf flags", records.Record{Method: "afin-snis", Marginals: marg(3, 0.9, 1.1), Diagnostics: diags("pareto_k", math.Inf(1))}, WrongFlagged, true},
		{"afin-snis k̂ 0.7 is silent", records.Record{Method: "afin-snis", Marginals: marg(3, 0.9, 1.1), Diagnostics: diags("pareto_k", 0.7)}, WrongSilent, true},
		{"afin warning", records.Record{Method: "afin", Marginals: marg(0.1, 1, 1), Warnings: []string{"k̂ 1.3"}}, AccurateFlagged, true},
		{"auto NUTS stage ignores the refused k̂", records.Record{Method: "auto", Marginals: marg(0.3, 0.9, 1.1),
			Diagnostics: diags("auto_pareto_k", 5.0, "rhat", 1.002, "divergences", 0.0, "ess_bulk", 800.0)}, AccurateSilent, true},
		{"auto 0.8 sd is accurate (amortised)", records.Record{Method: "auto", Marginals: marg(0.8, 0.6, 1.5)}, AccurateSilent, true},
		// Strict tolerance: 0.5 sd, 0.8–1.25.
		{"nuts accurate silent", records.Record{Method: "nuts", Marginals: marg(0.5, 0.8, 1.25), Diagnostics: diags("rhat", 1.01, "divergences", 0.0, "ess_bulk", 100.0)}, AccurateSilent, true},
		{"nuts 0.8 sd is wrong (strict)", records.Record{Method: "nuts", Marginals: marg(0.8, 0.9, 1.1), Diagnostics: diags("rhat", 1.0, "ess_bulk", 500.0)}, WrongSilent, true},
		{"nuts sd ratio 1.3 is wrong", records.Record{Method: "nuts", Marginals: marg(0.1, 0.9, 1.3)}, WrongSilent, true},
		{"nuts R̂ flags", records.Record{Method: "nuts", Marginals: marg(2, 0.5, 1), Diagnostics: diags("rhat", 1.05)}, WrongFlagged, true},
		{"nuts R̂ NaN flags", records.Record{Method: "nuts", Marginals: marg(0.1, 1, 1), Diagnostics: diags("rhat", nan)}, AccurateFlagged, true},
		{"nuts divergences flag", records.Record{Method: "nuts", Marginals: marg(0.1, 1, 1), Diagnostics: diags("divergences", 3.0)}, AccurateFlagged, true},
		{"nuts low ESS flags", records.Record{Method: "nuts", Marginals: marg(0.1, 1, 1), Diagnostics: diags("ess_bulk", 40.0)}, AccurateFlagged, true},
		{"frvi not converged, accurate", records.Record{Method: "frvi", Marginals: marg(0.1, 0.95, 1.05), NotConverged: "k̂ 0.8"}, AccurateFlagged, true},
		{"frvi wrong silent", records.Record{Method: "frvi", Marginals: marg(0.6, 0.95, 1.05)}, WrongSilent, true},
		// Unjudgeable and failed.
		{"NaN marginals are wrong", records.Record{Method: "frvi", Marginals: marg(nan, nan, nan)}, WrongSilent, true},
		{"failed record", records.Record{Method: "auto", Error: "no stage passed"}, Failed, true},
		{"old record without marginals", records.Record{Method: "afin"}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := Classify(&tc.rec)
			if ok != tc.ok || (ok && c != tc.class) {
				t.Errorf("Classify = %d (%s), %v; want %d (%s), %v; flags %v", c, ClassName(c), ok, tc.class, ClassName(tc.class), tc.ok, TrustFlags(&tc.rec))
			}
		})
	}
}

// TestTrustTableCounts checks the table's counts, its method order and
// that proposal-stage records and unjudgeable ones are left out.
func TestTrustTableCounts(t *testing.T) {
	recs := []records.Record{
		{Method: "nuts", Setting: "a", Marginals: marg(0.1, 1, 1)},
		{Method: "afin", Setting: "a", Marginals: marg(5, 1, 1)},
		{Method: "afin", Setting: "b", Marginals: marg(5, 1, 1), OutsideSupport: "x"},
		{Method: "afin", Setting: "c", Marginals: marg(0.2, 1, 1)},
		{Method: "afin-snis", Setting: "a", Stage: "proposal", Marginals: marg(9, 1, 1)},
		{Method: "afin-snis", Setting: "a", Marginals: marg(0.2, 1, 1), Diagnostics: diags("pareto_k", 2.0)},
		{Method: "auto", Setting: "a", Error: "boom"},
		{Method: "frvi", Setting: "a"},
	}
	tab := TrustTable(recs, "trust")
	var got []string
	for _, r := range tab.Rows {
		got = append(got, strings.Join(texts(r), "|"))
	}
	want := []string{
		"afin|1 sd, 0.5–2|1|0|1|1|0",
		"afin-snis|1 sd, 0.5–2|0|1|0|0|0",
		"auto|1 sd, 0.5–2|0|0|0|0|1",
		"nuts|0.5 sd, 0.8–1.25|1|0|0|0|0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(tab.Caption, "1 record(s) without per-coordinate errors") {
		t.Errorf("caption does not count the unjudged record: %q", tab.Caption)
	}
	md, err := tab.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "wrong, silent") || !strings.Contains(md, "accurate, flagged (false alarm)") {
		t.Errorf("markdown lacks the class headers:\n%s", md)
	}
}
