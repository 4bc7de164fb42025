package posterior_test

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// costTasks are tasks of the synthetic suite's families, d = 4, N = 64.
func costTasks(t *testing.T) []*factor.Task {
	t.Helper()
	var out []*factor.Task
	for i, lik := range []string{factor.BernoulliLogitFamily, factor.LinStudentTFamily, factor.BinomialLogitFamily, factor.LinGaussianFamily} {
		task, err := factor.Simulate(rand.New(rand.NewPCG(uint64(i), 77)), factor.SimOptions{D: 4, N: 64, Prior: factor.DiagStudentTFamily, Likelihoods: []string{lik}, Design: "iid"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, task)
	}
	return out
}

// wideProposals are n draws from N(0, 2²I) with their log q.
func wideProposals(d, n int, seed uint64) (*posterior.Draws, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	z := make([]float64, n*d)
	lq := make([]float64, n)
	for s := range n {
		for i := range d {
			v := 2 * rng.NormFloat64()
			z[s*d+i] = v
			lq[s] -= v * v / 8
		}
	}
	return &posterior.Draws{D: d, Z: z}, lq
}

// TestSNISPackedTargetMoments: SNIS weighted by the packed evaluator (what
// afin-snis and frvi-snis use) against a straightforward computation here
// (Task.LogDensity in a loop, weights by log-sum-exp, two-pass weighted
// moments). Moments agree to 1e-12 of the posterior's scale, the energy
// gap to 1e-11 of its terms: log p̃ differs by rounding only.
func TestSNISPackedTargetMoments(t *testing.T) {
	for _, task := range costTasks(t) {
		prop, lq := wideProposals(task.D, 20000, 3)
		got, _, err := posterior.SNISDraws(context.Background(), task.Packed(), prop, lq)
		if err != nil {
			t.Fatal(err)
		}
		d, n := task.D, prop.Len()
		lw := make([]float64, n)
		top := math.Inf(-1)
		for s := range n {
			lw[s] = task.LogDensity(prop.Row(s)) - lq[s]
			top = math.Max(top, lw[s])
		}
		var sum float64
		w := make([]float64, n)
		for s := range n {
			w[s] = math.Exp(lw[s] - top)
			sum += w[s]
		}
		mean := make([]float64, d)
		for s := range n {
			for i := range d {
				mean[i] += w[s] / sum * prop.Z[s*d+i]
			}
		}
		gotMean, gotCov := got.Mean(), got.Cov()
		for i := range d {
			if math.Abs(gotMean[i]-mean[i]) > 1e-12*(1+math.Abs(mean[i])) {
				t.Errorf("%s: mean[%d] %.17g, straightforward %.17g", task.Name, i, gotMean[i], mean[i])
			}
			for j := range d {
				var c float64
				for s := range n {
					c += w[s] / sum * (prop.Z[s*d+i] - mean[i]) * (prop.Z[s*d+j] - mean[j])
				}
				if math.Abs(gotCov[i*d+j]-c) > 1e-12*(1+math.Abs(c)) {
					t.Errorf("%s: cov[%d,%d] %.17g, straightforward %.17g", task.Name, i, j, gotCov[i*d+j], c)
				}
			}
		}
		// The energy gap reuses the stored log p̃; evaluated afresh on a
		// copy without it, it agrees to rounding.
		ref, _ := wideProposals(task.D, 500, 4)
		fresh := &posterior.Draws{D: got.D, Z: got.Z, W: got.W}
		a, b := posterior.EnergyGap(task, got, ref), posterior.EnergyGap(task, fresh, ref)
		var scale float64
		for s := range n {
			scale += w[s] / sum * math.Abs(task.LogDensity(prop.Row(s)))
		}
		if math.Abs(a-b) > 1e-11*scale {
			t.Errorf("%s: energy gap %.17g with stored log p̃, %.17g evaluated afresh", task.Name, a, b)
		}
	}
}

// TestEnergyGapIgnoresForeignLogP: log p̃ stored for another target is
// detected and every draw evaluated again, so the gap is that of the
// target asked about.
func TestEnergyGapIgnoresForeignLogP(t *testing.T) {
	tasks := costTasks(t)
	prop, lq := wideProposals(4, 5000, 5)
	dr, _, err := posterior.SNISDraws(context.Background(), tasks[0], prop, lq)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := wideProposals(4, 500, 6)
	fresh := &posterior.Draws{D: dr.D, Z: dr.Z, W: dr.W}
	if a, b := posterior.EnergyGap(tasks[1], dr, ref), posterior.EnergyGap(tasks[1], fresh, ref); a != b {
		t.Errorf("energy gap against another task: %.17g with the first task's log p̃, %.17g evaluated", a, b)
	}
}

// TestLogDensitiesIndependentOfCores: the values, and so every SNIS
// number, are the same on one core and on several, and equal the target's
// own.
func TestLogDensitiesIndependentOfCores(t *testing.T) {
	task := costTasks(t)[0]
	prop, _ := wideProposals(4, 3*4096+17, 7)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, err := posterior.LogDensities(context.Background(), task, prop)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(4)
	four, err := posterior.LogDensities(context.Background(), task, prop)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(one, four) {
		t.Fatal("log p̃ differs between 1 and 4 cores")
	}
	for s := range prop.Len() {
		if one[s] != task.LogDensity(prop.Row(s)) {
			t.Fatalf("draw %d: %v, the task says %v", s, one[s], task.LogDensity(prop.Row(s)))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := posterior.LogDensities(ctx, task, prop); err == nil {
		t.Error("a cancelled context gave no error")
	}
}
