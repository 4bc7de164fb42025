package records

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func TestImplausible(t *testing.T) {
	// m1 values of one setting's records (seed i, budget 10), with an
	// optional prior M1 on the last.
	mk := func(m1 []float64, priorM1 float64) []Record {
		var out []Record
		for i, v := range m1 {
			r := *rec("a", uint64(i), 10, 0.1)
			r.M1, r.M2 = Num(v), 0.2
			out = append(out, r)
		}
		if priorM1 > 0 {
			out[len(out)-1].Diagnostics = map[string]Num{PriorM1Diagnostic: Num(priorM1)}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		recs    []Record
		flagged []float64 // the m1 values flagged
		basis   string
	}{
		{"all alike", mk([]float64{0.4, 0.5, 0.3}, 0), nil, ""},
		{"1e308 among peers", mk([]float64{0.4, 0.5, 1e308, 0.3}, 0), []float64{1e308}, "median m1"},
		{"1e6 × median is the edge", mk([]float64{0.4, 0.4, 0.4, 0.4, 4e5, 4.1e5}, 0), []float64{4.1e5}, "median m1"},
		{"too few peers: the ceiling", mk([]float64{0.4, 1e11}, 0), nil, ""},
		{"too few peers, beyond the ceiling", mk([]float64{0.4, 1e13}, 0), []float64{1e13}, "ceiling"},
		{"the prior's m1 is the scale", mk([]float64{0.4, 2e6}, 1), []float64{2e6}, "prior's m1"},
		{"NaN is unscorable, not absurd", mk([]float64{0.4, math.NaN(), 0.5, 0.3}, 0), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Implausible(tc.recs, nil)
			var vals []float64
			for _, g := range got {
				if g.Metric != "m1" {
					t.Errorf("flagged %s", g)
				}
				vals = append(vals, g.Value)
				if !strings.Contains(g.Basis, tc.basis) {
					t.Errorf("basis %q, want it to mention %q", g.Basis, tc.basis)
				}
			}
			if len(vals) != len(tc.flagged) {
				t.Fatalf("flagged %v, want %v", got, tc.flagged)
			}
			for i := range vals {
				if vals[i] != tc.flagged[i] {
					t.Errorf("flagged %v, want %v", vals, tc.flagged)
				}
			}
		})
	}
}

// Load knows each record's file:line, and ExcludeImplausible leaves the
// absurd metric out (NaN, flagged) and says where it was.
func TestExcludeImplausibleNamesFileLine(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenStore(dir, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i, m1 := range []float64{0.4, 0.5, 1e308, 0.3} {
		r := rec("a", uint64(i), 10, 0.1)
		r.M1 = Num(m1)
		if err := st.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	bad := l.ExcludeImplausible()
	want := filepath.Join(dir, "x.jsonl") + ":3: m1 = 1e+308 is implausible"
	if len(bad) != 1 || !strings.HasPrefix(bad[0].String(), want) {
		t.Fatalf("flagged %v, want one starting %q", bad, want)
	}
	r := l.Records[2]
	if !math.IsNaN(float64(r.M1)) || r.Flags[FlagImplausible] == "" || float64(r.SW2) != 0.1 {
		t.Errorf("the flagged record after exclusion: m1 %v, flags %v, sw2 %v", r.M1, r.Flags, r.SW2)
	}
	if again := l.ExcludeImplausible(); len(again) != 0 {
		t.Errorf("a second pass flags %v", again)
	}
}
