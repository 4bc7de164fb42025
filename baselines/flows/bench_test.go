package flows

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// logisticTask is a Bayesian logistic regression with d coefficients and n
// observations: the synthetic "medium" shape (d=8, N=64) and a UCI-sized
// one (d=13, N=297, the heart-disease task's shape).
func logisticTask(d, n int, seed uint64) *factor.Task {
	rng := rand.New(rand.NewPCG(seed, 5))
	loc, scale := make([]float64, d), make([]float64, d)
	for i := range scale {
		scale[i] = 1
	}
	t := &factor.Task{D: d, Prior: &factor.DiagGaussian{Loc: loc, Scale: scale}}
	z := make([]float64, d)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	for range n {
		x := make([]float64, d)
		var eta float64
		for i := range x {
			x[i] = rng.NormFloat64() / 2
			eta += x[i] * z[i]
		}
		y := 0.0
		if rng.Float64() < factor.Sigmoid(eta) {
			y = 1
		}
		t.Factors = append(t.Factors, &factor.BernoulliLogit{X: x, Y: y})
	}
	return t
}

// BenchmarkStep measures optimisation steps per second of Fit itself (4
// antithetic MC draws, forward, target gradient, backward, Adam update and
// the Polyak averaging of vi.Optimize) at the default architecture: one
// learning rate, 1000 steps per op.
//
//	go test ./baselines/flows/ -run '^$' -bench Step
func BenchmarkStep(b *testing.B) {
	const steps = 1000
	for _, shape := range [][2]int{{8, 64}, {13, 297}} {
		d, n := shape[0], shape[1]
		task := logisticTask(d, n, 1)
		for _, kind := range Kinds() {
			b.Run(fmt.Sprintf("%s/d%d_N%d", kind, d, n), func(b *testing.B) {
				for b.Loop() {
					_, err := Fit(context.Background(), task, kind, Options{Budgets: []int{steps}, LRs: []float64{1e-3}, ScoreDraws: 1})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(steps*b.N)/b.Elapsed().Seconds(), "steps/s")
			})
		}
	}
}

// BenchmarkSample times one draw with its log q (MAF is sequential: d
// conditioner passes per layer). go test ./baselines/flows/ -run '^$' -bench Sample
func BenchmarkSample(b *testing.B) {
	for _, d := range []int{8, 13} {
		for _, kind := range Kinds() {
			b.Run(fmt.Sprintf("%s/d%d", kind, d), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				f, err := New(d, kind, Arch{}, rng)
				if err != nil {
					b.Fatal(err)
				}
				jitter(f, rng, 0.05)
				z := make([]float64, d)
				for b.Loop() {
					f.Sample(rng, z)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "draws/s")
			})
		}
	}
}
