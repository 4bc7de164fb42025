package reports

import (
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// withFailure replaces the frvi records of one synthetic setting and
// seed (both budgets: one failed unit) by failed records.
func withFailure(recs []records.Record) []records.Record {
	out := append([]records.Record(nil), recs...)
	for i := range out {
		r := &out[i]
		if r.Suite == "synthetic" && r.Method == "frvi" && r.Setting == "p0/l/easy" && r.Seed == 1 {
			r.MarkFailed("exec:frvi: timed out after 2s; output tail: warming up")
		}
	}
	return out
}

// TestReportShowsFailures: the failed unit is left out of the synthetic
// tables, counted in their captions and listed with its reason in a
// Failures section; a report without failures has no such section.
func TestReportShowsFailures(t *testing.T) {
	cases := []struct {
		name       string
		recs       []records.Record
		wantFailed int
	}{
		{"no failures", fakeRecords(), 0},
		{"one failed unit", withFailure(fakeRecords()), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Build(tc.recs)
			if err != nil {
				t.Fatal(err)
			}
			last := rep.Sections[len(rep.Sections)-1]
			if rep.FailedUnits != tc.wantFailed || (last.ID == "failures") != (tc.wantFailed > 0) {
				t.Fatalf("%d failed units, last section %q", rep.FailedUnits, last.ID)
			}
			for _, sec := range rep.Sections {
				for _, tb := range sec.Tables {
					counted := strings.Contains(tb.Caption, "1 failed unit(s) of this suite")
					if counted != (tc.wantFailed > 0 && sec.ID == "synthetic") {
						t.Errorf("section %s table %s: caption counts the failure %v: %s", sec.ID, tb.Name, counted, tb.Caption)
					}
				}
			}
			if tc.wantFailed == 0 {
				return
			}
			row := last.Tables[0].Rows[0]
			if len(last.Tables[0].Rows) != 1 || row[1].Text != "p0/l/easy" || row[4].Text != "100 draws, 1000 draws" || !strings.Contains(row[5].Text, "timed out after 2s") {
				t.Errorf("failures table rows %v", last.Tables[0].Rows)
			}
		})
	}
}

// TestGateNamesFailedUnits: a failed unit of a gated entry fails the gate
// and the verdict names it with its reason.
func TestGateNamesFailedUnits(t *testing.T) {
	recs := fakeRecords()
	base := &Baseline{Tolerance: Tolerance{Relative: 0.25, Absolute: 1e-4}, Entries: Summarize(recs)}
	res := Check(withFailure(recs), base)
	if !res.Failed() || len(res.FailedUnits) != 2 {
		t.Fatalf("gate with a failed unit: failed %v, %d failed points, want 2 (one per budget)", res.Failed(), len(res.FailedUnits))
	}
	sum := res.Summary(len(base.Entries))
	if !strings.Contains(sum, "synthetic p0/l/easy seed 1 FRVI") && !strings.Contains(sum, "synthetic p0/l/easy seed 1 frvi") {
		t.Errorf("verdict does not name the unit: %s", sum)
	}
	if !strings.Contains(sum, "timed out after 2s") {
		t.Errorf("verdict lacks the reason: %s", sum)
	}
}
