package posterior

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/internal/cputime"
)

// BenchmarkSW2Binned is one SW2 (R = 128) of a 10⁷-draw weighted set, as
// the paper's largest SNIS point, against a 5·10⁴-draw reference, at
// d = 4 and d = 16: the binned path at its full size. Each run takes
// tens of seconds, so time it once on one core:
//
//	go test ./posterior -run '^$' -bench SW2Binned -benchtime 1x -cpu 1
//
// It reports the process's CPU seconds per SW2 beside the wall time: on
// a shared machine the wall time counts the others' turns on the core.
func BenchmarkSW2Binned(b *testing.B) {
	for _, d := range []int{4, 16} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(uint64(d), 17))
			a := newGaussian(zeros(d), equicorr(d, 1, 0.3)).sample(rng, 10_000_000)
			a.W = make([]float64, a.Len())
			for i := range a.W {
				a.W[i] = math.Exp(0.5 * rng.NormFloat64())
			}
			normalise(a.W)
			ref := newGaussian(filled(d, 0.1), diagCov(filled(d, 1.1)...)).sample(rng, 50000)
			c0, err := cputime.Process()
			if err != nil {
				b.Skip(err)
			}
			var v float64
			for b.Loop() {
				v = SW2(a, ref, 1)
			}
			c1, err := cputime.Process()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric((c1-c0)/float64(b.N), "cpu-s/op")
			b.ReportMetric(v, "sw2")
		})
	}
}

// BenchmarkSW2Fill is fill alone, the binning of one direction, on 2²²
// draws at d = 4 (the range of the bins as a reference's would be), per
// atom in wall and CPU time: a quicker measure than BenchmarkSW2Binned
// of the loops that dominate it. The cases: one weighted side; an SNIS
// point and its proposals unweighted (the same atoms) binned into a
// table each, as before binPair; and the same two through one table.
func BenchmarkSW2Fill(b *testing.B) {
	const d, n = 4, 1 << 22
	rng := rand.New(rand.NewPCG(3, 17))
	a := newGaussian(zeros(d), equicorr(d, 1, 0.3)).sample(rng, n)
	w := &Draws{D: d, Z: a.Z, W: make([]float64, n)}
	for i := range w.W {
		w.W[i] = math.Exp(0.5 * rng.NormFloat64())
	}
	weighted, uniform := newBinnedSide(w), newBinnedSide(a)
	cases := []struct {
		name  string
		sides []*binnedSide
	}{
		{"weighted", []*binnedSide{weighted.withBins()}},
		{"pair/table-each", []*binnedSide{uniform.withBins(), weighted.withBins()}},
		{"pair/shared", forWorker([]*binnedSide{uniform, weighted})},
	}
	u := []float64{0.5, -0.5, 0.5, 0.5}
	lo, hi := -4.0, 4.0
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c0, err := cputime.Process()
			if err != nil {
				b.Skip(err)
			}
			for b.Loop() {
				for _, side := range tc.sides {
					clear(side.tab)
					side.out = side.out[:0]
				}
				fill([]*binDir{{sides: tc.sides, u: u, lo: lo, hi: hi, invH: sw2Bins / (hi - lo)}})
			}
			c1, err := cputime.Process()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/atom")
			b.ReportMetric((c1-c0)*1e9/float64(b.N)/n, "cpu-ns/atom")
		})
	}
}
