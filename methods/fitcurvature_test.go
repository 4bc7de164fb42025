package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/factor"
)

// The curvature check against accurate answers of non-Gaussian
// posteriors: NUTS moments (2 chains of 1,000 draws) of 160 seeded tasks
// over every prior and four likelihood families, d 2 to 8, N 4 to 63. An
// accurate answer's sd is not below the conditional sd at its mean by the
// check's tolerance, so at most 2% of them may read as too narrow
// (measured: none; the largest ratio 1.11, against 1.4).
func TestCurvatureCheckOnNUTSAnswers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	flagged, total := 0, 0
	worst := math.Inf(-1)
	for _, prior := range factor.PriorFamilies {
		for _, lik := range []string{factor.BernoulliLogitFamily, factor.BinomialLogitFamily, factor.LinStudentTFamily, factor.LinGaussianFamily} {
			for k := range 10 {
				d, n := 2+rng.IntN(7), 4+rng.IntN(60)
				task, err := factor.Simulate(rng, factor.SimOptions{D: d, N: n, Prior: prior, Likelihoods: []string{lik}})
				if err != nil {
					t.Fatal(err)
				}
				res, err := nuts.Sample(context.Background(), task, d, nuts.Config{Warmup: 500, Draws: 1000, Chains: 2, Seed: uint64(k + 1), Init: task.Prior.Location()})
				if err != nil {
					t.Fatal(err)
				}
				dr := res.Draws()
				l, _, ok := curvatureNarrow(task, dr.Mean(), dr.Cov())
				if !ok {
					continue
				}
				total++
				worst = math.Max(worst, l)
				if l > math.Log(FitWidthMax) {
					flagged++
					t.Logf("%s/%s d=%d N=%d: sd %.2f× below the conditional sd", prior, lik, d, n, math.Exp(l))
				}
			}
		}
	}
	t.Logf("%d of %d accurate answers read as too narrow; largest ratio %.2f", flagged, total, math.Exp(worst))
	if total < 150 || float64(flagged) > 0.02*float64(total) {
		t.Errorf("%d of %d accurate answers read as too narrow (want ≤ 2%% of at least 150)", flagged, total)
	}
}
