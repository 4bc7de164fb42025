package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// snisRuns builds AFIN+SNIS records of one setting, one per k̂ given
// (NaN: written as null, as an infinite k̂ is).
func snisRuns(ks ...float64) []records.Record {
	var out []records.Record
	for i, k := range ks {
		out = append(out, records.Record{Suite: "snis", Setting: "s", Group: "easy", Seed: uint64(i), Method: "afin-snis",
			BudgetKind: "proposals", Budget: 100, M1: 0.1, M2: 0.1, SW2: 0.1, Seconds: 0.1,
			Diagnostics: map[string]records.Num{"pareto_k": records.Num(k), "max_weight": 0.1, "entropy_ratio": 0.9, "energy_gap": records.Num(k), "ess": 50}})
	}
	return out
}

// Infinite k̂ are counted, not dropped: the table shows the median over
// every run (∞ included), the runs above 0.7 and the infinite ones, and
// how many runs a mean left out.
func TestSNISTableCountsInfiniteK(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name               string
		ks                 []float64
		median, above, inf string
		gapNote            string
	}{
		{"all finite", []float64{0.2, 0.3, 0.4}, "0.300", "0/3", "0", ""},
		{"two infinite of five", []float64{0.2, 0.3, 0.9, nan, nan}, "0.900", "3/5", "2", "(2 n/a)"},
		{"all infinite", []float64{nan, nan}, "∞", "2/2", "2", "(2 n/a)"},
		// An infinite k̂ stored as "Inf" (not null) reads as +Inf and
		// shows as ∞.
		{"+Inf and NaN", []float64{math.Inf(1), nan, 0.2}, "∞", "2/3", "2", "(2 n/a)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab := snisDiagnosticsTable(snisRuns(tc.ks...))
			row := tab.Rows[0]
			got := []string{row[3].Text, row[4].Text, row[5].Text}
			if strings.Join(got, "|") != strings.Join([]string{tc.median, tc.above, tc.inf}, "|") {
				t.Errorf("k̂ cells %q, want median %s, above %s, infinite %s", got, tc.median, tc.above, tc.inf)
			}
			if gap := row[8].Text; tc.gapNote != "" && !strings.Contains(gap, tc.gapNote) || tc.gapNote == "" && strings.Contains(gap, "n/a") {
				t.Errorf("energy gap %q, want exclusion note %q", gap, tc.gapNote)
			}
		})
	}
}

// Flagged runs are marked and counted in every table that shows them,
// and AFIN rows carry the AFIN+SNIS k̂ and ESS.
func TestTablesShowFlagsAndAFINSignal(t *testing.T) {
	recs := snisRuns(0.2, 0.9)
	for i := range 2 {
		r := recs[i]
		r.Method, r.BudgetKind, r.Diagnostics = "afin", "draws", nil
		r.OutsideSupport = "d=16 > 8"
		recs = append(recs, r)
		f := r
		f.Method, f.OutsideSupport, f.NotConverged = "frvi", "", "learning rate at the sweep's edge"
		f.M1 = records.Num(math.NaN())
		recs = append(recs, f)
	}
	tab := headlineTable(recs)
	text := map[string][]string{}
	for _, row := range tab.Rows {
		text[row[0].Text] = texts(row)
	}
	afin, frvi := strings.Join(text["AFIN"], "|"), strings.Join(text["FRVI"], "|")
	if !strings.Contains(afin, "2/2 outside training support") || !strings.Contains(afin, "k̂ 0.550 (1/2 > 0.7), ESS 50.0") {
		t.Errorf("AFIN row %q lacks the support flag or the AFIN+SNIS signal", afin)
	}
	if !strings.Contains(frvi, "2/2 not converged") || !strings.Contains(frvi, "n/a (2 n/a)") {
		t.Errorf("FRVI row %q lacks the convergence flag or the exclusion count", frvi)
	}
	if !strings.Contains(tab.Caption, "2 not converged") || !strings.Contains(tab.Caption, "2 outside") {
		t.Errorf("caption %q lacks the flag counts", tab.Caption)
	}
	recs2 := append([]records.Record(nil), recs...)
	for i := range recs2 {
		recs2[i].Suite, recs2[i].Group = "extrapolation", "ood_d"
	}
	ext := extrapolationTable(recs2, MetricM1, "t", "M1")
	if row := strings.Join(texts(ext.Rows[0]), "|"); !strings.Contains(row, "outside training support") || !strings.Contains(row, "[AFIN+SNIS k̂") {
		t.Errorf("extrapolation row %q lacks flags or the AFIN+SNIS signal", row)
	}
}

// Every flag a record carries is counted per method: the flags added with
// the warnings list (poor fit, degenerate weights, MCMC checks) and any
// flag the table does not know yet, under its own name.
func TestTablesCountEveryFlag(t *testing.T) {
	recs := snisRuns(0.2, 0.9, 0.3)
	recs[0].Flags = map[string]string{"degenerate": "ESS 1 of 100"}
	recs[1].Flags = map[string]string{"poor_fit": "k̂ 0.9 > 0.7", "ood_distance": "12 sd from the training tasks"}
	for i := range recs {
		r := recs[i]
		r.Method, r.BudgetKind, r.Diagnostics = "nuts", "draws", nil
		if i == 2 {
			r.Flags = map[string]string{"sampler": "max R̂ 1.2 ≥ 1.01"}
		}
		recs = append(recs, r)
	}
	tab := headlineTable(recs)
	text := map[string]string{}
	for _, row := range tab.Rows {
		text[row[0].Text] = strings.Join(texts(row), "|")
	}
	snis, nuts := text["AFIN+SNIS"], text["NUTS"]
	for _, want := range []string{"1/3 poor fit (k̂ > 0.7)", "1/3 degenerate weights or sd 0", "1/3 ood distance"} {
		if !strings.Contains(snis, want) {
			t.Errorf("AFIN+SNIS row %q lacks %q", snis, want)
		}
	}
	if !strings.Contains(nuts, "1/3 MCMC checks failed") {
		t.Errorf("NUTS row %q lacks the sampler flag", nuts)
	}
	if !strings.Contains(tab.Caption, "Runs with a warning: 5") {
		t.Errorf("caption %q lacks the count of warned runs", tab.Caption)
	}
}

// The decoders suite's units carry the decoder as their variant: each
// decoder's AFIN rows carry that decoder's AFIN+SNIS k̂ and ESS, not n/a
// (as they did when the signal looked for variant "" only).
func TestHeadlineSignalPerDecoder(t *testing.T) {
	var recs []records.Record
	for _, v := range []struct {
		variant string
		ks      []float64
	}{{"gaussian", []float64{0.2, 0.9}}, {"flow", []float64{0.1, 0.3}}} {
		for _, r := range snisRuns(v.ks...) {
			r.Suite, r.Variant = "decoders", v.variant
			a := r
			a.Method, a.BudgetKind, a.Diagnostics = "afin", "draws", nil
			recs = append(recs, r, a)
		}
	}
	tab := headlineTable(recs)
	want := map[string]string{
		"AFIN (gaussian)": "k̂ 0.550 (1/2 > 0.7), ESS 50.0",
		"AFIN (flow)":     "k̂ 0.200 (0/2 > 0.7), ESS 50.0",
	}
	seen := 0
	for _, row := range tab.Rows {
		if w, ok := want[row[0].Text]; ok {
			seen++
			if got := row[len(row)-1].Text; got != w {
				t.Errorf("%s: signal %q, want %q", row[0].Text, got, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("saw %d of the %d AFIN rows", seen, len(want))
	}
}
