package posterior

import (
	"math/rand/v2"
	"testing"
)

// Benchmarks of the heavy paths: `go test ./posterior -run '^$' -bench . -benchtime 3x`.

func benchSets(weighted bool) (*Draws, *Draws) {
	rng := rand.New(rand.NewPCG(1, 1))
	a := newGaussian(zeros(16), equicorr(16, 1, 0.3)).sample(rng, 50000)
	b := newGaussian(filled(16, 0.1), diagCov(filled(16, 1.1)...)).sample(rng, 50000)
	if weighted {
		a.W = make([]float64, a.Len())
		for i := range a.W {
			a.W[i] = rng.ExpFloat64()
		}
		normalise(a.W)
	}
	return a, b
}

// BenchmarkSW2 is the paper's SW2 (R = 128) between two sets of 5·10⁴
// draws in d = 16.
func BenchmarkSW2(b *testing.B) {
	for _, c := range []struct {
		name     string
		weighted bool
	}{{"unweighted", false}, {"weighted", true}} {
		b.Run(c.name, func(b *testing.B) {
			x, y := benchSets(c.weighted)
			b.ResetTimer()
			for b.Loop() {
				SW2(x, y, 1)
			}
		})
	}
}

// BenchmarkSW2Proposals is SW2 between 10⁶ proposal draws (d = 4, as an
// SNIS point of the paper's ladder) and a 5·10⁴-draw reference.
func BenchmarkSW2Proposals(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	a := newGaussian(zeros(4), equicorr(4, 1, 0.3)).sample(rng, 1000000)
	ref := newGaussian(filled(4, 0.1), diagCov(filled(4, 1.1)...)).sample(rng, 50000)
	for _, weighted := range []bool{false, true} {
		name := "unweighted"
		if weighted {
			name = "weighted"
			a.W = make([]float64, a.Len())
			for i := range a.W {
				a.W[i] = rng.ExpFloat64()
			}
			normalise(a.W)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				SW2(a, ref, 1)
			}
		})
	}
}

// BenchmarkParetoK is PSIS k̂ of 10⁶ log ratios (tail 3000).
func BenchmarkParetoK(b *testing.B) {
	lw := gpdLogDraws(rand.New(rand.NewPCG(2, 2)), 1000000, 0.5)
	b.ResetTimer()
	for b.Loop() {
		ParetoK(lw)
	}
}

// BenchmarkPSIS also smooths and normalises the 10⁶ weights (a full sort).
func BenchmarkPSIS(b *testing.B) {
	lw := gpdLogDraws(rand.New(rand.NewPCG(2, 2)), 1000000, 0.5)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := PSIS(lw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSNIS is SNIS with its diagnostics on 10⁶ proposal draws (d = 4).
func BenchmarkSNIS(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	const n, d = 1000000, 4
	z := make([]float64, n*d)
	logQ := make([]float64, n)
	logP := make([]float64, n)
	for i := range logQ {
		logQ[i] = rng.NormFloat64()
		logP[i] = rng.NormFloat64()
	}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := SNIS(d, z, logQ, logP); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkESSBulk is bulk ESS of 4 chains × 2.5·10⁵ draws (a 10⁶-draw
// reference run).
func BenchmarkESSBulk(b *testing.B) {
	ch := ar1Chains(rand.New(rand.NewPCG(4, 4)), 4, 250000, 0.5, nil)
	b.ResetTimer()
	for b.Loop() {
		ESSBulk(ch)
	}
}

// BenchmarkParetoKMLE is the authors' estimator on 10⁶ log ratios.
func BenchmarkParetoKMLE(b *testing.B) {
	lw := gpdLogDraws(rand.New(rand.NewPCG(2, 2)), 1000000, 0.5)
	b.ResetTimer()
	for b.Loop() {
		ParetoKMLE(lw)
	}
}

// BenchmarkSW2Points scores the points of one task — sets of 10² to 10⁵
// draws (d = 4), as a method's ladder — against one reference of 5·10⁴
// draws: each SW2 sorting the reference's projections again ("each"), or
// one SW2Ref for the task ("ref", its projections included).
func BenchmarkSW2Points(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 5))
	set := func(n int) *Draws {
		d := &Draws{D: 4, Z: make([]float64, 4*n)}
		for i := range d.Z {
			d.Z[i] = rng.NormFloat64()
		}
		return d
	}
	ref := set(50_000)
	var points []*Draws
	for _, n := range []int{100, 1000, 10_000, 100_000, 100, 1000, 10_000} {
		points = append(points, set(n))
	}
	b.Run("each", func(b *testing.B) {
		for range b.N {
			for _, p := range points {
				SW2(p, ref, 1)
			}
		}
	})
	b.Run("ref", func(b *testing.B) {
		for range b.N {
			r := NewSW2Ref(ref, 1)
			for _, p := range points {
				r.SW2(p)
			}
		}
	})
}
