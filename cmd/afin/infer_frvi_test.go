package main

import (
	"math"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
)

func TestInferFRVI(t *testing.T) {
	path, task := blTaskFile(t, 6, factor.FullRankGaussianFamily, factor.LinGaussianFamily, 3, 30)
	mean, cov, err := factor.ExactPosterior(task)
	if err != nil {
		t.Fatal(err)
	}
	for _, sel := range []string{"elbo", "oracle"} {
		code, out, errs := cliRun(t, "infer", "--method", "frvi", "--task", path, "--steps", "3000", "--lr-select", sel,
			"--cache-dir", t.TempDir(), "--draws", "500", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", sel, code, errs)
		}
		r := blDecode(t, out)
		if r.Diagnostics["lr_select"] != sel || r.NDraws != 500 || r.Weighted {
			t.Errorf("%s: unexpected output %+v", sel, r)
		}
		var m1, m2 float64
		for i := range mean {
			m1 += (r.Mean[i] - mean[i]) * (r.Mean[i] - mean[i])
			for j := range mean {
				e := r.Cov[i][j] - cov[i*3+j]
				m2 += e * e
			}
		}
		if math.Sqrt(m1) > 1e-2 || math.Sqrt(m2) > 1e-2 {
			t.Errorf("%s: M1 %.3g M2 %.3g, want < 1e-2", sel, math.Sqrt(m1), math.Sqrt(m2))
		}
	}
	code, out, errs := cliRun(t, "infer", "--method", "frvi", "--task", path, "--steps", "500", "--lr", "0.01", "--json")
	if code != 0 {
		t.Fatalf("fixed lr: exit %d: %s", code, errs)
	}
	if r := blDecode(t, out); r.Diagnostics["lr_select"] != "fixed" || r.Diagnostics["lr"] != 0.01 {
		t.Errorf("fixed lr diagnostics %v", r.Diagnostics)
	}
}

func TestInferFRVISNIS(t *testing.T) {
	path, _ := blTaskFile(t, 7, factor.DiagStudentTFamily, factor.BernoulliLogitFamily, 2, 20)
	code, out, errs := cliRun(t, "infer", "--method", "frvi-snis", "--task", path, "--steps", "1000", "--proposals", "3000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := blDecode(t, out)
	if !r.Weighted || r.NDraws != 3000 {
		t.Errorf("weighted %v n_draws %d, want weighted 3000", r.Weighted, r.NDraws)
	}
	for _, k := range []string{"pareto_k", "max_weight", "entropy_ratio", "ess", "lr", "lr_select"} {
		if _, ok := r.Diagnostics[k]; !ok {
			t.Errorf("diagnostics lack %q", k)
		}
	}
}

func TestInferFRVIBadFlags(t *testing.T) {
	path, _ := blTaskFile(t, 8, factor.DiagGaussianFamily, factor.LinGaussianFamily, 2, 5)
	for _, args := range [][]string{
		{"--method", "frvi", "--steps", "0"},
		{"--method", "frvi", "--lr", "-1"},
		{"--method", "frvi", "--lr-select", "best"},
		{"--method", "frvi", "--lr", "0.1", "--lr-select", "oracle"},
		{"--method", "frvi-snis", "--proposals", "1"},
	} {
		code, _, errs := cliRun(t, append([]string{"infer", "--task", path}, args...)...)
		if code != 2 || !strings.Contains(errs, strings.TrimPrefix(args[2], "--")) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the flag", args, code, errs)
		}
	}
}

// TestInferFRVITiming checks the VI timing rule (methods package doc):
// seconds are the protocol's start (the Laplace approximation), the
// selected rate's optimisation and drawing from q, under either selection
// rule; scoring against the reference, the rates that lost the selection
// (sweep_seconds) and the convergence checks (check_seconds) are reported
// apart and not charged.
func TestInferFRVITiming(t *testing.T) {
	path, _ := blTaskFile(t, 9, factor.DiagLaplaceFamily, factor.BernoulliLogitFamily, 2, 10)
	cache := t.TempDir()
	for _, sel := range []string{"oracle", "elbo"} {
		code, out, errs := cliRun(t, "infer", "--method", "frvi", "--task", path, "--steps", "50", "--lr-select", sel,
			"--cache-dir", cache, "--draws", "100", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", sel, code, errs)
		}
		r := blDecode(t, out)
		opt, _ := r.Diagnostics["optimize_seconds"].(float64)
		sweep, _ := r.Diagnostics["sweep_seconds"].(float64)
		sample, _ := r.Diagnostics["sample_seconds"].(float64)
		start, _ := r.Diagnostics["start_seconds"].(float64)
		check, _ := r.Diagnostics["check_seconds"].(float64)
		if !(opt > 0) || !(sweep >= opt) || !(start > 0) || !(check > 0) {
			t.Errorf("%s: optimize_seconds %v, sweep_seconds %v, start_seconds %v, check_seconds %v", sel, opt, sweep, start, check)
		}
		if want := start + opt + sample; math.Abs(r.Seconds-want) > 1e-9 {
			t.Errorf("%s: seconds %.6g, want start + optimize + sample = %.6g", sel, r.Seconds, want)
		}
	}
}
