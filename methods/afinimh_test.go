package methods_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
)

// TestAFINIMHAndAuto run afin-imh and auto on the shipped checkpoint and a
// conjugate task: both land on the exact posterior, report their
// diagnostics, and auto says which stage answered.
func TestAFINIMHAndAuto(t *testing.T) {
	env := &methods.Env{}
	imh, err := methods.New("afin-imh", env)
	if errors.Is(err, methods.ErrUnavailable) {
		t.Fatal(err) // the checkpoint ships with the module
	}
	if err != nil {
		t.Fatal(err)
	}
	auto, err := methods.New("auto", env)
	if err != nil {
		t.Fatal(err)
	}
	task, exact := conjugateTask(t)
	opts := methods.DefaultOptions()
	pts := run(t, imh, &methods.Job{Task: task, Seed: 5, Ladder: []int{400, 4000}, Options: opts})
	p := pts[methods.Slot{Kind: methods.KindDraws, Budget: 4000}]
	dg := p.Diagnostics.IMHDiagnostics
	if dg == nil || p.Draws.Len() != 4000 || p.Draws.Weighted() {
		t.Fatalf("afin-imh: %d draws, diagnostics %+v", p.Draws.Len(), dg)
	}
	if m1 := floats.Distance(p.Draws.Mean(), exact, 2); m1 > 0.1 {
		t.Errorf("afin-imh: M1 %.4f against the exact posterior", m1)
	}
	if !(dg.AcceptRate > 0 && dg.AcceptRate <= 1) || !(dg.Rhat < 1.05) || !(p.Seconds > 0) {
		t.Errorf("afin-imh diagnostics %+v, seconds %v", dg, p.Seconds)
	}
	t.Logf("afin-imh: accept %.3f, ESS %.0f, R̂ %.4f, k̂ %.3f, %.3fs", float64(dg.AcceptRate), float64(dg.ESSBulk),
		float64(dg.Rhat), float64(dg.ParetoK), p.Seconds)

	pts = run(t, auto, &methods.Job{Task: task, Seed: 5, Ladder: []int{4000}, Options: opts})
	p = pts[methods.Slot{Kind: methods.KindDraws, Budget: 4000}]
	ad := p.Diagnostics.AutoDiagnostics
	if ad == nil || (ad.Stage != methods.AutoStageSNIS && ad.Stage != methods.AutoStageNUTS) || ad.Reason == "" {
		t.Fatalf("auto diagnostics %+v", ad)
	}
	if m1 := floats.Distance(p.Draws.Mean(), exact, 2); m1 > 0.1 {
		t.Errorf("auto (%s): M1 %.4f against the exact posterior", ad.Stage, m1)
	}
	// The answering stage's own diagnostics passed.
	switch ad.Stage {
	case methods.AutoStageSNIS:
		if !(float64(ad.ParetoK) <= 0.7) || ad.Outside != "" {
			t.Errorf("SNIS answered with k̂ %v, outside %q", ad.ParetoK, ad.Outside)
		}
	case methods.AutoStageNUTS:
		nd := p.Diagnostics.NUTSDiagnostics
		if nd == nil || !(float64(nd.Rhat) <= 1.01) || nd.Divergences > 0 || math.IsNaN(float64(nd.ESSBulk)) {
			t.Errorf("NUTS answered with %+v", nd)
		}
	}
	t.Logf("auto: stage %s (%s), %.3fs", ad.Stage, ad.Reason, p.Seconds)
}

// TestAutoFallback: a task outside the checkpoint's training support (N
// above its range) is answered by AFIN-initialised NUTS, which lands on
// the exact posterior; and when NUTS cannot pass its own checks either
// (an unreachable ESS), auto refuses with ErrNoStagePassed instead of
// returning either stage's draws.
func TestAutoFallback(t *testing.T) {
	env := &methods.Env{}
	auto, err := methods.New("auto", env)
	if errors.Is(err, methods.ErrUnavailable) {
		t.Fatal(err) // the checkpoint ships with the module
	}
	if err != nil {
		t.Fatal(err)
	}
	task, exact := conjugateTaskN(t, 4, 600)
	opts := methods.DefaultOptions()
	p := run(t, auto, &methods.Job{Task: task, Seed: 5, Ladder: []int{2000}, Options: opts})[methods.Slot{Kind: methods.KindDraws, Budget: 2000}]
	ad, nd := p.Diagnostics.AutoDiagnostics, p.Diagnostics.NUTSDiagnostics
	if ad == nil || ad.Stage != methods.AutoStageNUTS || ad.Outside == "" || nd == nil || p.Draws.Len() != 2000 || ad.Attempts < 1 {
		t.Fatalf("auto diagnostics %+v, nuts %+v", ad, nd)
	}
	if m1 := floats.Distance(p.Draws.Mean(), exact, 2); m1 > 0.05 {
		t.Errorf("auto (nuts): M1 %.4f against the exact posterior", m1)
	}
	t.Logf("auto: %s (%s); R̂ %.4f, ESS %.0f, %.3fs", ad.Stage, ad.Reason, float64(nd.Rhat), float64(nd.ESSBulk), p.Seconds)

	opts.Auto.MinESSBulk = 1e9
	err = auto.Run(context.Background(), &methods.Job{Task: task, Seed: 5, Ladder: []int{400}, Options: opts},
		func(methods.Point) error { t.Error("auto emitted a point whose stage failed"); return nil })
	if !errors.Is(err, methods.ErrNoStagePassed) {
		t.Errorf("err %v, want ErrNoStagePassed", err)
	}
}

// conjugateTaskN is a diag_gaussian/lin_gaussian task of the given size
// with its exact posterior mean.
func conjugateTaskN(t *testing.T, d, n int) (*factor.Task, []float64) {
	t.Helper()
	task, err := factor.Simulate(rand.New(rand.NewPCG(uint64(d), uint64(n))), factor.SimOptions{D: d, N: n,
		Prior: factor.DiagGaussianFamily, Likelihoods: []string{factor.LinGaussianFamily}, Design: factor.DesignIID})
	if err != nil {
		t.Fatal(err)
	}
	mean, _, err := factor.ExactPosterior(task)
	if err != nil {
		t.Fatal(err)
	}
	return task, mean
}
