package records

import (
	"math"
	"strings"
	"testing"
)

// Marginals are optional: records of the first schema load without them
// (nil), a written record reads them back, null reads as NaN, and a
// negative or infinite entry is refused.
func TestMarginalsField(t *testing.T) {
	old, err := ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range old {
		if r.Marginals != nil || r.Warnings != nil {
			t.Errorf("old record %d: marginals %v, warnings %v; want none", i, r.Marginals, r.Warnings)
		}
	}
	base := `{"suite":"external","setting":"a","seed":0,"method":"afin","budget_kind":"draws","budget":10,"m1":1,"m2":1,"sw2":1,"seconds":1`
	for _, tc := range []struct {
		tail    string
		want    [3]float64
		wantErr string
	}{
		{`,"marginals":{"max_mean_err_sd":3.5,"min_sd_ratio":0.25,"max_sd_ratio":4},"warnings":["k̂ 1.2"]}`, [3]float64{3.5, 0.25, 4}, ""},
		{`,"marginals":{"max_mean_err_sd":null,"min_sd_ratio":null,"max_sd_ratio":null}}`, [3]float64{math.NaN(), math.NaN(), math.NaN()}, ""},
		{`,"marginals":{"max_mean_err_sd":-1,"min_sd_ratio":1,"max_sd_ratio":1}}`, [3]float64{}, "marginals.max_mean_err_sd"},
	} {
		r, err := decodeRecord([]byte(base + tc.tail))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want one naming %s", tc.tail, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.tail, err)
		}
		got := [3]float64{float64(r.Marginals.MaxMeanErr), float64(r.Marginals.MinSDRatio), float64(r.Marginals.MaxSDRatio)}
		for i := range got {
			if got[i] != tc.want[i] && !(math.IsNaN(got[i]) && math.IsNaN(tc.want[i])) {
				t.Errorf("%s: marginals %v, want %v", tc.tail, got, tc.want)
			}
		}
	}
	r := Record{Suite: "external", Setting: "a", Method: "afin", BudgetKind: "draws",
		Marginals: &Marginals{MaxSDRatio: Num(math.Inf(1))}}
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "marginals.max_sd_ratio") {
		t.Errorf("an infinite sd ratio: %v, want refused", err)
	}
}
