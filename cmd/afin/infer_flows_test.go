package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
)

func TestInferFlowsJSON(t *testing.T) {
	path, task := blTaskFile(t, 3, factor.DiagGaussianFamily, factor.LinGaussianFamily, 2, 15)
	mean, cov, err := factor.ExactPosterior(task)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"iaf", "maf", "nsf"} {
		t.Run(m, func(t *testing.T) {
			csv := filepath.Join(t.TempDir(), "draws.csv")
			code, out, errs := cliRun(t, "infer", "--method", m, "--task", path, "--steps", "1500", "--lr", "1e-2",
				"--layers", "2", "--hidden", "16", "--draws", "4000", "--seed", "3", "--json", "--draws-out", csv)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var r inferOut
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("decoding %q: %v", out, err)
			}
			if r.Method != m || r.D != 2 || r.NDraws != 4000 || r.Weighted || !(r.Seconds > 0) {
				t.Fatalf("header: %+v", r)
			}
			for _, k := range []string{"lr", "elbo", "steps", "optimize_seconds", "sample_seconds"} {
				if _, ok := r.Diagnostics[k]; !ok {
					t.Errorf("diagnostics lack %q: %v", k, r.Diagnostics)
				}
			}
			// 4000 draws: the mean's Monte Carlo error is ~sd/63.
			for i := range mean {
				sd := math.Sqrt(cov[i*2+i])
				if math.Abs(r.Mean[i]-mean[i]) > 0.08*sd {
					t.Errorf("mean[%d] = %.4f, exact %.4f (sd %.4f)", i, r.Mean[i], mean[i], sd)
				}
				if v := r.Cov[i][i]; math.Abs(v/cov[i*2+i]-1) > 0.1 {
					t.Errorf("var[%d] = %.5f, exact %.5f", i, v, cov[i*2+i])
				}
			}
			data, err := os.ReadFile(csv)
			if err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(string(data), "\n"); lines != 4001 {
				t.Errorf("draws CSV has %d lines, want 4001", lines)
			}
		})
	}
}

func TestInferFlowsBadFlags(t *testing.T) {
	path, _ := blTaskFile(t, 3, factor.DiagGaussianFamily, factor.LinGaussianFamily, 2, 15)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--method", "iaf", "--steps", "0"}, "--steps"},
		{[]string{"--method", "maf", "--lr", "-1"}, "--lr"},
		{[]string{"--method", "nsf", "--bins", "1"}, "bins"},
		{[]string{"--method", "nsf", "--bound", "0"}, "bound"},
		{[]string{"--method", "iaf", "--hidden", "0"}, "hidden"},
		{[]string{"--method", "maf", "--layers", "0"}, "--layers"},
		{[]string{"--method", "iaf", "--draws", "0"}, "--draws"},
		{[]string{"--method", "maf", "--depth", "0"}, "--depth"},
		{[]string{"--method", "nsf", "--bound", "NaN"}, "--bound"},
		{[]string{"--method", "nsf", "--hidden", "100000"}, "hidden"},
	} {
		code, _, errs := cliRun(t, append([]string{"infer", "--task", path}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 mentioning %q", c.args, code, errs, c.msg)
		}
	}
}
