package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// fdSimulated runs `afin simulate` and saves its output.
func fdSimulated(t *testing.T, args ...string) (string, *factor.Task) {
	t.Helper()
	code, out, errs := cliRun(t, append([]string{"simulate"}, args...)...)
	if code != 0 {
		t.Fatalf("simulate exit %d: %s", code, errs)
	}
	task, err := factor.ParseTask([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	return fdWrite(t, "task.json", out), task
}

func TestInferExactCLI(t *testing.T) {
	path, task := fdSimulated(t, "--prior", "fullrank_gaussian", "--likelihood", "lin_gaussian,gaussian", "--d", "3", "--n", "20", "--seed", "5")
	mean, cov, err := factor.ExactPosterior(task)
	if err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(t.TempDir(), "draws.csv")
	code, out, errs := cliRun(t, "infer", "--method", "exact", "--task", path, "--json", "--draws", "20000", "--seed", "3", "--draws-out", csv)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res inferOut
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Method != "exact" || res.D != 3 || res.NDraws != 20000 || res.Weighted || res.Seconds < 0 || res.Diagnostics == nil {
		t.Fatalf("result header %+v", res)
	}
	for i := 0; i < 3; i++ {
		if res.Mean[i] != mean[i] {
			t.Errorf("mean[%d] %g, want %g", i, res.Mean[i], mean[i])
		}
		for j := 0; j < 3; j++ {
			if res.Cov[i][j] != cov[i*3+j] {
				t.Errorf("cov[%d][%d] %g, want %g", i, j, res.Cov[i][j], cov[i*3+j])
			}
		}
	}
	f, err := os.Open(csv)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	draws, err := posterior.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	if draws.Len() != 20000 || draws.D != 3 || draws.Weighted() {
		t.Fatalf("draws: %d×%d weighted=%v", draws.Len(), draws.D, draws.Weighted())
	}
	dm, dc := draws.Mean(), draws.Cov()
	for i := 0; i < 3; i++ {
		sd := math.Sqrt(cov[i*3+i])
		if math.Abs(dm[i]-mean[i]) > 4*sd/math.Sqrt(20000) {
			t.Errorf("draw mean[%d] %g, exact %g", i, dm[i], mean[i])
		}
		if math.Abs(dc[i*3+i]-cov[i*3+i]) > 0.05*cov[i*3+i] {
			t.Errorf("draw var[%d] %g, exact %g", i, dc[i*3+i], cov[i*3+i])
		}
	}
	// --draws-out works with the default budget (it used to need an
	// explicit draw count).
	if code, _, errs := cliRun(t, "infer", "--method", "exact", "--task", path, "--draws-out", csv); code != 0 {
		t.Errorf("default draws to --draws-out: exit %d: %s", code, errs)
	}
	// The text summary names the method and every coordinate.
	code, out, _ = cliRun(t, "infer", "--method", "exact", "--task", path)
	if code != 0 || !strings.Contains(out, "method exact") || strings.Count(out, "\n") < 4 {
		t.Errorf("summary exit %d:\n%s", code, out)
	}
}

func TestInferExactCLIErrors(t *testing.T) {
	nonConj, _ := fdSimulated(t, "--prior", "diag_laplace", "--likelihood", "lin_gaussian,bernoulli_logit", "--d", "2", "--n", "4")
	conj, _ := fdSimulated(t, "--prior", "diag_gaussian", "--likelihood", "lin_gaussian", "--d", "2", "--n", "4")
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"non-conjugate", []string{"--task", nonConj},
			"afin infer: method exact needs a conjugate task (diag_gaussian or fullrank_gaussian prior, only gaussian and lin_gaussian factors); this task has prior diag_laplace and factors "},
		{"draws-out without draws", []string{"--task", conj, "--draws", "0", "--draws-out", filepath.Join(t.TempDir(), "x.csv")},
			"afin infer: --draws-out: method exact produced no draws (ask for some with --draws N)"},
		{"negative draws", []string{"--task", conj, "--draws", "-1"},
			"afin infer: --draws must be ≥ 0, got -1"},
		{"missing task", nil, "afin infer: --task is required"},
	}
	for _, tc := range tests {
		code, out, errs := cliRun(t, append([]string{"infer", "--method", "exact"}, tc.args...)...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, tc.msg) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d stdout %q stderr %q; want exit 2 and %q", tc.name, code, out, errs, tc.msg)
		}
	}
}
