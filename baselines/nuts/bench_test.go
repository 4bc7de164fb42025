package nuts

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/cputime"
	"github.com/afin-bench/afin/internal/streams"
)

// benchLikelihoods are the four likelihoods of the synthetic suite.
var benchLikelihoods = []string{factor.LinGaussianFamily, factor.BernoulliLogitFamily, factor.BinomialLogitFamily, factor.LinStudentTFamily}

func cpuSeconds() float64 {
	c, err := cputime.Process()
	if err != nil {
		return math.NaN()
	}
	return c
}

// BenchmarkNUTSMedium runs NUTS (4 chains × 1000 draws after 1000 warm-up,
// the paper's setup) on the synthetic medium setting (d = 8, N = 64) per
// likelihood and reports gradient throughput, ESS per CPU-second and ESS
// per gradient (bulk ESS, minimum over coordinates; gradients include
// warm-up, as Stan's n_leapfrog totals do when compared the same way).
func BenchmarkNUTSMedium(b *testing.B) {
	for _, lik := range benchLikelihoods {
		b.Run(lik, func(b *testing.B) {
			task, err := factor.Simulate(streams.New(8, 64), factor.SimOptions{D: 8, N: 64, Prior: factor.DiagGaussianFamily, Likelihoods: []string{lik}, Design: factor.DesignIID})
			if err != nil {
				b.Fatal(err)
			}
			var grads, sampleGrads int64
			var ess, cpu, wall float64
			for i := 0; i < b.N; i++ {
				c0, w0 := cpuSeconds(), time.Now()
				res, err := Sample(context.Background(), task, task.D, Config{Warmup: 1000, Draws: 1000, Chains: 4, Seed: uint64(i), Init: task.Prior.Location()})
				if err != nil {
					b.Fatal(err)
				}
				cpu += cpuSeconds() - c0
				wall += time.Since(w0).Seconds()
				grads += res.GradEvals
				for _, st := range res.Stats {
					sampleGrads += st.Leapfrogs
				}
				ess += res.Convergence.MinESSBulk
			}
			b.ReportMetric(float64(grads)/cpu, "grads/cpu-s")
			b.ReportMetric(ess/cpu, "ess/cpu-s")
			b.ReportMetric(ess/wall, "ess/wall-s")
			b.ReportMetric(ess/float64(grads), "ess/grad")
			b.ReportMetric(ess/float64(sampleGrads), "ess/sampling-grad")
		})
	}
}

// BenchmarkLogDensityGrad is the raw cost of one gradient at (8, 64).
func BenchmarkLogDensityGrad(b *testing.B) {
	for _, lik := range benchLikelihoods {
		b.Run(lik, func(b *testing.B) {
			task, err := factor.Simulate(streams.New(8, 64), factor.SimOptions{D: 8, N: 64, Prior: factor.DiagGaussianFamily, Likelihoods: []string{lik}, Design: factor.DesignIID})
			if err != nil {
				b.Fatal(err)
			}
			z := append([]float64(nil), task.Prior.Location()...)
			g := make([]float64, task.D)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				z[i%8] += 1e-9
				task.LogDensityGrad(z, g)
			}
		})
	}
}
