package f64vec

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkKernels times each kernel on 256 sites (the paper's N) per
// op, on every kernel this CPU has (the design products at d = 4); it
// reports ns per site.
func BenchmarkKernels(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const m = 256
	s := randSites(rng, m, 2, 1)
	xt := make([]float64, 4*m)
	for i := range xt {
		xt[i] = rng.NormFloat64()
	}
	z := []float64{0.3, -0.2, 0.5, 1}
	dst := make([]float64, m)
	g := make([]float64, 4)
	def := Kernel()
	defer func() {
		if err := Use(def); err != nil {
			b.Fatal(err)
		}
	}()
	var a Acc
	for _, k := range Kernels() {
		if err := Use(k); err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"exp", func() { ExpNegAbs(dst, s.eta) }},
			{"matvec-d4", func() { MatVecT(xt, z, dst) }},
			{"logistic-bernoulli", func() { a.Reset(); Logistic(s.eta, s.y, s.n, nil, 0, &a) }},
			{"student", func() { a.Reset(); StudentT(s.eta, s.y, s.invQ, &a) }},
			{"logistic-bernoulli-grad", func() { a.Reset(); LogisticGrad(s.eta, s.y, s.n, nil, 0, &a, dst) }},
			{"student-grad", func() { a.Reset(); StudentTGrad(s.eta, s.y, s.invQ, &a, dst) }},
			{"addmatvec-d4", func() { AddMatVec(xt, s.y, 1, g) }},
		} {
			b.Run(c.name+"/"+k, func(b *testing.B) {
				for b.Loop() {
					c.f()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*m), "ns/site")
			})
		}
	}
}
