package posterior

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// snisGaussian draws n proposals from prop and weights them towards target,
// with an arbitrary offset in log p̃ (SNIS must not care about it).
func snisGaussian(rng *rand.Rand, target, prop gaussian, n int) (*Draws, SNISInfo, error) {
	q := prop.sample(rng, n)
	logQ := make([]float64, n)
	logP := make([]float64, n)
	for s := range n {
		logQ[s] = prop.logKernel(q.Row(s), prop.logNormConst())
		logP[s] = target.logKernel(q.Row(s), 1234.5)
	}
	return SNIS(prop.dim(), q.Z, logQ, logP)
}

// TestSNISRecoversGaussian: a Gaussian target with a wider Gaussian
// proposal. The weighted mean and covariance must match the target within
// Monte Carlo error, taking Kish's ESS as the effective sample size (4
// standard errors per entry, the same variance formulas as
// TestM1M2ClosedForm).
func TestSNISRecoversGaussian(t *testing.T) {
	cases := []struct {
		name   string
		target gaussian
		prop   gaussian
	}{
		{"d1", newGaussian([]float64{1}, diagCov(0.5)), newGaussian([]float64{0}, diagCov(1.5))},
		{"d3 correlated", newGaussian([]float64{0.5, -1, 2}, equicorr(3, 1, 0.5)), newGaussian([]float64{0.3, -0.8, 2.2}, diagCov(2, 2, 2))},
		{"d6", newGaussian(filled(6, 0.2), equicorr(6, 0.7, 0.3)), newGaussian(zeros(6), diagCov(filled(6, 1.2)...))},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 21))
			dr, info, err := snisGaussian(rng, c.target, c.prop, 100000)
			if err != nil {
				t.Fatal(err)
			}
			if info.NonFinite != 0 || !(info.ESS > 1000) || !(info.ParetoK < 0.7) {
				t.Fatalf("unexpected diagnostics %+v", info)
			}
			d := c.target.dim()
			mu, cov := dr.Mean(), dr.Cov()
			for p := range d {
				se := math.Sqrt(c.target.cov[p*d+p] / info.ESS)
				if math.Abs(mu[p]-c.target.mu[p]) > 4*se {
					t.Errorf("mean[%d] = %.4f, want %.4f ± %.4f", p, mu[p], c.target.mu[p], 4*se)
				}
				for q := range d {
					tc := c.target.cov
					se := math.Sqrt((tc[p*d+p]*tc[q*d+q] + tc[p*d+q]*tc[p*d+q]) / info.ESS)
					if math.Abs(cov[p*d+q]-tc[p*d+q]) > 4*se {
						t.Errorf("cov[%d,%d] = %.4f, want %.4f ± %.4f", p, q, cov[p*d+q], tc[p*d+q], 4*se)
					}
				}
			}
			var sum float64
			for _, w := range dr.W {
				sum += w
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("weights sum to %v", sum)
			}
		})
	}
}

func TestSNISExactProposal(t *testing.T) {
	// q = p up to a constant: every weight is 1/S, ESS = S, entropy ratio
	// 1, max weight 1/S.
	rng := rand.New(rand.NewPCG(1, 22))
	g := newGaussian([]float64{0, 1}, equicorr(2, 1, 0.2))
	_, info, err := snisGaussian(rng, g, g, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(info.ESS-1000) > 1e-8 || math.Abs(info.EntropyRatio-1) > 1e-12 || math.Abs(info.MaxWeight-1e-3) > 1e-15 {
		t.Errorf("diagnostics %+v, want ESS 1000, entropy ratio 1, max weight 0.001", info)
	}
}

// TestSNISNonFinite: a proposal producing NaN or infinite densities (or NaN
// draws) gives those draws weight zero and counts them; the metrics on the
// result stay finite. All-dead input is an error.
func TestSNISNonFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	rng := rand.New(rand.NewPCG(2, 23))
	g := newGaussian(zeros(2), diagCov(1, 1))
	n := 400
	q := g.sample(rng, n)
	logQ := make([]float64, n)
	logP := make([]float64, n)
	for s := range n {
		logQ[s] = g.logKernel(q.Row(s), 0)
		logP[s] = g.logKernel(q.Row(s), 0) + 0.1*q.Row(s)[0]
	}
	bad := map[int]string{}
	set := func(s int, why string, f func()) { f(); bad[s] = why }
	set(3, "NaN log q", func() { logQ[3] = nan })
	set(10, "+Inf log q", func() { logQ[10] = inf })
	set(11, "-Inf log q", func() { logQ[11] = -inf })
	set(20, "NaN log p", func() { logP[20] = nan })
	set(21, "-Inf log p", func() { logP[21] = -inf })
	set(30, "NaN draw", func() { q.Row(30)[1] = nan })
	set(31, "overflowing ratio", func() { logP[31] = 1e308; logQ[31] = -1e308 })

	dr, info, err := SNIS(2, q.Z, logQ, logP)
	if err != nil {
		t.Fatal(err)
	}
	if info.NonFinite != len(bad) {
		t.Errorf("NonFinite = %d, want %d", info.NonFinite, len(bad))
	}
	for s, why := range bad {
		if dr.W[s] != 0 {
			t.Errorf("%s: weight %v, want 0", why, dr.W[s])
		}
	}
	ref := g.sample(rng, 500)
	tgt := kernelTarget{g, 0}
	vals := map[string]float64{
		"M1": M1(dr, ref), "M2": M2(dr, ref), "SW2": SW2(dr, ref, 1), "energy gap": EnergyGap(tgt, dr, ref),
		"pareto k": info.ParetoK, "ess": info.ESS, "max weight": info.MaxWeight, "entropy ratio": info.EntropyRatio,
	}
	for name, v := range vals {
		if !finite(v) {
			t.Errorf("%s = %v, want finite", name, v)
		}
	}
	var csv strings.Builder
	if err := WriteCSV(&csv, dr); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCSV(strings.NewReader(csv.String()))
	if err != nil {
		t.Fatalf("reading back SNIS draws with a dead NaN row: %v", err)
	}
	if back.Len() != n-1 {
		t.Errorf("read back %d rows, want %d (the NaN draw dropped)", back.Len(), n-1)
	}
	if m1 := M1(back, dr); m1 > 1e-12 {
		t.Errorf("round trip moved the mean by %g", m1)
	}

	for s := range n {
		logQ[s] = nan
	}
	if _, _, err := SNIS(2, q.Z, logQ, logP); err == nil || !strings.Contains(err.Error(), "all 400 importance weights are zero") {
		t.Errorf("all-NaN proposal: err = %v, want an all-zero-weights error", err)
	}
}

