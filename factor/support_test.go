package factor

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// testRanges are small hand-set ranges, so each check's verdict is known.
func testRanges() *Ranges {
	iv := func(a, b float64) *Interval { return &Interval{a, b} }
	return &Ranges{
		Priors: []PriorRanges{
			{Family: DiagGaussianFamily, Location: Interval{-2, 2}, Scale: Interval{0.45, 1}},
			{Family: DiagStudentTFamily, Location: Interval{-2, 2}, Scale: Interval{0.5, 1}, DF: iv(3, 8)},
		},
		Likelihoods: []LikelihoodRanges{
			{Family: LinGaussianFamily, Noise: iv(0.45, 0.95), Response: iv(-10, 10)},
			{Family: LinStudentTFamily, Noise: iv(0.5, 1), DF: iv(3.5, 8), Response: iv(-40, 20)},
			{Family: BinomialLogitFamily, Trials: iv(2, 8)},
			{Family: BernoulliLogitFamily},
			{Family: GaussianFamily, Noise: iv(0.45, 0.95), Response: iv(-18, 9)},
		},
		Covariates: []CovariateRanges{{D: 2, ColumnRMS: 2, AbsMax: 4, RowNormMax: 5}},
	}
}

func TestRangesCheckEachQuantity(t *testing.T) {
	prior := func(loc, scale float64) Prior {
		return &DiagGaussian{Loc: []float64{loc, 0}, Scale: []float64{scale, 0.5}}
	}
	x := []float64{0.5, -0.5}
	lin := func(y, sigma float64) Likelihood { return &LinGaussian{X: x, Y: y, Sigma: sigma} }
	tests := []struct {
		name  string
		prior Prior
		facs  []Likelihood
		want  []string // substrings; nil: inside
	}{
		{"inside", prior(0.3, 0.7), []Likelihood{lin(1, 0.5)}, nil},
		{"prior scale", prior(0, 10), []Likelihood{lin(1, 0.5)}, []string{"diag_gaussian prior scale 10 ", "[0.45, 1]"}},
		{"prior location", prior(5, 0.7), []Likelihood{lin(1, 0.5)}, []string{"diag_gaussian prior location 5 ", "[-2, 2]"}},
		{"prior df", &DiagStudentT{Loc: []float64{0, 0}, Scale: []float64{0.7, 0.7}, DF: 1}, []Likelihood{lin(1, 0.5)}, []string{"diag_student_t prior df 1 ", "[3, 8]"}},
		{"noise", prior(0, 0.7), []Likelihood{lin(1, 0.01)}, []string{"lin_gaussian noise scale 0.01 ", "[0.45, 0.95]"}},
		{"response", prior(0, 0.7), []Likelihood{lin(300, 0.5)}, []string{"lin_gaussian response 300 ", "[-10, 10]"}},
		{"student-t df", prior(0, 0.7), []Likelihood{&LinStudentT{X: x, Y: 0, Sigma: 0.7, DF: 30}}, []string{"lin_student_t df 30 ", "[3.5, 8]"}},
		{"trials", prior(0, 0.7), []Likelihood{&BinomialLogit{X: x, Y: 20, Trials: 50}}, []string{"binomial_logit trials 50 ", "[2, 8]"}},
		{"vector noise", prior(0, 0.7), []Likelihood{&Gaussian{Y: []float64{0, 0}, Sigma: 3}}, []string{"gaussian noise scale 3 "}},
		{"covariate abs", prior(0, 0.7), []Likelihood{&BernoulliLogit{X: []float64{600, 0}, Y: 1}}, []string{"covariate max |x| at d=2 600 ", "[0, 4]", "covariate row norm at d=2 600 "}},
		{"covariate rms", prior(0, 0.7), []Likelihood{&BernoulliLogit{X: []float64{3, 0}, Y: 1}, &BernoulliLogit{X: []float64{3, 0}, Y: 0}}, []string{"covariate column rms at d=2 3 ", "[0, 2]"}},
		{"untrained family", &DiagLaplace{Loc: []float64{0, 0}, Scale: []float64{1, 1}}, []Likelihood{lin(1, 0.5)}, []string{"prior diag_laplace has no training ranges"}},
		{"NaN", prior(0, 0.7), []Likelihood{lin(math.NaN(), 0.5)}, []string{"lin_gaussian response NaN"}},
	}
	r := testRanges()
	for _, tc := range tests {
		got := r.Check(&Task{D: 2, Prior: tc.prior, Factors: tc.facs})
		if (got == "") != (tc.want == nil) {
			t.Errorf("%s: Check = %q, want inside=%v", tc.name, got, tc.want == nil)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: Check = %q, want it to contain %q", tc.name, got, w)
			}
		}
	}
}

