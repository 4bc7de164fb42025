package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// cmpRecs makes records of one cell (synthetic, easy, afin, budget 500):
// per seed, two settings whose M1 average to m1[seed]; M2 and SW2 are 1.
func cmpRecs(m1 ...float64) []records.Record {
	var out []records.Record
	for seed, v := range m1 {
		for _, off := range []float64{-0.01, 0.01} {
			out = append(out, records.Record{Suite: "synthetic", Group: "easy", Method: "afin", Budget: 500,
				Seed: uint64(seed), M1: records.Num(v + off), M2: 1, SW2: 1})
		}
	}
	return out
}

// TestCompareRecordsRule checks the flagging rule on hand-worked cells
// (numbers in the report's format: 3 significant digits).
// Three seeds 1, 2, 3 have mean 2 and sd 1: against itself shifted by Δ,
// the noise is 2·√(1/3 + 1/3) = 1.633.
func TestCompareRecordsRule(t *testing.T) {
	o := DefaultCompareOptions()
	tests := []struct {
		name                 string
		a, b                 []records.Record
		worse, better        int
		onlyA, onlyB         int
		wantDelta, wantNoise string
	}{
		{"within the seeds' noise", cmpRecs(1, 2, 3), cmpRecs(2.5, 3.5, 4.5), 0, 0, 0, 0, "+1.50", "1.63"},
		{"beyond the seeds' noise", cmpRecs(1, 2, 3), cmpRecs(2.7, 3.7, 4.7), 1, 0, 0, 0, "+1.70", "1.63"},
		{"better beyond noise", cmpRecs(3, 4, 5), cmpRecs(1, 2, 3), 0, 1, 0, 0, "-2.00", "1.63"},
		// One seed: 0.25·|2| + 0.002 = 0.502.
		{"one seed within relative", cmpRecs(2), cmpRecs(2.5), 0, 0, 0, 0, "+0.500", "0.502"},
		{"one seed beyond relative", cmpRecs(2), cmpRecs(2.51), 1, 0, 0, 0, "+0.510", "0.502"},
		// Identical seeds: no spread, the absolute floor applies.
		{"zero spread floor", cmpRecs(2, 2), cmpRecs(2.001, 2.001), 0, 0, 0, 0, "+1.00e-03", "0.00200"},
		{"only in A", cmpRecs(1), nil, 0, 0, 1, 0, "", ""},
		{"only in B", nil, cmpRecs(1), 0, 0, 0, 1, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := CompareRecords(tc.a, tc.b, "A", "B", o)
			if c.Worse != tc.worse || c.Better != tc.better || c.OnlyA != tc.onlyA || c.OnlyB != tc.onlyB {
				t.Errorf("worse %d better %d onlyA %d onlyB %d; want %d %d %d %d",
					c.Worse, c.Better, c.OnlyA, c.OnlyB, tc.worse, tc.better, tc.onlyA, tc.onlyB)
			}
			if tc.wantDelta == "" {
				return
			}
			row := c.Table.Rows[0] // M1 comes first
			if row[4].Text != "M1" || row[7].Text != tc.wantDelta || row[8].Text != tc.wantNoise {
				t.Errorf("M1 row %v: want Δ %s, noise %s", texts(row), tc.wantDelta, tc.wantNoise)
			}
		})
	}
}

// TestCompareOrderAndTiers checks that tiers stay apart and come in the
// report's order, whatever order the records arrive in.
func TestCompareOrderAndTiers(t *testing.T) {
	var recs []records.Record
	for _, g := range []string{"hard", "easy", "medium"} {
		recs = append(recs, records.Record{Suite: "synthetic", Group: g, Method: "nuts", Budget: 100, M1: 1, M2: 1, SW2: 1})
	}
	c := CompareRecords(recs, recs, "A", "B", DefaultCompareOptions())
	var tiers []string
	for i := 0; i < len(c.Table.Rows); i += len(Metrics) {
		tiers = append(tiers, c.Table.Rows[i][1].Text)
	}
	want := []string{groupLabel("easy"), groupLabel("medium"), groupLabel("hard")}
	if strings.Join(tiers, "|") != strings.Join(want, "|") {
		t.Errorf("tiers %v, want %v", tiers, want)
	}
	if c.Worse+c.Better != 0 {
		t.Errorf("a run against itself flagged %d worse, %d better", c.Worse, c.Better)
	}
}

// TestCompareBaseline checks the gate's comparison: all tiers pooled as
// the baseline keys them, its tolerance as the threshold, a non-finite
// metric counted as worse.
func TestCompareBaseline(t *testing.T) {
	base := &Baseline{Tolerance: Tolerance{Relative: 0.1, Absolute: 0}, Entries: []BaselineEntry{
		{Suite: "synthetic", Method: "afin", Budget: 500, Runs: 2, Metrics: map[string]float64{"m1": 1, "m2": 1, "sw2": 1}},
		{Suite: "synthetic", Method: "nuts", Budget: 100, Runs: 1, Metrics: map[string]float64{"m1": 1, "m2": 1, "sw2": 1}},
	}}
	recs := []records.Record{
		{Suite: "synthetic", Group: "easy", Method: "afin", Budget: 500, M1: 1.05, M2: 1, SW2: 1},
		{Suite: "synthetic", Group: "hard", Method: "afin", Budget: 500, M1: 1.25, M2: 1, SW2: records.Num(math.NaN())},
	}
	c := CompareBaseline(recs, base)
	// afin: M1 mean 1.15 > 1.1 worse, SW2 +Inf worse; nuts only in A.
	if c.Worse != 2 || c.Better != 0 || c.OnlyA != 1 || c.OnlyB != 0 {
		t.Errorf("worse %d better %d onlyA %d onlyB %d; want 2 0 1 0", c.Worse, c.Better, c.OnlyA, c.OnlyB)
	}
	if got := c.Table.Rows[0][1].Text; got != "all" {
		t.Errorf("tier %q, want all (the baseline pools tiers)", got)
	}
}
