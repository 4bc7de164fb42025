package reports

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// nutsSettings are NUTS records of 48 settings at the quick profile's
// four budgets, m1 near 0.03 with a spread across budgets and settings
// like a real run's (log-normal, sd 0.5 in log, falling with budget).
func nutsSettings() []records.Record {
	rng := rand.New(rand.NewPCG(3, 4))
	var out []records.Record
	for s := range 48 {
		level := 0.03 * math.Exp(0.5*rng.NormFloat64())
		for bi, b := range []int{100, 300, 1000, 3000} {
			m1 := level * math.Exp(0.3*rng.NormFloat64()) / math.Sqrt(float64(bi+1))
			out = append(out, records.Record{Suite: "synthetic", Setting: fmt.Sprintf("p/l%d/easy", s), Group: "easy",
				Method: "nuts", BudgetKind: "draws", Budget: b, M1: records.Num(m1), M2: records.Num(2 * m1), SW2: records.Num(m1 / 2), Seconds: 1})
		}
	}
	return out
}

// Row 8 of issue 40: one unflagged NUTS record's m1 set to 50 (over a
// thousand times its setting's median, under the 10⁶× bound) is marked:
// the report names it, the rule, and the headline row counts it; the
// same records without the edit, and a flagged record, are not marked.
func TestReportMarksOutliers(t *testing.T) {
	clean := nutsSettings()
	rep, err := Build(clean)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Outliers) != 0 {
		t.Fatalf("an unedited run has outliers: %q", rep.Outliers)
	}
	edited := nutsSettings()
	edited[4*7+3].M1 = 50 // setting 7 at 3,000 draws, the headline budget
	rep, err = Build(edited)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Outliers) != 1 || !strings.Contains(rep.Outliers[0], "p/l7/easy") || !strings.Contains(rep.Outliers[0], "m1 50.0") {
		t.Fatalf("outliers %q, want the edited record's m1", rep.Outliers)
	}
	lines := strings.Join(rep.OutlierLines(), "\n")
	if !strings.Contains(lines, "more than 100× above or below the median") {
		t.Errorf("the report does not name its rule: %q", lines)
	}
	if edited[4*7+3].Flags != nil {
		t.Error("marking changed the caller's record")
	}
	found := false
	for _, tab := range rep.Tables() {
		for _, row := range tab.Rows {
			if line := strings.Join(texts(row), "|"); strings.HasPrefix(line, "NUTS") && strings.Contains(line, "outlier") {
				found = true
			}
		}
	}
	if !found {
		t.Error("no NUTS table row counts the outlier")
	}
	// A record that already carries a flag is marked by that flag.
	edited[4*7+3].Flags = map[string]string{"sampler": "max R̂ 1.3"}
	if rep, _ := Build(edited); len(rep.Outliers) != 0 {
		t.Errorf("a flagged record was marked again: %q", rep.Outliers)
	}
}
