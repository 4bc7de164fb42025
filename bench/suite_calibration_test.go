package bench

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/afin-bench/afin/methods"
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

// A calibration unit whose method fails leaves its one failed record with
// the reason; a resume skips it, --retry-failed reruns it and the success
// supersedes it.
func TestCalibrationFailedUnit(t *testing.T) {
	prof, err := GetProfile("smoke")
	if err != nil {
		t.Fatal(err)
	}
	var pick []Setting
	for _, s := range CalibrationSettings() {
		if s.Key == "diag_gaussian/lin_gaussian/medium" {
			pick = append(pick, s)
		}
	}
	broken := true
	factory := func(name string, env *methods.Env) (methods.Method, error) {
		if broken {
			return failingMethod{fakeMethod{name: name}, 0}, nil
		}
		return methods.New(name, env)
	}
	dir := t.TempDir()
	cfg := Config{Suite: CalibrationSuite, Profile: prof, Results: dir, Methods: []string{"nuts"}, Settings: pick, NewMethod: factory}
	want := calibrationTasks["smoke"][1]
	steps := []struct {
		name                 string
		broken, retry        bool
		ran, failed, skipped int
		wantFailures         int
	}{
		{"failing run", true, false, 0, want, 0, want},
		{"resume", true, false, 0, 0, want, want},
		{"retry, fixed", false, true, want, 0, 0, 0},
	}
	for _, st := range steps {
		broken, cfg.RetryFailed = st.broken, st.retry
		sum, _ := Run(context.Background(), cfg)
		if sum == nil || sum.Ran != st.ran || sum.Failed != st.failed || sum.Skipped != st.skipped {
			t.Fatalf("%s: summary %+v", st.name, sum)
		}
		l, err := records.Load(dir)
		if err != nil || l.ConflictError() != nil || len(l.Failures()) != st.wantFailures {
			t.Fatalf("%s: %v, %v, %d failed records, want %d", st.name, err, l.ConflictError(), len(l.Failures()), st.wantFailures)
		}
		for _, r := range l.Failures() {
			if !strings.Contains(r.Error, "sampler diverged") {
				t.Errorf("%s: failed record %s: %q", st.name, r.Key(), r.Error)
			}
		}
	}
}
