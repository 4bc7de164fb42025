package bench

import (
	"context"
	"math"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// Every adapter, run on a conjugate task (diagonal Gaussian prior, linear
// Gaussian likelihood) whose exact posterior is known, emits exactly its
// slots, with positive timings, and lands close to the exact posterior at
// its largest budget.
func TestAdaptersAgainstExactPosterior(t *testing.T) {
	s := Setting{Suite: "synthetic", Key: "diag_gaussian/lin_gaussian/medium", Prior: factor.DiagGaussianFamily,
		Likelihood: factor.LinGaussianFamily, D: 4, N: 32, Design: "iid"}
	task, err := SimTask(s, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !factor.IsConjugate(task) {
		t.Fatal("task not conjugate")
	}
	p, _ := GetProfile("smoke")
	ref, err := CachedReference(t.TempDir())(context.Background(), task, p)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Info.Kind != "exact" {
		t.Fatalf("reference kind %s, want exact", ref.Info.Kind)
	}
	mean, cov, _ := factor.ExactPosterior(task)
	for i := range mean {
		if ref.Mean[i] != mean[i] || ref.Cov[i*4+i] != cov[i*4+i] {
			t.Fatal("reference moments are not the exact ones")
		}
	}
	plans := map[string]Plan{
		"nuts":      {Method: "nuts", Ladder: []int{100, 2000}, Options: map[string]any{"warmup": 300}},
		"frvi":      {Method: "frvi", Ladder: []int{30, 2000}, Options: map[string]any{"lrs": []float64{1e-3, 1e-2}, "draws": 4000}},
		"frvi-snis": {Method: "frvi-snis", Variant: "500", Ladder: []int{200, 4000}, Options: map[string]any{"steps": 500, "lrs": []float64{1e-2}}},
		"iaf":       {Method: "iaf", Ladder: []int{50, 1500}, Options: map[string]any{"lrs": []float64{1e-2}, "draws": 4000}},
	}
	tol := map[string]float64{"nuts": 0.05, "frvi": 0.05, "frvi-snis": 0.05, "iaf": 0.08}
	for name, f := range builtinMethods() {
		plan, ok := plans[name]
		if !ok {
			continue
		}
		m, err := f(MethodEnv{})
		if err != nil {
			t.Fatal(err)
		}
		job := &Job{Task: task, Setting: s, Seed: 11, Plan: plan,
			Score: func(d *posterior.Draws) float64 { return posterior.SW2(d, ref.Draws, 5) }}
		got := map[Slot]Point{}
		err = m.Run(context.Background(), job, func(pt Point) error {
			if _, dup := got[pt.Slot]; dup {
				t.Errorf("%s emitted %+v twice", name, pt.Slot)
			}
			got[pt.Slot] = pt
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		slots := m.Slots(plan)
		if len(got) != len(slots) {
			t.Errorf("%s emitted %d points for %d slots", name, len(got), len(slots))
		}
		var last Point
		for _, sl := range slots {
			pt, ok := got[sl]
			if !ok {
				t.Errorf("%s: slot %+v not emitted", name, sl)
				continue
			}
			if !(pt.Seconds > 0) || pt.Draws == nil || pt.Draws.D != 4 {
				t.Errorf("%s %+v: seconds %v, draws %v", name, sl, pt.Seconds, pt.Draws)
			}
			if sl.Stage == "" && sl.Budget == plan.Ladder[len(plan.Ladder)-1] {
				last = pt
			}
		}
		if name == "frvi-snis" && !last.Draws.Weighted() {
			t.Errorf("frvi-snis draws are unweighted")
		}
		m1, _ := momentErrors(last.Draws, ref)
		sw2 := posterior.SW2(last.Draws, ref.Draws, 5)
		sd := math.Sqrt(cov[0])
		t.Logf("%s at its largest budget: M1 %.4f SW2 %.4f (posterior sd %.3f)", name, m1, sw2, sd)
		if sw2 > tol[name] || m1 > 3*tol[name] {
			t.Errorf("%s: SW2 %.4f, M1 %.4f against the exact posterior", name, sw2, m1)
		}
	}
}
