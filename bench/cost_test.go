package bench

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// TestFitTermRecoversAPowerLaw: samples drawn from a known power law with
// log-normal noise give back its exponents, and the fitted term's sum over
// the samples matches theirs (the smearing correction).
func TestFitTermRecoversAPowerLaw(t *testing.T) {
	tests := []struct {
		name           string
		a, d, n, w, sd float64
	}{
		{"linear in everything", -10, 1, 1, 1, 0.1},
		{"quadratic in d, flat in N", -8, 2, 0, 1, 0.3},
		{"sublinear work", -6, 0.5, 0.8, 0.6, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var ss []CostSample
			sum := 0.0
			for range 400 {
				f := CostFeatures{D: float64(1 + rng.IntN(64)), N: float64(1 + rng.IntN(4096)), Work: float64(100 + rng.IntN(1e6))}
				c := math.Exp(tc.a + tc.d*math.Log(f.D) + tc.n*math.Log(f.N) + tc.w*math.Log(f.Work) + tc.sd*rng.NormFloat64())
				ss = append(ss, CostSample{CostFeatures: f, Seconds: c})
				sum += c
			}
			got, err := fitTerm(ss)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range []struct {
				name      string
				got, want float64
			}{{"d", got.D, tc.d}, {"N", got.N, tc.n}, {"work", got.Work, tc.w}} {
				if math.Abs(e.got-e.want) > 0.05 {
					t.Errorf("exponent of %s %.3f, want %.3f", e.name, e.got, e.want)
				}
			}
			if math.Abs(got.RMSLog-tc.sd) > 0.1*tc.sd+0.02 {
				t.Errorf("rms_log %.3f, the noise was %.3f", got.RMSLog, tc.sd)
			}
			est := 0.0
			for _, s := range ss {
				est += got.Seconds(s.CostFeatures)
			}
			if math.Abs(est/sum-1) > 0.05 {
				t.Errorf("the term sums to %.4g over the samples, they to %.4g", est, sum)
			}
		})
	}
}

// TestCostModelAgainstQuickRuns: the committed model estimates each suite
// of the measured quick-profile runs it was fitted to (the samples
// tools/costfit wrote beside it) within ±25%.
func TestCostModelAgainstQuickRuns(t *testing.T) {
	f, err := os.Open("testdata/costsamples.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ss, err := ReadCostSamples(f)
	if err != nil {
		t.Fatal(err)
	}
	m, err := DefaultCostModel()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range CheckCostModel(m, ss, false) {
		if c.Profile != "quick" {
			continue
		}
		checked++
		t.Logf("quick %s: %d samples, measured %.1f CPU-s, estimated %.1f (%+.1f%%)", c.Suite, c.Samples, c.Measured, c.Estimate, 100*c.RelErr())
		if math.Abs(c.RelErr()) > 0.25 {
			t.Errorf("quick %s: estimate %.1f CPU-s against %.1f measured (%+.0f%%), want within ±25%%", c.Suite, c.Estimate, c.Measured, 100*c.RelErr())
		}
	}
	if checked == 0 {
		t.Fatal("no quick-profile samples in testdata/costsamples.csv")
	}
}

// TestFitTermWeighsProfiles: a term fitted to many small-budget samples
// and a few large-budget ones, whose cost grows more slowly beyond the
// small budgets (as the paper profile's SNIS units against the quick
// ones'), estimates the few within 20%: each profile weighs the same
// (profileWeights), so the many do not outvote them.
func TestFitTermWeighsProfiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ss []CostSample
	big := 0.0
	for i := range 300 {
		f := CostFeatures{D: float64(2 + rng.IntN(15)), N: float64(1 + rng.IntN(256)), Work: float64(100 + rng.IntN(10000))}
		ss = append(ss, CostSample{Profile: "quick", CostFeatures: f, Seconds: 1e-4 * f.Work * math.Exp(0.3*rng.NormFloat64())})
		if i < 4 {
			f.Work = 1e7
			c := 1e-4 * 1e4 * math.Pow(f.Work/1e4, 0.6) // sublinear beyond the small budgets
			ss = append(ss, CostSample{Profile: "paper", CostFeatures: f, Seconds: c})
			big += c
		}
	}
	got, err := fitTerm(ss)
	if err != nil {
		t.Fatal(err)
	}
	est := 0.0
	for _, s := range ss {
		if s.Profile == "paper" {
			est += got.Seconds(s.CostFeatures)
		}
	}
	if math.Abs(est/big-1) > 0.2 {
		t.Errorf("the large-budget samples: estimated %.4g CPU-s, measured %.4g (%+.0f%%)", est, big, 100*(est/big-1))
	}
	ws := profileWeights(ss)
	sums := map[string]float64{}
	for k, s := range ss {
		sums[s.Profile] += ws[k]
	}
	if math.Abs(sums["quick"]-sums["paper"]) > 1e-9*float64(len(ss)) || math.Abs(sums["quick"]+sums["paper"]-float64(len(ss))) > 1e-9*float64(len(ss)) {
		t.Errorf("weights sum to %v by profile, want equal halves of %d", sums, len(ss))
	}
}
