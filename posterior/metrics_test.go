package posterior

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

type momentCase struct {
	name   string
	a, b   gaussian
	nA, nB int
}

func momentCases() []momentCase {
	return []momentCase{
		{"d1 shift and scale", newGaussian([]float64{0}, diagCov(1)), newGaussian([]float64{0.5}, diagCov(2)), 20000, 20000},
		{"d3 diagonal", newGaussian([]float64{1, -1, 0}, diagCov(0.5, 1, 2)), newGaussian([]float64{1.2, -1, 0.3}, diagCov(0.7, 1, 1.5)), 20000, 15000},
		{"d4 correlated vs independent", newGaussian(zeros(4), equicorr(4, 1, 0.6)), newGaussian(zeros(4), equicorr(4, 1, 0)), 20000, 20000},
		{"d8 same distribution", newGaussian(filled(8, 0.3), equicorr(8, 1.3, 0.2)), newGaussian(filled(8, 0.3), equicorr(8, 1.3, 0.2)), 10000, 30000},
	}
}

// TestM1M2ClosedForm checks M1 and M2 of large Gaussian samples against
// ‖μ_a − μ_b‖ and ‖Σ_a − Σ_b‖_F. By the triangle inequality the error is at
// most the norm of the estimation error, whose mean square is tr(Σ)/n for
// the mean and Σ_ij (Σ_ii Σ_jj + Σ_ij²)/(n−1) for the covariance; the
// tolerance is 4 of those root-mean-squares.
func TestM1M2ClosedForm(t *testing.T) {
	for i, c := range momentCases() {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 11))
			a, b := c.a.sample(rng, c.nA), c.b.sample(rng, c.nB)
			d := c.a.dim()
			var m1, m2, mse1, mse2 float64
			for p := range d {
				dm := c.a.mu[p] - c.b.mu[p]
				m1 += dm * dm
				mse1 += c.a.cov[p*d+p]/float64(c.nA) + c.b.cov[p*d+p]/float64(c.nB)
				for q := range d {
					dc := c.a.cov[p*d+q] - c.b.cov[p*d+q]
					m2 += dc * dc
					for _, g := range []struct {
						s gaussian
						n int
					}{{c.a, c.nA}, {c.b, c.nB}} {
						cv := g.s.cov
						mse2 += (cv[p*d+p]*cv[q*d+q] + cv[p*d+q]*cv[p*d+q]) / float64(g.n-1)
					}
				}
			}
			m1, m2 = math.Sqrt(m1), math.Sqrt(m2)
			if got, tol := M1(a, b), 4*math.Sqrt(mse1); math.Abs(got-m1) > tol {
				t.Errorf("M1 = %.4f, want %.4f ± %.4f", got, m1, tol)
			}
			if got, tol := M2(a, b), 4*math.Sqrt(mse2); math.Abs(got-m2) > tol {
				t.Errorf("M2 = %.4f, want %.4f ± %.4f", got, m2, tol)
			}
			if M1(a, a) != 0 || M2(a, a) != 0 {
				t.Errorf("M1/M2 of a set with itself = %g, %g, want 0", M1(a, a), M2(a, a))
			}
		})
	}
}

func TestWeightedMomentsExact(t *testing.T) {
	// Two atoms at 0 and 1 (d=1) with weights ¼, ¾, plus a dead NaN row:
	// mean ¾, variance ¼·(¾)² + ¾·(¼)² = 3/16 (no Bessel correction).
	d := &Draws{D: 1, Z: []float64{0, 1, math.NaN()}, W: []float64{0.25, 0.75, 0}}
	if m := d.Mean()[0]; math.Abs(m-0.75) > 1e-15 {
		t.Errorf("weighted mean = %v, want 0.75", m)
	}
	if v := d.Cov()[0]; math.Abs(v-3.0/16) > 1e-15 {
		t.Errorf("weighted variance = %v, want 3/16", v)
	}
	u := &Draws{D: 2, Z: []float64{0, 0, 1, 2, 2, 4}}
	// Unweighted: n−1 divisor. x = (0,1,2): var 1; y = 2x: var 4, cov 2.
	if c := u.Cov(); !slices.Equal(c, []float64{1, 2, 2, 4}) {
		t.Errorf("unweighted cov = %v, want [1 2 2 4]", c)
	}
}

