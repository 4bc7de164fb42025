package calibration

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestBinomialCDF compares the log-space binomial CDF with gonum's.
func TestBinomialCDF(t *testing.T) {
	for _, tc := range []struct {
		n int
		p float64
	}{{1, 0.5}, {10, 0.1}, {200, 0.37}, {1000, 0.98}} {
		cdf := binomialCDF(tc.n, tc.p)
		ref := distuv.Binomial{N: float64(tc.n), P: tc.p}
		for c := 0; c <= tc.n; c += max(1, tc.n/20) {
			if got, want := cdf[c], ref.CDF(float64(c)); math.Abs(got-want) > 1e-9 {
				t.Errorf("n=%d p=%v c=%d: %v, gonum %v", tc.n, tc.p, c, got, want)
			}
		}
	}
}

// TestBandCoverage: fresh uniform samples (a seed the band never saw)
// leave the simultaneous band at its nominal rate, within 3 Monte Carlo
// standard errors.
func TestBandCoverage(t *testing.T) {
	for _, tc := range []struct {
		n, k  int
		level float64
	}{{100, 50, 0.95}, {200, 50, 0.95}, {50, 50, 0.99}} {
		b, err := NewBand(tc.n, tc.k, tc.level)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(99, uint64(tc.n)))
		const sets = 2000
		out := 0
		u := make([]float64, tc.n)
		for range sets {
			for i := range u {
				u[i] = rng.Float64()
			}
			if ok, _ := b.Inside(u); !ok {
				out++
			}
		}
		rate, want := float64(out)/sets, 1-tc.level
		se := math.Sqrt(want * (1 - want) / sets)
		if math.Abs(rate-want) > 3*se {
			t.Errorf("n=%d k=%d level=%v: rejection rate %.4f, want %.4f ± %.4f", tc.n, tc.k, tc.level, rate, want, 3*se)
		}
	}
}

// TestPriorVariance checks the closed forms against the variance of
// 200,000 prior draws.
func TestPriorVariance(t *testing.T) {
	fr, err := factor.NewFullRankGaussian([]float64{0, 1}, []float64{2, 0.6, 0.6, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []factor.Prior{
		&factor.DiagGaussian{Loc: []float64{0, 1}, Scale: []float64{0.5, 2}},
		&factor.DiagLaplace{Loc: []float64{0, 1}, Scale: []float64{0.5, 2}},
		&factor.DiagStudentT{Loc: []float64{0, 1}, Scale: []float64{0.5, 2}, DF: 7},
		fr,
	} {
		want, err := PriorVariance(p)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		const n = 200000
		var s, ss [2]float64
		z := make([]float64, 2)
		for range n {
			p.Rand(rng, z)
			for j := range 2 {
				s[j] += z[j]
				ss[j] += z[j] * z[j]
			}
		}
		for j := range 2 {
			v := ss[j]/n - (s[j]/n)*(s[j]/n)
			if math.Abs(v-want[j]) > 0.03*want[j] {
				t.Errorf("%s coordinate %d: closed form %v, Monte Carlo %v", p.Family(), j, want[j], v)
			}
		}
	}
}

// sbcSeed runs SBC over simulated conjugate tasks with draws from the
// exact posterior whose covariance is multiplied by covScale.
func sbcSeed(t *testing.T, prior string, tasks int, covScale float64, seed uint64) *Summary {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 18))
	const d, l = 3, 99
	v := []float64{0.48, -0.6, 0.64}
	var ranks []*TaskRanks
	for range tasks {
		task, err := factor.Simulate(rng, factor.SimOptions{D: d, N: 6, Prior: prior,
			Likelihoods: []string{factor.LinGaussianFamily}, Design: factor.DesignIID})
		if err != nil {
			t.Fatal(err)
		}
		mean, cov, err := factor.ExactPosterior(task)
		if err != nil {
			t.Fatal(err)
		}
		for i := range cov {
			cov[i] *= covScale
		}
		z, err := factor.GaussianDraws(rng, mean, cov, l)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Rank(task, &posterior.Draws{D: d, Z: z}, l, v, rng)
		if err != nil {
			t.Fatal(err)
		}
		ranks = append(ranks, r)
	}
	s, err := Summarize(ranks)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSBCVerdicts: exact posterior draws pass; the same posterior with
// its covariance halved (overconfident) fails, under-covers and inflates
// the z-scores. A calibrated method passes each group with probability
// ≥ 95%, so over 20 seeded replications of 200 tasks exact draws may fail
// a group at most 3 times (P(≥ 4 of 20) = 1.6% at the nominal rate; over
// 600 replications the measured rates were 5.3%, 4.0% and 5.2%), while the
// overconfident posterior must fail every time.
func TestSBCVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		prior     string
		scale     float64
		maxFails  int
		zsd       [2]float64
		cover90   [2]float64
		ldCover90 [2]float64
	}{
		{"exact diag", factor.DiagGaussianFamily, 1, 3, [2]float64{0.88, 1.14}, [2]float64{0.86, 0.94}, [2]float64{0.815, 0.985}},
		{"exact fullrank", factor.FullRankGaussianFamily, 1, 3, [2]float64{0.88, 1.14}, [2]float64{0.86, 0.94}, [2]float64{0.815, 0.985}},
		{"overconfident", factor.DiagGaussianFamily, 0.5, 0, [2]float64{1.3, 1.6}, [2]float64{0.7, 0.8}, [2]float64{0.5, 0.78}},
	} {
		fails := [3]int{}
		overall := 0
		for seed := range uint64(20) {
			s := sbcSeed(t, tc.prior, 200, tc.scale, seed)
			for g := range fails {
				if !s.Groups[g].Pass {
					fails[g]++
				}
			}
			if !s.Pass {
				overall++
			}
			c := s.Groups[0].Coverage[9] // level 0.9
			if seed == 0 {
				t.Logf("%s: z sd %.3f, 90%% coverage %.3f, contraction %.3f, %v", tc.name, s.ZSD, c, s.Contraction,
					[]string{verdict(s.Groups[0]), verdict(s.Groups[1]), verdict(s.Groups[2])})
			}
			if s.ZSD < tc.zsd[0] || s.ZSD > tc.zsd[1] || c < tc.cover90[0] || c > tc.cover90[1] {
				t.Errorf("%s seed %d: z-score sd %.3f (want in %v), 90%% coverage %.3f (want in %v)", tc.name, seed, s.ZSD, tc.zsd, c, tc.cover90)
			}
			// The log density's 90% highest-density region: 200 tasks give
			// a standard error of 0.021 at 0.9, and the bounds are 4 of
			// them; an overconfident posterior puts the true point below
			// most draws' density (measured 0.56–0.69 over the 20 seeds).
			if ld := s.Groups[1]; ld.Name != GroupLogDensity || ld.Coverage[9] < tc.ldCover90[0] || ld.Coverage[9] > tc.ldCover90[1] {
				t.Errorf("%s seed %d: group %s 90%% HDR coverage %.3f, want log_density in %v", tc.name, seed, ld.Name, ld.Coverage[9], tc.ldCover90)
			}
		}
		t.Logf("%s: failures per group over 20 replications %v, overall %d", tc.name, fails, overall)
		if tc.maxFails == 0 && overall != 20 {
			t.Errorf("%s: passed %d of 20 replications, want none", tc.name, 20-overall)
		}
		for g, f := range fails {
			if tc.maxFails > 0 && f > tc.maxFails {
				t.Errorf("%s: group %d failed %d of 20 replications, want ≤ %d", tc.name, g, f, tc.maxFails)
			}
		}
	}
}

