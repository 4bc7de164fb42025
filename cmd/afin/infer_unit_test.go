package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/afin-bench/afin/bench"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// TestInferIsOneBenchUnit checks, per method, that `afin infer` with a
// bench unit's seed and budget returns exactly the draws that unit of
// `afin bench` scores (same M1 and M2 to the last bit), and that both
// report positive seconds under the one timing rule.
func TestInferIsOneBenchUnit(t *testing.T) {
	path, task := blTaskFile(t, 4, factor.DiagGaussianFamily, factor.LinGaussianFamily, 3, 20)
	setting := bench.Setting{Suite: "synthetic", Key: "unit/test", Group: "easy", D: task.D, N: task.N()}
	prof, err := bench.GetProfile("smoke")
	if err != nil {
		t.Fatal(err)
	}
	prof.NUTSDraws, prof.FRVISteps, prof.FRVILRs, prof.FRVIDraws = []int{200}, []int{300}, []float64{1e-2}, 500
	prof.AFINDraws, prof.SNISProposals, prof.FRVISNISSteps = 500, []int{400}, []int{300}
	refFn := bench.CachedReference(t.TempDir())
	ref, err := refFn(context.Background(), task, prof)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, suite, variant string
		flags                  []string
	}{
		{"nuts", "synthetic", "", []string{"--draws", "200", "--warmup", "100", "--chains", "1"}},
		{"frvi", "synthetic", "", []string{"--steps", "300", "--lr", "0.01", "--draws", "500"}},
		{"afin", "synthetic", "", []string{"--draws", "500"}},
		{"afin-snis", "synthetic", "", []string{"--proposals", "400"}},
		{"iaf", "synthetic", "", []string{"--steps", "300", "--lr", "0.01", "--draws", "500"}},
		{"maf", "synthetic", "", []string{"--steps", "300", "--lr", "0.01", "--draws", "500"}},
		{"nsf", "synthetic", "", []string{"--steps", "300", "--lr", "0.01", "--draws", "500"}},
		{"frvi-snis", "snis", "300", []string{"--steps", "300", "--lr", "0.01", "--proposals", "400"}},
	}
	for _, tc := range tests {
		t.Run(tc.method, func(t *testing.T) {
			s := setting
			s.Suite = tc.suite
			dir := t.TempDir()
			_, err := bench.Run(context.Background(), bench.Config{
				Suite: tc.suite, Profile: prof, Results: dir, Seeds: []uint64{0}, Methods: []string{tc.method},
				Settings:  []bench.Setting{s},
				BuildTask: func(bench.Setting, uint64) (*factor.Task, error) { return task, nil },
				Reference: refFn,
			})
			if err != nil {
				t.Fatal(err)
			}
			rec := mainRecord(t, dir, tc.method)
			csv := filepath.Join(t.TempDir(), "draws.csv")
			seed := strconv.FormatUint(bench.UnitSeed(s.Key, 0, tc.method, tc.variant), 10)
			args := append([]string{"infer", "--method", tc.method, "--task", path, "--seed", seed, "--json", "--draws-out", csv}, tc.flags...)
			code, out, errs := cliRun(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			r := blDecode(t, out)
			draws := readDraws(t, csv)
			m1, m2 := floats.Distance(draws.Mean(), ref.Mean, 2), floats.Distance(draws.Cov(), ref.Cov, 2)
			// Weights are renormalised when the CSV is read back: equal up
			// to rounding there, bit for bit otherwise.
			tol := 0.0
			if draws.Weighted() {
				tol = 1e-9
			}
			if !near(m1, float64(rec.M1), tol) || !near(m2, float64(rec.M2), tol) {
				t.Errorf("infer: M1 %.17g M2 %.17g; bench: M1 %.17g M2 %.17g", m1, m2, float64(rec.M1), float64(rec.M2))
			}
			if rec.BudgetKind != "steps" && draws.Len() != rec.Budget {
				t.Errorf("infer returned %d draws, the bench unit's budget is %d %s", draws.Len(), rec.Budget, rec.BudgetKind)
			}
			if !(r.Seconds > 0) || !(rec.Seconds > 0) {
				t.Errorf("seconds: infer %v, bench %v", r.Seconds, rec.Seconds)
			}
			for k := range rec.Diagnostics {
				if _, ok := r.Diagnostics[k]; !ok && k != "energy_gap" {
					t.Errorf("bench records diagnostic %q that infer lacks", k)
				}
			}
		})
	}
}

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

// mainRecord is the one record of a method's own output in dir.
func mainRecord(t *testing.T, dir, method string) records.Record {
	t.Helper()
	recs, err := records.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []records.Record
	for _, r := range recs {
		if r.Method == method && r.Stage == "" {
			out = append(out, r)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d records of %s's own output, want 1", len(out), method)
	}
	return out[0]
}

func readDraws(t *testing.T, path string) *posterior.Draws {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := posterior.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