// sw2Truth is the sliced W2 between two Gaussians over given directions:
// on direction θ the projections are N(θᵀμ, θᵀΣθ), whose squared W2 is
// (θᵀΔμ)² + (s_a − s_b)².
func sw2Truth(a, b gaussian, dirs []float64) float64 {
	d := a.dim()
	r := len(dirs) / d
	var sum float64
	for k := range r {
		u := dirs[k*d : (k+1)*d]
		dm := dot(a.mu, u) - dot(b.mu, u)
		sa, sb := math.Sqrt(quad(a.cov, u)), math.Sqrt(quad(b.cov, u))
		sum += dm*dm + (sa-sb)*(sa-sb)
	}
	return math.Sqrt(sum / float64(r))
}

func quad(c, u []float64) float64 {
	d := len(u)
	var s float64
	for i := range d {
		for j := range d {
			s += u[i] * c[i*d+j] * u[j]
		}
	}
	return s
}

// TestSW2AnalyticGaussian compares SW2 of two Gaussian samples with the
// analytic sliced W2 over the same 128 directions. Sampling noise in a 1-D
// empirical W2 between samples of size n is of order σ/√n (quantile
// fluctuations), so the tolerance is 3·σ_max·√(1/n_a + 1/n_b).
func TestSW2AnalyticGaussian(t *testing.T) {
	for i, c := range momentCases() {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 12))
			a, b := c.a.sample(rng, c.nA), c.b.sample(rng, c.nB)
			seed := uint64(100 + i)
			want := sw2Truth(c.a, c.b, sw2Directions(seed, DefaultDirections, c.a.dim()))
			var smax float64
			for _, cov := range [][]float64{c.a.cov, c.b.cov} {
				for p := range c.a.dim() {
					smax = math.Max(smax, math.Sqrt(cov[p*c.a.dim()+p]))
				}
			}
			tol := 3 * smax * math.Sqrt(1/float64(c.nA)+1/float64(c.nB))
			got := SW2(a, b, seed)
			t.Logf("SW2 = %.4f, analytic %.4f, tolerance %.4f", got, want, tol)
			if math.Abs(got-want) > tol {
				t.Errorf("SW2 = %.4f, analytic %.4f ± %.4f", got, want, tol)
			}
			if again := SW2(a, b, seed); again != got {
				t.Errorf("SW2 not reproducible: %v then %v", got, again)
			}
		})
	}
}

// TestSW2EqualSizesIsPaperFormula checks that for unweighted sets of equal
// size the quantile-function integral is the paper's mean of squared
// differences of sorted projections.
func TestSW2EqualSizesIsPaperFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	a := newGaussian(zeros(5), equicorr(5, 1, 0.3)).sample(rng, 999)
	b := newGaussian(filled(5, 0.2), diagCov(1, 2, 0.5, 1, 1)).sample(rng, 999)
	const seed = 7
	dirs := sw2Directions(seed, DefaultDirections, 5)
	var sum float64
	pa, pb := make([]float64, 999), make([]float64, 999)
	for k := range DefaultDirections {
		u := dirs[k*5 : (k+1)*5]
		for s := range 999 {
			pa[s], pb[s] = dot(a.Row(s), u), dot(b.Row(s), u)
		}
		slices.Sort(pa)
		slices.Sort(pb)
		for s := range 999 {
			sum += (pa[s] - pb[s]) * (pa[s] - pb[s]) / 999
		}
	}
	want := math.Sqrt(sum / DefaultDirections)
	if got := SW2(a, b, seed); math.Abs(got-want) > 1e-12*want {
		t.Errorf("SW2 = %.16g, paper formula %.16g", got, want)
	}
}

