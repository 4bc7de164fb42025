package bench

import (
	"context"
	"math"
	"testing"

	"github.com/afin-bench/afin/records"
)

// TestCalibrationSuiteResume runs NUTS on two calibration settings at the
// smoke profile: one record per (setting, replicate) carrying the ranks,
// null metrics, and a second run that finds everything done.
func TestCalibrationSuiteResume(t *testing.T) {
	prof, err := GetProfile("smoke")
	if err != nil {
		t.Fatal(err)
	}
	settings := CalibrationSettings()
	pick := []Setting{}
	for _, s := range settings {
		if s.Key == "diag_gaussian/lin_gaussian/medium" || s.Key == "diag_laplace/bernoulli_logit/hard" {
			pick = append(pick, s)
		}
	}
	dir := t.TempDir()
	cfg := Config{Suite: CalibrationSuite, Profile: prof, Results: dir, Methods: []string{"nuts"}, Settings: pick}
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := 2 * calibrationTasks["smoke"][1]
	if sum.Ran != want || sum.Records != want || sum.Failed != 0 {
		t.Fatalf("summary %+v, want %d units run", sum, want)
	}
	recs, err := records.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		u, ok := r.Diagnostics["sbc_u_1"]
		if r.Suite != CalibrationSuite || !ok || !(u >= 0 && u <= 1) || !math.IsNaN(float64(r.M1)) {
			t.Errorf("record %s: suite %s, sbc_u_1 %v", r.Key(), r.Suite, u)
		}
	}
	sum, err = Run(context.Background(), cfg)
	if err != nil || sum.Ran != 0 || sum.Skipped != want {
		t.Fatalf("resume: %+v, %v", sum, err)
	}
}
