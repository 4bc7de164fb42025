package methods

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/factor"
)

// TestWarmupSaving measures what AFIN initialisation saves NUTS (issue
// 18): on medium-tier tasks of the 16 prior–likelihood pairs (inside the
// shipped checkpoint's support), cold NUTS (prior location, diagonal metric
// adapted over 1000 warm-up iterations, as the nuts method) against auto's
// NUTS stage (chains at AFIN draws, AFIN's covariance as a dense metric,
// 200 warm-up iterations adapting the step size only), both 4 chains ×
// 250 draws. It logs warm-up gradient evaluations and bulk ESS per
// sampling gradient evaluation; it fails only if warm NUTS converges worse
// (R̂) or the saving disappears. Not in -short: about a minute.
func TestWarmupSaving(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: about a minute of cold and warm NUTS")
	}
	net, err := (&Env{}).network()
	if err != nil {
		t.Fatal(err) // the checkpoint ships with the module
	}
	ctx := context.Background()
	o := DefaultAutoOptions()
	var coldW, warmW, coldESS, warmESS float64
	var coldBad, warmBad int
	priors := []string{factor.DiagGaussianFamily, factor.FullRankGaussianFamily, factor.DiagLaplaceFamily, factor.DiagStudentTFamily}
	liks := []string{factor.LinGaussianFamily, factor.BernoulliLogitFamily, factor.BinomialLogitFamily, factor.LinStudentTFamily}
	for i, pr := range priors {
		for j, lk := range liks {
			task, err := factor.Simulate(rand.New(rand.NewPCG(uint64(i), uint64(j))), factor.SimOptions{D: 8, N: 64,
				Prior: pr, Likelihoods: []string{lk}, Design: factor.DesignIID})
			if err != nil {
				t.Fatal(err)
			}
			cold, err := nuts.Sample(ctx, task, task.D, nuts.Config{Warmup: 1000, Draws: 250, Chains: 4, Seed: 1, Init: task.Prior.Location()})
			if err != nil {
				t.Fatal(err)
			}
			p, err := net.run(ctx, task, 4000, rand.New(rand.NewPCG(2, 3)))
			if err != nil {
				t.Fatal(err)
			}
			warm, _, err := warmNUTS(ctx, task, p, o, 1000, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			cw, cs := warmupGrads(cold)
			ww, ws := warmupGrads(warm)
			coldW += cw
			warmW += ww
			coldESS += cold.Convergence.MinESSBulk / cs
			warmESS += warm.Convergence.MinESSBulk / ws
			if cold.Convergence.MaxRhat > 1.01 {
				coldBad++
			}
			if warm.Convergence.MaxRhat > 1.01 {
				warmBad++
			}
			t.Logf("%s/%s: warm-up grads cold %.0f warm %.0f; ESS cold %.0f warm %.0f; R̂ cold %.3f warm %.3f",
				pr, lk, cw, ww, cold.Convergence.MinESSBulk, warm.Convergence.MinESSBulk, cold.Convergence.MaxRhat, warm.Convergence.MaxRhat)
		}
	}
	t.Logf("total warm-up gradient evaluations: cold %.0f, AFIN-initialised %.0f (%.1f× fewer); bulk ESS per 1000 sampling gradients: cold %.1f, warm %.1f; R̂ > 1.01: cold %d/16, warm %d/16",
		coldW, warmW, coldW/warmW, 1000*coldESS/16, 1000*warmESS/16, coldBad, warmBad)
	// Cost of 1000 bulk ESS per task, warm-up included.
	cost := func(w, eff float64) float64 { return w/16 + 1000/(eff/16) }
	t.Logf("gradient evaluations for ESS 1000 per task (warm-up + sampling): cold %.0f, AFIN-initialised %.0f (%.1f× fewer)",
		cost(coldW, coldESS), cost(warmW, warmESS), cost(coldW, coldESS)/cost(warmW, warmESS))
	if warmW >= coldW || warmBad > coldBad+2 {
		t.Errorf("AFIN initialisation saved nothing: warm-up grads %v vs %v, R̂ failures %d vs %d", warmW, coldW, warmBad, coldBad)
	}
}

// warmupGrads splits a run's gradient evaluations into warm-up and
// sampling ones.
func warmupGrads(r *nuts.Result) (warm, sampling float64) {
	for _, s := range r.Stats {
		sampling += float64(s.Leapfrogs)
	}
	return float64(r.GradEvals) - sampling, sampling
}
