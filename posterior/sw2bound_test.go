package posterior

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSW2LowerBound: the moment bound never exceeds the SW2 that SW2
// computes, on the sorted path and on the binned one (a set of ≥ 2¹⁸
// draws against a smaller reference), weighted or not, and it is not
// vacuous: where the sets' moments differ it holds most of SW2.
func TestSW2LowerBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 39))
	ref := newGaussian(filled(3, 0.2), equicorr(3, 1, 0.4)).sample(rng, 50000)
	heavy := func(n int) *Draws { // non-Gaussian: Student-t(3) coordinates
		d := newGaussian(zeros(3), diagCov(1, 1, 1)).sample(rng, n)
		for i := range d.Z {
			var c float64
			for range 3 {
				v := rng.NormFloat64()
				c += v * v
			}
			d.Z[i] /= math.Sqrt(c / 3)
		}
		return d
	}
	tests := []struct {
		name     string
		a        *Draws
		weighted bool
		minFrac  float64 // bound/SW2 at least this
	}{
		{"same law, sorted", newGaussian(filled(3, 0.2), equicorr(3, 1, 0.4)).sample(rng, 4000), false, 0},
		{"shifted, sorted", newGaussian(filled(3, 1), equicorr(3, 1, 0.4)).sample(rng, 4000), false, 0.9},
		{"wider, weighted", newGaussian(zeros(3), diagCov(2, 2, 2)).sample(rng, 4000), true, 0.5},
		{"heavy tails, sorted", heavy(4000), false, 0},
		{"same law, binned", newGaussian(filled(3, 0.2), equicorr(3, 1, 0.4)).sample(rng, 1<<18+5), false, 0},
		{"narrower, binned", newGaussian(filled(3, 0.2), equicorr(3, 0.8, 0.4)).sample(rng, 1<<18+5), false, 0.9},
		{"shifted, binned, weighted", newGaussian(filled(3, 0.25), equicorr(3, 1, 0.4)).sample(rng, 1<<18+5), true, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.weighted {
				tc.a.W = make([]float64, tc.a.Len())
				for i := range tc.a.W {
					tc.a.W[i] = rng.ExpFloat64()
				}
				tc.a.W[3] = 0 // a dead draw: no mass, not in the moments
				tc.a.Z[3*3] = math.NaN()
			}
			mean, cov, ok := populationMoments(tc.a)
			if !ok {
				t.Fatal("no moments")
			}
			for _, seed := range []uint64{1, 2} {
				sw2 := SW2(tc.a, ref, seed)
				lb := SW2LowerBound(mean, cov, ref, seed)
				if !(lb <= sw2) || lb < tc.minFrac*sw2 {
					t.Errorf("seed %d: bound %.6g, SW2 %.6g (want bound ≤ SW2 and ≥ %.2g of it)", seed, lb, sw2, tc.minFrac)
				}
				t.Logf("seed %d: bound %.6g, SW2 %.6g (%.2f)", seed, lb, sw2, lb/sw2)
			}
		})
	}
	if v := SW2LowerBound([]float64{0, 0}, make([]float64, 4), ref, 1); !math.IsNaN(v) {
		t.Errorf("dimension mismatch: %v, want NaN", v)
	}
}

// TestDrawMoments: DrawMoments gives the mean and n-divisor covariance of
// exactly the draws DrawsOfContext takes from the same stream, to
// rounding, without holding them.
func TestDrawMoments(t *testing.T) {
	g := &Gaussian{Mean: []float64{1, -2, 3}, L: []float64{2, 0, 0, 0.5, 1, 0, -0.3, 0.2, 0.7}}
	for _, n := range []int{1, 7, momentChunk, 3*momentChunk + 11} {
		mean, cov, err := DrawMoments(context.Background(), g, rand.New(rand.NewPCG(4, 4)), n)
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := DrawsOfContext(context.Background(), g, rand.New(rand.NewPCG(4, 4)), n)
		if err != nil {
			t.Fatal(err)
		}
		wm, wc, _ := populationMoments(d)
		for i := range mean {
			if math.Abs(mean[i]-wm[i]) > 1e-13*(1+math.Abs(wm[i])) {
				t.Errorf("n %d: mean[%d] %.17g, two-pass %.17g", n, i, mean[i], wm[i])
			}
		}
		for i := range cov {
			if math.Abs(cov[i]-wc[i]) > 1e-13*(1+math.Abs(wc[i])) {
				t.Errorf("n %d: cov[%d] %.17g, two-pass %.17g", n, i, cov[i], wc[i])
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := DrawMoments(ctx, g, rand.New(rand.NewPCG(4, 4)), 10); err == nil {
		t.Error("a cancelled context gave no error")
	}
}

// TestPushMoments: the moments of a Gaussian's draws pushed forward from
// the stream's standard normals equal those of the draws themselves, to
// rounding, for a covariance factor and a precision factor.
func TestPushMoments(t *testing.T) {
	prec, err := NewGaussianPrecision([]float64{0.5, 30, -2}, []float64{4, 1, 0.5, 1, 3, -0.2, 0.5, -0.2, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Gaussian{
		{Mean: []float64{1, -2, 3}, L: []float64{2, 0, 0, 0.5, 1, 0, -0.3, 0.2, 0.7}},
		prec,
	} {
		const n = 20000
		sm, sc, err := StandardMoments(context.Background(), rand.New(rand.NewPCG(6, 6)), 3, n)
		if err != nil {
			t.Fatal(err)
		}
		mean, cov := g.PushMoments(sm, sc)
		wm, wc, err := DrawMoments(context.Background(), g, rand.New(rand.NewPCG(6, 6)), n)
		if err != nil {
			t.Fatal(err)
		}
		for i := range mean {
			if math.Abs(mean[i]-wm[i]) > 1e-12*(1+math.Abs(wm[i])) {
				t.Errorf("precision factor %v: mean[%d] %.17g, of the draws %.17g", g.PrecisionFactor, i, mean[i], wm[i])
			}
		}
		for i := range cov {
			if math.Abs(cov[i]-wc[i]) > 1e-12*(1+math.Abs(wc[i])) {
				t.Errorf("precision factor %v: cov[%d] %.17g, of the draws %.17g", g.PrecisionFactor, i, cov[i], wc[i])
			}
		}
	}
}