// Check names the value furthest outside once per quantity.
func TestRangesCheckWorstValue(t *testing.T) {
	task := &Task{D: 2, Prior: &DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{10, 100}},
		Factors: []Likelihood{&LinGaussian{X: []float64{0, 0}, Y: 0, Sigma: 0.5}}}
	got := testRanges().Check(task)
	if strings.Count(got, "prior scale") != 1 || !strings.Contains(got, "scale 100 ") {
		t.Errorf("Check = %q", got)
	}
}

// The bounded parameters of simulated tasks lie in the ranges recorded
// for them, and the ranges' unbounded quantities hold fresh tasks (another
// seed) but for a small fraction: each statistic is exceeded with
// probability about 1/(RangeTasksPerD+1) per task.
func TestTrainingRangesHoldFreshTasks(t *testing.T) {
	o := SimOptions{DMax: 8, NMax: 64}
	r, err := TrainingRanges(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Prior(DiagGaussianFamily).Scale; math.Abs(got.Min-math.Exp(-0.8)) > 1e-15 || got.Max != 1 {
		t.Errorf("diag_gaussian scale range %v", got)
	}
	if got := r.Likelihood(BinomialLogitFamily).Trials; got == nil || *got != (Interval{2, 8}) {
		t.Errorf("binomial trials %v", got)
	}
	if len(r.Covariates) != 8 || r.Covariate(8) == nil || r.Covariate(9) != nil {
		t.Fatalf("covariate ranges for %d d values", len(r.Covariates))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 3000
	outside := 0
	for range n {
		task, err := Simulate(rng, o)
		if err != nil {
			t.Fatal(err)
		}
		if why := r.Check(task); why != "" {
			outside++
			for _, bounded := range []string{"prior scale", "prior df", "noise scale", " df ", "trials"} {
				if strings.Contains(why, bounded) && !strings.Contains(why, "fullrank") {
					t.Errorf("a simulated task is outside a bounded range: %s", why)
				}
			}
		}
	}
	// About 10 statistics, each exceeded with probability ≈ 1/1001: the
	// expected rate is ≤ 1%; 2% leaves room for sampling noise.
	if rate := float64(outside) / n; rate > 0.02 {
		t.Errorf("%d of %d fresh simulated tasks flagged (%.2f%%)", outside, n, 100*rate)
	}
	t.Logf("%d of %d fresh simulated tasks outside the ranges", outside, n)
}

// The rescaled task's exact posterior, mapped back, is the original's.
func TestReparamConjugateExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, prior := range []string{DiagGaussianFamily, FullRankGaussianFamily} {
		task, err := Simulate(rng, SimOptions{D: 4, N: 30, Prior: prior, Likelihoods: []string{LinGaussianFamily, GaussianFamily}})
		if err != nil {
			t.Fatal(err)
		}
		// A common scale (the vector gaussian sites need one) and a shift.
		rp := Reparam{Shift: []float64{0.3, -1, 2, 0.5}, Scale: []float64{7, 7, 7, 7}}
		check := func(name string, rp Reparam, task *Task) {
			nt, err := rp.Apply(task)
			if err != nil {
				t.Fatal(err)
			}
			m0, c0, err := ExactPosterior(task)
			if err != nil {
				t.Fatal(err)
			}
			m1, c1, err := ExactPosterior(nt)
			if err != nil {
				t.Fatal(err)
			}
			mb, cb, _ := rp.Gaussian(m1, c1, nil)
			for i := range m0 {
				if math.Abs(mb[i]-m0[i]) > 1e-10*math.Max(1, math.Abs(m0[i])) {
					t.Errorf("%s %s: mean[%d] %v mapped back, want %v", prior, name, i, mb[i], m0[i])
				}
			}
			for i := range c0 {
				if math.Abs(cb[i]-c0[i]) > 1e-10*math.Max(1, math.Abs(c0[i])) {
					t.Errorf("%s %s: cov[%d] %v mapped back, want %v", prior, name, i, cb[i], c0[i])
				}
			}
			// Densities: log p(θ|y) = log p′(θ′|y′) − Σ log s, for the exact Gaussians.
			zp := []float64{0.3, -0.2, 0.1, 0.5}
			for i := range zp {
				zp[i] = m1[i] + zp[i]*math.Sqrt(c1[i*4+i])
			}
			z := slices.Clone(zp)
			rp.Draw(z)
			if got, want := gaussLogPDF(t, z, m0, c0), gaussLogPDF(t, zp, m1, c1)-rp.LogDet(); math.Abs(got-want) > 1e-8*math.Max(1, math.Abs(want)) {
				t.Errorf("%s %s: log p(θ|y) %v, log p′(θ′|y′) − Σ log s %v", prior, name, got, want)
			}
			// The mapped precision is the inverse of the mapped covariance.
			_, _, p1 := rp.Gaussian(m1, nil, invert(t, c1))
			pc := invert(t, c0)
			for i := range pc {
				if math.Abs(p1[i]-pc[i]) > 1e-8*math.Max(1, math.Abs(pc[i])) {
					t.Errorf("%s %s: mapped precision[%d] %v, want %v", prior, name, i, p1[i], pc[i])
				}
			}
		}
		check("common scale", rp, task)
		// Without vector sites, per-coordinate scales.
		lin := &Task{D: task.D, Prior: task.Prior}
		for _, f := range task.Factors {
			if _, ok := f.(*LinGaussian); ok {
				lin.Factors = append(lin.Factors, f)
			}
		}
		check("per-coordinate scales", Reparam{Shift: []float64{0.3, -1, 2, 0.5}, Scale: []float64{0.01, 3, 40, 1}}, lin)
	}
}

// The log density of the rescaled task differs from the original's by
// the constant −Σ log s plus the normaliser, so its gradient maps exactly.
func TestReparamDensityJacobian(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	task, err := Simulate(rng, SimOptions{D: 3, N: 20, Prior: DiagStudentTFamily, Likelihoods: []string{LinStudentTFamily, LinGaussianFamily}})
	if err != nil {
		t.Fatal(err)
	}
	rp := Reparam{Shift: []float64{1, 0, -2}, Scale: []float64{0.2, 5, 1.5}}
	nt, err := rp.Apply(task)
	if err != nil {
		t.Fatal(err)
	}
	// log p̃(θ) − log p̃′(θ′) is the same at any two points.
	var diff []float64
	for range 3 {
		zp := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		z := slices.Clone(zp)
		rp.Draw(z)
		diff = append(diff, task.LogJoint(z)-(nt.LogJoint(zp)-rp.LogDet()))
	}
	for _, v := range diff[1:] {
		if math.Abs(v-diff[0]) > 1e-9 {
			t.Errorf("log joint differences %v are not constant", diff)
		}
	}
}

// Logistic sites cannot carry an offset; vector sites need one scale.
func TestReparamRefuses(t *testing.T) {
	task := &Task{D: 2, Prior: &DiagGaussian{Loc: []float64{1, 0}, Scale: []float64{1, 1}},
		Factors: []Likelihood{&BernoulliLogit{X: []float64{1, 1}, Y: 1}}}
	if _, err := (Reparam{Shift: []float64{1, 0}, Scale: []float64{1, 1}}).Apply(task); err == nil || !strings.Contains(err.Error(), "offset") {
		t.Errorf("shifted bernoulli: %v", err)
	}
	task.Factors = []Likelihood{&Gaussian{Y: []float64{1, 1}, Sigma: 1}}
	if _, err := (Reparam{Shift: []float64{0, 0}, Scale: []float64{1, 2}}).Apply(task); err == nil || !strings.Contains(err.Error(), "equal") {
		t.Errorf("unequal scales with a vector site: %v", err)
	}
}

// Rescaling brings a wide-prior task with small covariates inside, and
// refuses one whose covariates times prior scale are beyond the range.
func TestRangesRescaling(t *testing.T) {
	r := testRanges()
	x := []float64{0.05, -0.08}
	task := &Task{D: 2, Prior: &DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{10, 10}},
		Factors: []Likelihood{&BernoulliLogit{X: x, Y: 1}, &BernoulliLogit{X: x, Y: 0}}}
	if r.Check(task) == "" {
		t.Fatal("wide prior inside the test ranges")
	}
	rp, nt, err := r.Rescaling(task)
	if err != nil {
		t.Fatal(err)
	}
	if why := r.Check(nt); why != "" || rp.Scale[0] != 10 {
		t.Errorf("rescaled by %v: %q", rp, why)
	}
	task.Factors = []Likelihood{&BernoulliLogit{X: []float64{1, 1}, Y: 1}}
	if _, _, err := r.Rescaling(task); err == nil || !strings.Contains(err.Error(), "would need a prior scale") {
		t.Errorf("x·σ = 10: %v", err)
	}
}

func invert(t *testing.T, a []float64) []float64 {
	t.Helper()
	d := int(math.Sqrt(float64(len(a))))
	var inv mat.Dense
	if err := inv.Inverse(mat.NewDense(d, d, slices.Clone(a))); err != nil {
		t.Fatal(err)
	}
	return inv.RawMatrix().Data
}

// gaussLogPDF is log N(x; m, C).
func gaussLogPDF(t *testing.T, x, m, c []float64) float64 {
	t.Helper()
	d := len(m)
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(d, slices.Clone(c))) {
		t.Fatal("covariance not positive definite")
	}
	r := make([]float64, d)
	for i := range r {
		r[i] = x[i] - m[i]
	}
	var sol mat.VecDense
	if err := ch.SolveVecTo(&sol, mat.NewVecDense(d, r)); err != nil {
		t.Fatal(err)
	}
	return -0.5*mat.Dot(mat.NewVecDense(d, r), &sol) - 0.5*ch.LogDet() - 0.5*float64(d)*math.Log(2*math.Pi)
}