// TestSW2WeightedEqualsDuplicated: draws with integer weights k_s describe
// the same empirical distribution as the draws repeated k_s times, so the
// exact weighted SW2 must equal the unweighted SW2 of the duplicates.
func TestSW2WeightedEqualsDuplicated(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	dup := func(d *Draws, k []int) (*Draws, *Draws) {
		w := &Draws{D: d.D, Z: d.Z, W: make([]float64, d.Len())}
		u := &Draws{D: d.D}
		total := 0
		for _, ki := range k {
			total += ki
		}
		for s, ki := range k {
			w.W[s] = float64(ki) / float64(total)
			for range ki {
				u.Z = append(u.Z, d.Row(s)...)
			}
		}
		return w, u
	}
	ints := func(n, hi int) []int {
		k := make([]int, n)
		for i := range k {
			k[i] = 1 + rng.IntN(hi)
		}
		return k
	}
	cases := []struct {
		name   string
		d      int
		na, nb int
		bW     bool // also weight the second set
	}{
		{"d1 weighted vs unweighted", 1, 200, 351, false},
		{"d3 weighted vs unweighted", 3, 300, 257, false},
		{"d6 both weighted", 6, 150, 410, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newGaussian(zeros(c.d), equicorr(c.d, 1, 0.4)).sample(rng, c.na)
			b := newGaussian(filled(c.d, 0.5), equicorr(c.d, 1.5, 0)).sample(rng, c.nb)
			aw, au := dup(a, ints(c.na, 4))
			bw, bu := b, b
			if c.bW {
				bw, bu = dup(b, ints(c.nb, 3))
			}
			got, want := SW2(aw, bw, 9), SW2(au, bu, 9)
			t.Logf("weighted %.16g, duplicated %.16g", got, want)
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("weighted SW2 %.16g, duplicated %.16g (diff %.3g)", got, want, got-want)
			}
		})
	}
}

func TestSW2Exact1D(t *testing.T) {
	// Atoms {0, 1} with weights ½,½ versus ¼,¾: the quantile functions
	// differ by 1 on (¼, ½], so W2² = ¼ on either direction ±1.
	a := &Draws{D: 1, Z: []float64{1, 0}, W: []float64{0.5, 0.5}}
	b := &Draws{D: 1, Z: []float64{0, 1, math.NaN()}, W: []float64{0.25, 0.75, 0}}
	if got := SW2(a, b, 1); math.Abs(got-0.5) > 1e-15 {
		t.Errorf("SW2 = %v, want 0.5", got)
	}
	// Unequal counts: a set and the same set twice over are the same
	// distribution.
	rng := rand.New(rand.NewPCG(8, 8))
	x := newGaussian(zeros(3), diagCov(1, 2, 3)).sample(rng, 101)
	xx := &Draws{D: 3, Z: append(slices.Clone(x.Z), x.Z...)}
	if got := SW2(x, xx, 2); got > 1e-15 {
		t.Errorf("SW2(x, x twice) = %g, want 0", got)
	}
}

func TestSW2Incomparable(t *testing.T) {
	a := &Draws{D: 2, Z: []float64{0, 1}}
	b := &Draws{D: 3, Z: []float64{0, 1, 2}}
	empty := &Draws{D: 2}
	for name, v := range map[string]float64{
		"SW2 dims": SW2(a, b, 0), "M1 dims": M1(a, b), "M2 dims": M2(a, b),
		"SW2 empty": SW2(a, empty, 0), "M1 nil": M1(a, nil),
	} {
		if !math.IsNaN(v) {
			t.Errorf("%s = %v, want NaN", name, v)
		}
	}
}

// TestSW2ResampleOption: the authors' resampling estimator agrees with the
// exact weighted one up to resampling noise.
func TestSW2ResampleOption(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	g := newGaussian(zeros(2), diagCov(1, 1))
	a := g.sample(rng, 20000)
	a.W = make([]float64, a.Len())
	for s := range a.W {
		a.W[s] = rng.Float64()
	}
	normalise(a.W)
	b := newGaussian([]float64{1, 0}, diagCov(1, 1)).sample(rng, 20000)
	exact := SW2(a, b, 4)
	res := SW2With(a, b, SW2Options{Seed: 4, Resample: 20000})
	// Truth ≈ SW2 of a unit shift in d=2: √(E[θ₁²]) = √½.
	if math.Abs(exact-math.Sqrt(0.5)) > 0.05 || math.Abs(res-exact) > 0.05 {
		t.Errorf("exact %.4f, resampled %.4f, truth ≈ %.4f", exact, res, math.Sqrt(0.5))
	}
	if res == exact {
		t.Errorf("resampling had no effect")
	}
}

func normalise(w []float64) {
	var s float64
	for _, v := range w {
		s += v
	}
	for i := range w {
		w[i] /= s
	}
}

type kernelTarget struct {
	g      gaussian
	offset float64
}

func (k kernelTarget) LogDensity(z []float64) float64 { return k.g.logKernel(z, k.offset) }

