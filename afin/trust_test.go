package afin

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// externalTasks are tasks as practitioners write them, which the
// simulator never draws: wide priors, covariates on their raw scale,
// binomial counts with many trials, a small fixed noise. Each says
// whether the support must flag it (and with which quantity) or bring it
// inside by rescaling.
func externalTasks(rng *rand.Rand) []struct {
	name     string
	task     *factor.Task
	flag     string // a quantity the message names; "" for a rescaled task
	rescaled bool
} {
	normal := func(sd float64) float64 { return sd * rng.NormFloat64() }
	logistic := func(d, n int, scale float64, x func(j int) float64, theta []float64, trials int) *factor.Task {
		t := &factor.Task{D: d, Prior: &factor.DiagGaussian{Loc: make([]float64, d), Scale: rep(scale, d)}}
		for range n {
			xr := make([]float64, d)
			for j := range xr {
				xr[j] = x(j)
			}
			p := factor.Sigmoid(dotf(xr, theta))
			y := 0.0
			for range trials {
				if rng.Float64() < p {
					y++
				}
			}
			if trials == 1 {
				t.Factors = append(t.Factors, &factor.BernoulliLogit{X: xr, Y: y})
			} else {
				t.Factors = append(t.Factors, &factor.BinomialLogit{X: xr, Y: y, Trials: trials})
			}
		}
		return t
	}
	// Covariates measured in units 50, 200 and 0.01 times their spread,
	// with a prior on each coefficient scaled to match (N(0, (0.5/sdⱼ)²)).
	sd := []float64{50, 200, 0.01}
	matched := &factor.Task{D: 3, Prior: &factor.DiagGaussian{Loc: []float64{0.004, 0, 20}, Scale: []float64{0.5 / sd[0], 0.5 / sd[1], 0.5 / sd[2]}}}
	theta := []float64{0.01, -0.002, 30}
	for range 50 {
		x := []float64{normal(sd[0]), normal(sd[1]), normal(sd[2])}
		matched.Factors = append(matched.Factors, &factor.LinGaussian{X: x, Y: dotf(x, theta) + normal(0.7), Sigma: 0.7})
	}
	smallNoise := &factor.Task{D: 4, Prior: &factor.DiagGaussian{Loc: make([]float64, 4), Scale: rep(1, 4)}}
	for range 64 {
		x := []float64{normal(0.45), normal(0.45), normal(0.45), normal(0.45)}
		smallNoise.Factors = append(smallNoise.Factors, &factor.LinGaussian{X: x, Y: dotf(x, []float64{0.5, -1, 0.3, 0.8}) + normal(0.05), Sigma: 0.05})
	}
	return []struct {
		name     string
		task     *factor.Task
		flag     string
		rescaled bool
	}{
		{"wide-prior logistic N(0,10²), standardised x", logistic(4, 100, 10, func(int) float64 { return normal(1) }, []float64{1, -0.5, 0.8, 0.3}, 1), "prior scale", false},
		{"raw-scale covariates |x|≈600, N(0,10²)", logistic(3, 80, 10, func(j int) float64 { return []float64{40, 300, 0}[j] + normal([]float64{12, 150, 1}[j]) }, []float64{0.01, -0.002, 0.5}, 1), "covariate", false},
		{"binomial with 50 trials", logistic(3, 40, 1, func(int) float64 { return normal(0.5) }, []float64{0.5, -0.8, 0.2}, 50), "binomial_logit trials", false},
		{"linear with fixed noise 0.05", smallNoise, "lin_gaussian noise scale", false},
		{"raw-scale covariates, prior matched to their units", matched, "", true},
	}
}

