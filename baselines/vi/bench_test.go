package vi

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// BenchmarkFRVIMedium times FRVI optimisation (one learning rate, 1000
// Adam steps, 4 draws per step) on the synthetic medium setting
// (d = 8, N = 64) per likelihood.
func BenchmarkFRVIMedium(b *testing.B) {
	for _, lik := range []string{factor.LinGaussianFamily, factor.BernoulliLogitFamily, factor.BinomialLogitFamily, factor.LinStudentTFamily} {
		b.Run(lik, func(b *testing.B) {
			task, err := factor.Simulate(rand.New(rand.NewPCG(8, 64)), factor.SimOptions{D: 8, N: 64, Prior: factor.DiagGaussianFamily, Likelihoods: []string{lik}, Design: factor.DesignIID})
			if err != nil {
				b.Fatal(err)
			}
			const steps = 1000
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := FitFRVI(context.Background(), task, FRVIConfig{LR: 1e-2, Budgets: []int{steps}, Seed: uint64(i)}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(steps*b.N)/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(float64(4*steps*b.N)/b.Elapsed().Seconds(), "grads/s")
		})
	}
}
