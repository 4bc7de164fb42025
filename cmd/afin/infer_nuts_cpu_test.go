package main

import (
	"context"
	"math"
	"testing"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/factor"
)

// TestInferNUTSCPUSeconds checks diagnostics.cpu_seconds, and that taking
// the draws through OnDraw (to keep R̂/ESS out of the timed region)
// leaves the draws and diagnostics exactly those of a plain nuts.Sample.
func TestInferNUTSCPUSeconds(t *testing.T) {
	path, task := blTaskFile(t, 3, factor.DiagGaussianFamily, factor.BinomialLogitFamily, 3, 30)
	code, out, errs := cliRun(t, "infer", "--method", "nuts", "--task", path, "--warmup", "200", "--draws", "300",
		"--chains", "2", "--seed", "5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := blDecode(t, out)
	cpu, ok := r.Diagnostics["cpu_seconds"].(float64)
	// 2 × 500 transitions on d = 3, N = 30 take milliseconds; a minute
	// would mean the clock counts something else.
	if !ok || !(cpu > 0 && cpu < 60) {
		t.Fatalf("cpu_seconds = %v, want a positive number of seconds", r.Diagnostics["cpu_seconds"])
	}

	res, err := nuts.Sample(context.Background(), task, task.D, nuts.Config{
		Warmup: 200, Draws: 150, Chains: 2, Seed: 5, Init: task.Prior.Location(),
	})
	if err != nil {
		t.Fatal(err)
	}
	mean := res.Draws().Mean()
	for i := range mean {
		if math.Abs(mean[i]-r.Mean[i]) > 1e-12*(1+math.Abs(mean[i])) {
			t.Fatalf("mean %v, plain nuts.Sample %v", r.Mean, mean)
		}
	}
	if ess, _ := r.Diagnostics["ess_bulk"].(float64); ess != res.Convergence.MinESSBulk {
		t.Errorf("ess_bulk %v, plain nuts.Sample %v", ess, res.Convergence.MinESSBulk)
	}
	if rh, _ := r.Diagnostics["rhat"].(float64); rh != res.Convergence.MaxRhat {
		t.Errorf("rhat %v, plain nuts.Sample %v", rh, res.Convergence.MaxRhat)
	}
}