func rep(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func dotf(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// The shipped checkpoints flag each external-style task, naming the
// quantity, or bring it inside by rescaling; the OOD check on its own
// flags the tasks whose ranges it does not need to know.
func TestExternalStyleTasks(t *testing.T) {
	for _, name := range []string{"small-full", "small-gaussian"} {
		m, err := Load(filepath.Join("..", "checkpoints", name), EngineChoice{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Support.Ranges == nil || m.OOD == nil {
			t.Fatalf("%s: ranges %v, OOD statistics %v (%s)", name, m.Support.Ranges != nil, m.OOD != nil, m.OODNote)
		}
		for _, tc := range externalTasks(rand.New(rand.NewPCG(11, 12))) {
			if err := tc.task.Validate(); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			outside, r, whyNot := m.Assess(tc.task)
			v, err := m.Summary(context.Background(), tc.task)
			if err != nil {
				t.Fatal(err)
			}
			dist, _ := m.OOD.Distance(v)
			t.Logf("%s / %s: OOD distance %.4g (threshold %.4g)\n  outside: %s\n  rescaled: %v\n  not rescaled: %s", name, tc.name, dist, m.OOD.Threshold, outside, r != nil, whyNot)
			if outside == "" {
				t.Errorf("%s / %s: not flagged", name, tc.name)
			}
			// small-gaussian's N ≤ 64 is named first for the larger tasks.
			if tc.flag != "" && !strings.Contains(outside, tc.flag) && !strings.Contains(outside, "N=") {
				t.Errorf("%s / %s: message %q does not name %q", name, tc.name, outside, tc.flag)
			}
			if (r != nil) != tc.rescaled {
				t.Errorf("%s / %s: rescaled %v, want %v (%s)", name, tc.name, r != nil, tc.rescaled, whyNot)
			}
			if r != nil {
				if why := m.Outside(r.Task); why != "" {
					t.Errorf("%s / %s: the rescaled task is outside: %s", name, tc.name, why)
				}
				checkRescaledAnswer(t, m, tc.task, r)
			}
		}
	}
}

// The OOD check's false-flag rate on fresh simulations from the training
// distribution (a seed none of the fit, calibration or test sets used):
// the threshold is the 0.99 quantile, so about 1% are flagged; 12 of 300
// (4%) bounds it with room for sampling noise (P ≈ 1% of more than 12 at a
// true rate of 2%).
func TestOODFalseFlagRate(t *testing.T) {
	m, err := Load(filepath.Join("..", "checkpoints", "small-gaussian"), EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	if m.OOD == nil {
		t.Fatal("small-gaussian has no OOD statistics: " + m.OODNote)
	}
	rng := rand.New(rand.NewPCG(2026, 99))
	const n = 300
	ood, either := 0, 0
	for range n {
		task, err := factor.Simulate(rng, m.Support.SimOptions())
		if err != nil {
			t.Fatal(err)
		}
		if m.outOfDistribution(task) != "" {
			ood++
		}
		if m.Outside(task) != "" {
			either++
		}
	}
	t.Logf("fresh simulated tasks flagged: %d of %d by the OOD check, %d by ranges or OOD", ood, n, either)
	if ood > 12 {
		t.Errorf("OOD check flagged %d of %d fresh in-support tasks", ood, n)
	}
	if either > 15 {
		t.Errorf("ranges or OOD flagged %d of %d fresh in-support tasks", either, n)
	}
}

// A checkpoint's OOD statistics are for its weights only: the distance
// is finite and the summary has the recorded width.
func TestOODStatisticsMatchWeights(t *testing.T) {
	m, err := Load(filepath.Join("..", "checkpoints", "small-gaussian"), EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	task, err := factor.Simulate(rand.New(rand.NewPCG(1, 1)), factor.SimOptions{D: 3, N: 10})
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.Summary(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.OOD.Distance(v)
	if err != nil || math.IsNaN(d) || math.IsInf(d, 0) {
		t.Errorf("distance %v, %v", d, err)
	}
}

// checkRescaledAnswer compares the network's answer on a conjugate task
// with the exact posterior, in exact posterior sds: the answer on the
// rescaled task mapped back, and the answer on the task as given.
func checkRescaledAnswer(t *testing.T, m *Model, task *factor.Task, r *Rescaled) {
	t.Helper()
	mean, cov, err := factor.ExactPosterior(task)
	if err != nil {
		t.Fatal(err)
	}
	zscore := func(got []float64) float64 {
		var worst float64
		for i := range mean {
			worst = math.Max(worst, math.Abs(got[i]-mean[i])/math.Sqrt(cov[i*task.D+i]))
		}
		return worst
	}
	gs, err := m.Forward([]*factor.Task{r.Task})
	if err != nil {
		t.Fatal(err)
	}
	back, _, _ := r.Reparam.Gaussian(gs[0].Mean, nil, nil)
	raw, err := m.Forward([]*factor.Task{task})
	if err != nil {
		t.Fatal(err)
	}
	zr, zraw := zscore(back), zscore(raw[0].Mean)
	t.Logf("  largest |mean error| in exact posterior sds: rescaled %.3g, as given %.3g", zr, zraw)
	if !(zr < zraw) {
		t.Errorf("the rescaled answer (%.3g sds off) is no better than the answer as given (%.3g)", zr, zraw)
	}
}

// `afin train` records the ranges of the simulator configuration it drew
// from: those of factor.TrainingRanges for its sizes.
func TestTrainRecordsRanges(t *testing.T) {
	dir := t.TempDir()
	if err := (&Trainer{Dir: dir}).Train(context.Background(), tinyConfig(), tinyTrainOptions(1), false); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir, EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Support.Ranges
	if r == nil {
		t.Fatal("no ranges recorded")
	}
	want, err := factor.TrainingRanges(factor.SimOptions{DMax: 3, NMax: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Covariates) != 3 || r.Covariates[2] != want.Covariates[2] || *r.Likelihood(factor.BinomialLogitFamily).Trials != *want.Likelihood(factor.BinomialLogitFamily).Trials {
		t.Errorf("recorded ranges %+v, want %+v", r, want)
	}
	if m.OOD != nil || !strings.Contains(m.OODNote, "afin checkpoint support") {
		t.Errorf("a fresh run has OOD statistics %v or no note (%q)", m.OOD, m.OODNote)
	}
}