// TestEnergyGapClosedForm: for the target N(0, I_d) with log p̃ = −½‖z‖² + c
// and q = N(0, s²I), ΔE = d(s² − 1)/2. The tolerance is 5 standard errors,
// from Var_q(½‖z‖²) = d s⁴/2.
func TestEnergyGapClosedForm(t *testing.T) {
	for _, c := range []struct {
		d int
		s float64
	}{{1, 1.5}, {4, 0.8}, {8, 1}} {
		rng := rand.New(rand.NewPCG(uint64(c.d), 13))
		tgt := kernelTarget{newGaussian(zeros(c.d), diagCov(filled(c.d, 1)...)), 42}
		q := newGaussian(zeros(c.d), diagCov(filled(c.d, c.s)...)).sample(rng, 40000)
		ref := tgt.g.sample(rng, 40000)
		want := float64(c.d) * (c.s*c.s - 1) / 2
		se := math.Sqrt(float64(c.d)*math.Pow(c.s, 4)/2/40000 + float64(c.d)/2/40000)
		if got := EnergyGap(tgt, q, ref); math.Abs(got-want) > 5*se {
			t.Errorf("d=%d s=%g: energy gap %.4f, want %.4f ± %.4f", c.d, c.s, got, want, 5*se)
		}
	}
}

func TestEnergyGapSkipsDeadDraws(t *testing.T) {
	tgt := kernelTarget{newGaussian(zeros(1), diagCov(1)), 0}
	q := &Draws{D: 1, Z: []float64{0, 1, math.NaN()}, W: []float64{0.5, 0.5, 0}}
	ref := &Draws{D: 1, Z: []float64{0, 1}}
	if got := EnergyGap(tgt, q, ref); got != 0 {
		t.Errorf("energy gap = %v, want 0", got)
	}
}

// TestSW2RefEqualsSW2: SW2 and SW2Shared against a prepared reference
// give, to the bit, what they give against the bare draws, on the first
// call (projecting) and on later ones (reading back), with several
// goroutines at once.
func TestSW2RefEqualsSW2(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	draws := func(n, dim int, weighted bool, zeros int) *Draws {
		d := &Draws{D: dim, Z: make([]float64, n*dim)}
		for i := range d.Z {
			d.Z[i] = 0.3 + 1.2*rng.NormFloat64()
		}
		if weighted {
			d.W = make([]float64, n)
			for k := range d.W {
				d.W[k] = rng.ExpFloat64()
			}
			for k := 0; k < zeros; k++ {
				d.W[k*7] = 0
				d.Z[k*7*dim] = math.NaN()
			}
		}
		return d
	}
	ref := draws(3000, 3, false, 0)
	big := draws(1<<18+5, 3, true, 0)
	star := &Draws{D: 3, Z: big.Z}
	tests := []struct {
		name string
		as   []*Draws
	}{
		{"unweighted", []*Draws{draws(500, 3, false, 0)}},
		{"weighted with zeros", []*Draws{draws(800, 3, true, 9)}},
		{"larger than the reference", []*Draws{draws(9000, 3, false, 0)}},
		{"binned", []*Draws{big}},
		{"binned star and twin", []*Draws{star, big}},
		{"binned with zeros", []*Draws{draws(1<<18+9, 3, true, 40)}},
		{"other dimension", []*Draws{draws(100, 2, false, 0)}},
		{"mixed", []*Draws{draws(100, 3, false, 0), big}},
	}
	const seed = 77
	want := make([][]float64, len(tests))
	for i, tc := range tests {
		want[i] = SW2Shared(tc.as, ref, seed)
	}
	sr := NewSW2Ref(ref, seed)
	for pass := range 2 {
		var wg sync.WaitGroup
		for i, tc := range tests {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got := sr.Shared(tc.as)
				for j := range got {
					if math.Float64bits(got[j]) != math.Float64bits(want[i][j]) {
						t.Errorf("pass %d, %s, set %d: %v, want %v", pass, tc.name, j, got[j], want[i][j])
					}
				}
				if len(tc.as) == 1 {
					if got := sr.SW2(tc.as[0]); math.Float64bits(got) != math.Float64bits(want[i][0]) {
						t.Errorf("pass %d, %s: SW2 %v, want %v", pass, tc.name, got, want[i][0])
					}
				}
			}()
		}
		wg.Wait()
	}
}