func TestSNISBadInput(t *testing.T) {
	for _, c := range []struct {
		name          string
		d             int
		z, logQ, logP []float64
	}{
		{"d zero", 0, nil, []float64{0}, []float64{0}},
		{"no draws", 1, nil, nil, nil},
		{"short logP", 1, []float64{1, 2}, []float64{0, 0}, []float64{0}},
		{"short z", 2, []float64{1, 2}, []float64{0, 0}, []float64{0, 0}},
	} {
		if _, _, err := SNIS(c.d, c.z, c.logQ, c.logP); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestWeightDiagnostics(t *testing.T) {
	cases := []struct {
		name            string
		w               []float64
		maxW, ent, kish float64
	}{
		{"uniform", []float64{0.25, 0.25, 0.25, 0.25}, 0.25, 1, 4},
		{"degenerate", []float64{0, 1, 0, 0}, 1, 0, 1},
		{"two of four", []float64{0.5, 0, 0.5, 0}, 0.5, 0.5, 2},
		{"single", []float64{1}, 1, 1, 1},
	}
	for _, c := range cases {
		if got := MaxWeight(c.w); got != c.maxW {
			t.Errorf("%s: MaxWeight = %v, want %v", c.name, got, c.maxW)
		}
		if got := EntropyRatio(c.w); math.Abs(got-c.ent) > 1e-15 {
			t.Errorf("%s: EntropyRatio = %v, want %v", c.name, got, c.ent)
		}
		if got := KishESS(c.w); math.Abs(got-c.kish) > 1e-12 {
			t.Errorf("%s: KishESS = %v, want %v", c.name, got, c.kish)
		}
	}
}

func TestResample(t *testing.T) {
	d := &Draws{D: 1, Z: []float64{0, 1, 2, math.NaN()}, W: []float64{0.2, 0, 0.8, 0}}
	r := d.Resample(rand.New(rand.NewPCG(1, 1)), 100000)
	if r.Weighted() || r.Len() != 100000 {
		t.Fatalf("resample: weighted=%v len=%d", r.Weighted(), r.Len())
	}
	count := map[float64]int{}
	for _, v := range r.Z {
		count[v]++
	}
	if count[1] != 0 || len(count) != 2 {
		t.Errorf("resampled zero-weight rows: %v", count)
	}
	// Binomial(1e5, 0.2): sd ≈ 126.
	if c := count[0]; math.Abs(float64(c)-20000) > 600 {
		t.Errorf("atom 0 drawn %d times, want ≈ 20000", c)
	}
}

// normalizeLogWeights is the one log-weight normalisation SNIS and the
// draws reader share.
func TestNormalizeLogWeights(t *testing.T) {
	inf := math.Inf(-1)
	tests := []struct {
		name string
		logW []float64
		want []float64
		ok   bool
	}{
		{"all -Inf", []float64{inf, inf}, nil, false},
		{"one finite", []float64{inf, -3, inf}, []float64{0, 1, 0}, true},
		{"ratio 1:3", []float64{math.Log(1), math.Log(3)}, []float64{0.25, 0.75}, true},
		// Shifted by the largest: exp(-800) alone underflows to 0.
		{"far below zero", []float64{-800, -800 + math.Log(3)}, []float64{0.25, 0.75}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, ok := normalizeLogWeights(tt.logW)
			if ok != tt.ok || len(w) != len(tt.want) {
				t.Fatalf("got %v, %v; want %v, %v", w, ok, tt.want, tt.ok)
			}
			for i := range w {
				if math.Abs(w[i]-tt.want[i]) > 1e-12 { // -800 + log 3 rounds at 1e-13
					t.Errorf("w[%d] = %v, want %v", i, w[i], tt.want[i])
				}
			}
		})
	}
}
