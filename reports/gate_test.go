package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// predictionRecords are openml records of one method at one budget with
// the given held-out accuracy, NLL and AUC.
func predictionRecords(acc, nll, auc float64) []records.Record {
	var out []records.Record
	for _, ds := range []string{"blood", "diabetes"} {
		for seed := range uint64(2) {
			out = append(out, records.Record{Suite: "openml", Setting: ds, Group: ds, Seed: seed, Method: "nuts",
				BudgetKind: "draws", Budget: 400, M1: records.Num(math.NaN()), M2: records.Num(math.NaN()), SW2: records.Num(math.NaN()),
				Diagnostics: map[string]records.Num{"test_acc": records.Num(acc), "test_nll": records.Num(nll), "test_auc": records.Num(auc),
					"train_acc": 0.9}})
		}
	}
	return out
}

// Every suite can be gated: a baseline written from openml, calibration
// and synthetic results keeps the metrics each is scored by, passes the
// results it was written from and a change for the better, and fails a
// change for the worse in any one metric, whichever way that metric
// points (accuracy and AUC up is better, NLL and the errors down).
func TestGateEverySuite(t *testing.T) {
	synth := func(m1 float64) []records.Record {
		var out []records.Record
		for seed := range uint64(3) {
			out = append(out, records.Record{Suite: "synthetic", Setting: "a/b/easy", Group: "easy", Seed: seed, Method: "nuts",
				BudgetKind: "draws", Budget: 100, M1: records.Num(m1), M2: 0.2, SW2: 0.1})
		}
		return out
	}
	good := [][]records.Record{predictionRecords(0.8, 0.45, 0.85), calibrationRecords(t, "nuts", 1, 60), synth(0.1)}
	var all []records.Record
	for _, g := range good {
		all = append(all, g...)
	}
	base := &Baseline{Tolerance: Tolerance{Relative: 0.25, Absolute: 0.002}, Entries: Summarize(all)}
	want := map[string][]string{
		"openml":      {"test_acc", "test_nll", "test_auc"},
		"calibration": {"sbc_coverage_err", "sbc_abs_z_mean", "sbc_z_sd_err"},
		"synthetic":   {"m1", "m2", "sw2"},
	}
	if len(base.Entries) != len(want) {
		t.Fatalf("%d entries, want one per suite (%d): %+v", len(base.Entries), len(want), base.Entries)
	}
	for _, e := range base.Entries {
		for _, k := range want[e.Suite] {
			if v, ok := e.Metrics[k]; !ok || math.IsNaN(v) {
				t.Errorf("%s entry: metric %s = %v (present %v), want a number", e.Suite, k, v, ok)
			}
		}
		if err := checkEntryMetrics(e); err != nil {
			t.Errorf("%s entry refused: %v", e.Suite, err)
		}
	}
	if res := Check(all, base); res.Failed() {
		t.Fatalf("the results a baseline was written from fail it: %s", res.Summary(len(base.Entries)))
	}
	// with replaces suite i's records.
	with := func(i int, recs []records.Record) []records.Record {
		var out []records.Record
		for j, g := range good {
			if j == i {
				g = recs
			}
			out = append(out, g...)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		recs   []records.Record
		worse  bool
		metric string
	}{
		{"accuracy down", with(0, predictionRecords(0.7, 0.45, 0.85)), true, "test acc"},
		{"accuracy up", with(0, predictionRecords(0.9, 0.45, 0.85)), false, ""},
		{"NLL up", with(0, predictionRecords(0.8, 0.6, 0.85)), true, "test NLL"},
		{"NLL down", with(0, predictionRecords(0.8, 0.3, 0.85)), false, ""},
		{"AUC down", with(0, predictionRecords(0.8, 0.45, 0.75)), true, "test AUC"},
		{"AUC up", with(0, predictionRecords(0.8, 0.45, 0.95)), false, ""},
		{"calibration too narrow", with(1, calibrationRecords(t, "nuts", 0.3, 60)), true, "|z sd − 1|"},
		{"M1 up", with(2, synth(0.2)), true, "M1"},
		{"M1 down", with(2, synth(0.05)), false, ""},
	} {
		res := Check(tc.recs, base)
		if res.Failed() != tc.worse || (tc.worse && res.Regressions != 1) {
			t.Errorf("%s: failed %v with %d regressions, want failed %v", tc.name, res.Failed(), res.Regressions, tc.worse)
			continue
		}
		if !tc.worse {
			continue
		}
		found := false
		for _, row := range res.Table.Rows {
			if st := row[len(row)-1].Text; strings.HasPrefix(st, "REGRESSED") && strings.Contains(st, tc.metric) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no row says %s regressed", tc.name, tc.metric)
		}
	}
}

// A NaN metric prints as NaN, not ∞, and fails the gate; a baseline with
// a NaN, or with no entries, is refused when written.
func TestGateNaN(t *testing.T) {
	recs := fakeRecords()
	base := &Baseline{Tolerance: Tolerance{Relative: 0.25, Absolute: 1e-4}, Entries: Summarize(recs)}
	for i := range recs {
		if recs[i].Method == "nuts" && recs[i].Suite == "synthetic" && recs[i].Budget == 100 && i%2 == 0 {
			recs[i].M1 = records.Num(math.NaN())
			break
		}
	}
	res := Check(recs, base)
	if res.Regressions != 1 {
		t.Fatalf("a NaN M1: %d regressions, want 1", res.Regressions)
	}
	for _, row := range res.Table.Rows {
		line := strings.Join(texts(row), "|")
		if !strings.Contains(line, "REGRESSED") {
			continue
		}
		if !strings.Contains(line, "M1 NaN /") || strings.Contains(line, "∞") {
			t.Errorf("regressed row %q: want M1 printed as NaN, not ∞", line)
		}
	}
	path := t.TempDir() + "/b.json"
	if err := WriteBaseline(path, &Baseline{Entries: Summarize(recs)}); err == nil || !strings.Contains(err.Error(), "m1 is NaN") {
		t.Errorf("writing a baseline with a NaN mean: %v, want a refusal naming m1", err)
	}
	if err := WriteBaseline(path, &Baseline{}); err == nil || !strings.Contains(err.Error(), "no entries") {
		t.Errorf("writing a baseline with no entries: %v, want a refusal", err)
	}
}

// Baselines written before the metrics map (m1, m2 and sw2 beside the
// key) read as before.
func TestParseLegacyBaseline(t *testing.T) {
	b, err := ParseBaseline([]byte(`{"tolerance":{"relative":0.25,"absolute":0.002},"entries":[{"suite":"synthetic","method":"nuts","budget":100,"runs":2,"m1":0.1,"m2":0.2,"sw2":0.3}]}`), "legacy")
	if err != nil {
		t.Fatal(err)
	}
	if m := b.Entries[0].Metrics; m["m1"] != 0.1 || m["m2"] != 0.2 || m["sw2"] != 0.3 {
		t.Errorf("legacy metrics read as %v", m)
	}
	if _, err := ParseBaseline([]byte(`{"entries":[{"suite":"openml","method":"nuts","budget":100,"runs":2,"metrics":{"m1":0.1}}]}`), "wrong"); err == nil {
		t.Error("an openml entry gated on M1 was accepted")
	}
}
