package posterior

import (
	"cmp"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// plainW2sq is the 1-D W2² between the projections of a and b on u,
// computed the plain way: sort each set's (value, weight) pairs, then
// integrate the squared difference of the quantile functions over the
// merged breakpoints of their cumulative weights.
func plainW2sq(a, b *Draws, u []float64) float64 {
	type pt struct{ x, w float64 }
	proj := func(d *Draws) []pt {
		var out []pt
		var total float64
		for s := range d.Len() {
			w := 1.0
			if d.W != nil {
				w = d.W[s]
			}
			if w > 0 {
				var x float64
				for i, v := range d.Row(s) {
					x += v * u[i]
				}
				out = append(out, pt{x, w})
				total += w
			}
		}
		slices.SortStableFunc(out, func(p, q pt) int { return cmp.Compare(p.x, q.x) })
		for i := range out {
			out[i].w /= total
		}
		return out
	}
	pa, pb := proj(a), proj(b)
	var sum, t, ca, cb float64
	i, j := 0, 0
	ca, cb = pa[0].w, pb[0].w
	for {
		end := math.Min(ca, cb)
		if i == len(pa)-1 && j == len(pb)-1 {
			end = 1
		}
		if end > t {
			d := pa[i].x - pb[j].x
			sum += (end - t) * d * d
			t = end
		}
		if i == len(pa)-1 && j == len(pb)-1 {
			return sum
		}
		if (ca <= cb && i < len(pa)-1) || j == len(pb)-1 {
			i++
			ca += pa[i].w
		} else {
			j++
			cb += pb[j].w
		}
	}
}

// TestSW2BinnedWithinTolerance: on sets large enough to be binned (2¹⁸
// and more draws against 5·10⁴), every direction's W2² is within
// sw2RelTol of the plain computation; cases cover unweighted and
// weighted large sets, a close and a distant pair, heavy weights, and a
// large set with a fifth of its draws outside the reference's range (the
// exact fallback).
func TestSW2BinnedWithinTolerance(t *testing.T) {
	const n, m, dirs = 1 << 18, 50000, 6
	cases := []struct {
		name     string
		shift    float64
		scale    float64
		weighted bool
		binned   bool // whether the bound allows binning every direction
	}{
		{"same distribution", 0, 1, false, true},
		{"shifted", 0.3, 1, false, true},
		{"weighted close", 0.05, 1.2, true, true},
		{"much wider (fallback)", 0, 3, false, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 99))
			a := newGaussian(filled(4, c.shift), diagCov(filled(4, c.scale)...)).sample(rng, n)
			if c.weighted {
				a.W = make([]float64, n)
				for s := range a.W {
					a.W[s] = math.Exp(2 * rng.NormFloat64())
				}
				a.W[7] = 0 // a dead draw
				a.Z[7*4] = math.NaN()
				normalise(a.W)
			}
			b := newGaussian(zeros(4), equicorr(4, 1, 0.2)).sample(rng, m)
			got := SW2PerDirection(a, b, SW2Options{Directions: dirs, Seed: 5})
			// The same on one core: each direction is one worker's.
			prev := runtime.GOMAXPROCS(1)
			one := SW2PerDirection(a, b, SW2Options{Directions: dirs, Seed: 5})
			runtime.GOMAXPROCS(prev)
			if !slices.Equal(got, one) {
				t.Errorf("W2² per direction differs between %d cores and one", prev)
			}
			u := sw2Directions(5, dirs, 4)
			bs, ps := newBinnedSide(a).withBins(), newProjector(b)
			worst := 0.0
			defer func() { t.Logf("largest relative error of W2² %.2g", worst) }()
			for k := range dirs {
				ps.project(u[k*4 : (k+1)*4])
				w2, ok := make([]float64, 1), make([]bool, 1)
				if w2sq([]*binnedSide{bs}, u[k*4:(k+1)*4], ps, w2, ok); ok[0] != c.binned {
					t.Errorf("direction %d: binned %v, want %v", k, ok[0], c.binned)
				}
				want := plainW2sq(a, b, u[k*4:(k+1)*4])
				worst = math.Max(worst, math.Abs(got[k]-want)/want)
				if math.Abs(got[k]-want) > sw2RelTol*want+1e-13 {
					t.Errorf("direction %d: W2² %.12g, plain %.12g (relative error %.2g, allowed %g)", k, got[k], want, math.Abs(got[k]-want)/want, sw2RelTol)
				}
			}
		})
	}
}

// TestSW2SharedEqualsSeparate: SW2PerDirectionShared gives each set the
// values SW2PerDirection gives it alone, to the bit: when it shares the
// projections (unweighted and positively weighted copies of one Z), when
// a zero weight or a small set makes it score them apart, and for sets
// that are not the same draws.
func TestSW2SharedEqualsSeparate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	n := sw2BinMin
	a := newGaussian(zeros(3), equicorr(3, 1, 0.3)).sample(rng, n)
	b := newGaussian(filled(3, 0.05), diagCov(filled(3, 1.2)...)).sample(rng, 5000)
	weighted := func(zeroAt int) *Draws {
		w := &Draws{D: a.D, Z: a.Z, W: make([]float64, n)}
		for i := range w.W {
			w.W[i] = math.Exp(0.3 * rng.NormFloat64())
		}
		if zeroAt >= 0 {
			w.W[zeroAt] = 0
		}
		return w
	}
	other := newGaussian(zeros(3), equicorr(3, 1, 0.3)).sample(rng, n)
	small := &Draws{D: a.D, Z: a.Z[:3*1000]}
	tests := []struct {
		name string
		as   []*Draws
	}{
		{"unweighted and weighted copies", []*Draws{a, weighted(-1)}},
		{"one set", []*Draws{weighted(-1)}},
		{"a zero weight", []*Draws{a, weighted(17)}},
		{"other draws", []*Draws{a, other}},
		{"a small set", []*Draws{small, a}},
	}
	o := SW2Options{Directions: 12, Seed: 9}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SW2PerDirectionShared(tc.as, b, o)
			for i, s := range tc.as {
				if want := SW2PerDirection(s, b, o); !slices.Equal(got[i], want) {
					t.Errorf("set %d: %v shared, %v alone", i, got[i], want)
				}
			}
		})
	}
}