func verdict(g Group) string {
	if g.Pass {
		return g.Name + " pass"
	}
	return g.Name + " FAIL (" + g.Exit + ")"
}

// TestNumbersRoundTrip: ranks survive the trip through a record's
// diagnostics; a missing or out-of-range entry is refused.
func TestNumbersRoundTrip(t *testing.T) {
	r := &TaskRanks{Coord: []float64{0.1, 0.9}, LogDensity: 0.5, Projection: 0.25,
		ZScore: []float64{-1, 2}, Contraction: []float64{0.3, math.NaN()}}
	m := r.Numbers()
	back, ok := FromNumbers(m, 2)
	if !ok || back.Coord[1] != 0.9 || back.ZScore[0] != -1 || back.Projection != 0.25 || !math.IsNaN(back.Contraction[1]) {
		t.Fatalf("round trip: %+v, ok=%v", back, ok)
	}
	if _, ok := FromNumbers(m, 3); ok {
		t.Error("accepted d=3 from a d=2 record")
	}
	m["sbc_u_1"] = 1.5
	if _, ok := FromNumbers(m, 2); ok {
		t.Error("accepted a rank of 1.5")
	}
}

// TestCoverageRegions: coordinates and projections use central intervals
// (|u − ½| ≤ c/2), the log density its highest-density region (u ≥ 1 − c),
// on ranks placed either side of each boundary.
func TestCoverageRegions(t *testing.T) {
	ranks := [][]float64{{0.02, 0.3, 0.5, 0.52, 0.74, 0.76, 0.92, 0.99}}
	level := func(c float64) int {
		for i, l := range CoverageLevels {
			if l == c {
				return i
			}
		}
		t.Fatalf("no coverage level %v", c)
		return -1
	}
	for _, tc := range []struct {
		group string
		c     float64
		want  float64
	}{
		{GroupCoordinates, 0.1, 2.0 / 8},  // 0.5, 0.52 in [0.45, 0.55]
		{GroupCoordinates, 0.5, 4.0 / 8},  // 0.3 … 0.74 in [0.25, 0.75]
		{GroupCoordinates, 0.95, 6.0 / 8}, // 0.02 and 0.99 outside [0.025, 0.975]
		{GroupProjection, 0.5, 4.0 / 8},   // the same rule
		{GroupLogDensity, 0.1, 2.0 / 8},   // 0.92, 0.99 ≥ 0.9
		{GroupLogDensity, 0.5, 6.0 / 8},   // 0.5 … 0.99 ≥ 0.5
		{GroupLogDensity, 0.95, 7.0 / 8},  // all but 0.02 ≥ 0.05
	} {
		if got := coverage(tc.group, ranks)[level(tc.c)]; math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s at level %v: coverage %v, want %v", tc.group, tc.c, got, tc.want)
		}
	}
}
