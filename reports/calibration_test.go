package reports

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/afin-bench/afin/calibration"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// calibrationRecords simulates SBC records of a method whose draws come
// from the exact posterior with its covariance scaled by covScale.
func calibrationRecords(t *testing.T, method string, covScale float64, tasks int) []records.Record {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	v := []float64{0.6, 0.8}
	var out []records.Record
	for i := range tasks {
		task, err := factor.Simulate(rng, factor.SimOptions{D: 2, N: 5, Prior: factor.DiagGaussianFamily,
			Likelihoods: []string{factor.LinGaussianFamily}, Design: factor.DesignIID})
		if err != nil {
			t.Fatal(err)
		}
		mean, cov, _ := factor.ExactPosterior(task)
		for k := range cov {
			cov[k] *= covScale
		}
		z, err := factor.GaussianDraws(rng, mean, cov, 100)
		if err != nil {
			t.Fatal(err)
		}
		r, err := calibration.Rank(task, &posterior.Draws{D: 2, Z: z}, 100, v, rng)
		if err != nil {
			t.Fatal(err)
		}
		diag := map[string]records.Num{}
		for k, x := range r.Numbers() {
			diag[k] = records.Num(x)
		}
		out = append(out, records.Record{Suite: "calibration", Setting: "s", Group: "easy", D: 2, Seed: uint64(i),
			Method: method, BudgetKind: "draws", Budget: 100, Diagnostics: diag})
	}
	return out
}

// TestCalibrationSection: the section pools records per (tier, method),
// passes exact draws and fails overconfident ones, and draws one panel per
// cell.
func TestCalibrationSection(t *testing.T) {
	recs := append(calibrationRecords(t, "nuts", 1, 300), calibrationRecords(t, "afin", 0.5, 300)...)
	rep, err := Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sections) != 1 || rep.Sections[0].ID != "calibration" || len(rep.Sections[0].Charts) != 2 {
		t.Fatalf("sections %+v", rep.Sections)
	}
	tbl := rep.Sections[0].Tables[0]
	got := map[string]string{}
	for _, row := range tbl.Rows {
		got[row[1].Text] = row[3].Text + "/" + row[4].Text + "/" + row[5].Text
	}
	if got["NUTS"] != "pass/pass/pass" || !strings.HasPrefix(got["AFIN"], "FAIL") {
		t.Errorf("verdicts %v, want NUTS passing and AFIN (overconfident) failing", got)
	}
}

// TestCalibrationSectionNoWorkflow: auto records in the calibration suite
// get no workflow table (there is no reference to score them against).
func TestCalibrationSectionNoWorkflow(t *testing.T) {
	recs := append(calibrationRecords(t, "nuts", 1, 20), calibrationRecords(t, "auto", 1, 20)...)
	rep, err := Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, tbl := range rep.Tables() {
		if strings.HasPrefix(tbl.Name, "workflow") {
			t.Errorf("calibration section has a workflow table %s", tbl.Name)
		}
	}
}

// TestCalibrationFailures: the gate names the overconfident method when
// asked about it and is silent about the calibrated one.
func TestCalibrationFailures(t *testing.T) {
	recs := append(calibrationRecords(t, "nuts", 1, 300), calibrationRecords(t, "afin", 0.5, 300)...)
	if f := CalibrationFailures(recs, "nuts"); len(f) != 0 {
		t.Errorf("nuts (exact draws) failures %v", f)
	}
	f := CalibrationFailures(recs, "nuts", "afin")
	if len(f) != 1 || !strings.HasPrefix(f[0], "easy/afin fails SBC: coordinates") {
		t.Errorf("failures %v, want easy/afin", f)
	}
}
