package bench

import (
	"context"
	"math"
	"testing"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/posterior"
)

// The AFIN adapters on a freshly initialised (2-step) checkpoint: the
// single-shot draws follow the network's Gaussian, the SNIS points are
// weighted with diagnostics, the star is the proposal, both adapters share
// one network, and the checkpoint hash lands in the provenance.
func TestAFINAdapters(t *testing.T) {
	dir := t.TempDir()
	opts := afin.DefaultTrainOptions()
	opts.Steps, opts.BatchTasks, opts.Warmup, opts.DMax, opts.NMax = 2, 2, 1, 4, 8
	opts.CheckpointEvery, opts.EvalEvery = 0, 0
	cfg, err := afin.ConfigByName("small", "gaussian")
	if err != nil {
		t.Fatal(err)
	}
	if err := (&afin.Trainer{Dir: dir}).Train(context.Background(), cfg, opts, false); err != nil {
		t.Fatal(err)
	}
	p, _ := GetProfile("smoke")
	env := MethodEnv{Checkpoint: dir}
	ms, notes, err := ResolveMethods(p.Plans("synthetic"), []string{"afin", "afin-snis"}, env, nil)
	if err != nil || len(notes) != 0 {
		t.Fatalf("%v %v", err, notes)
	}
	a, b := ms["afin"].(afinMethod), ms["afin-snis"].(afinSNISMethod)
	if a.net != b.net || len(a.CheckpointHash()) != 64 {
		t.Fatalf("adapters do not share one loaded network (hash %q)", a.CheckpointHash())
	}
	syn, _ := Settings("synthetic")
	s := syn[20]
	task, err := SimTask(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := a.net.forward(task)
	if err != nil {
		t.Fatal(err)
	}
	mean, cov := g.Mean, g.Cov()
	run := func(m Method, plan Plan) map[Slot]Point {
		got := map[Slot]Point{}
		job := &Job{Task: task, Setting: s, Seed: 3, Plan: plan, Score: func(*posterior.Draws) float64 { return 0 }}
		if err := m.Run(context.Background(), job, func(pt Point) error { got[pt.Slot] = pt; return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(m.Slots(plan)) {
			t.Fatalf("%s: %d points for %d slots", m.Name(), len(got), len(m.Slots(plan)))
		}
		return got
	}
	single := run(a, Plan{Method: "afin", Ladder: []int{20000}})[Slot{Kind: "draws", Budget: 20000}]
	mu, c := single.Draws.Mean(), single.Draws.Cov()
	for i := range mean {
		if sd := math.Sqrt(cov[i*task.D+i]); math.Abs(mu[i]-mean[i]) > 5*sd/math.Sqrt(20000) || math.Abs(c[i*task.D+i]/cov[i*task.D+i]-1) > 0.05 {
			t.Fatalf("coordinate %d: draws mean %.4f var %.4f, network %.4f %.4f", i, mu[i], c[i*task.D+i], mean[i], cov[i*task.D+i])
		}
	}
	if !(single.Seconds > 0) || single.Diagnostics["forward_seconds"] > single.Seconds {
		t.Errorf("seconds %v, forward %v", single.Seconds, single.Diagnostics["forward_seconds"])
	}
	pts := run(b, Plan{Method: "afin-snis", Ladder: []int{100, 1000}})
	star := pts[Slot{Stage: "proposal", Kind: "proposals", Budget: 1000}]
	if star.Draws.Weighted() || star.Draws.Len() != 1000 {
		t.Error("the proposal star must be 1000 unweighted proposal draws")
	}
	for _, n := range []int{100, 1000} {
		pt := pts[Slot{Kind: "proposals", Budget: n}]
		if !pt.Draws.Weighted() || pt.Draws.Len() != n {
			t.Errorf("SNIS at %d: weighted %v, %d draws", n, pt.Draws.Weighted(), pt.Draws.Len())
		}
		for _, k := range []string{"pareto_k", "max_weight", "entropy_ratio", "ess"} {
			if _, ok := pt.Diagnostics[k]; !ok {
				t.Errorf("SNIS at %d lacks %s", n, k)
			}
		}
	}
}
