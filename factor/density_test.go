package factor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// kernel is anything with the LogKernelGrad/LogProb/LogNormalizer trio:
// every prior and likelihood family.
type kernel interface {
	LogProb(z []float64) float64
	LogKernelGrad(z, grad []float64) float64
	LogNormalizer() float64
}

// fdGrad is the fourth-order central difference
// (−f(z+2h)+8f(z+h)−8f(z−h)+f(z−2h))/(12h) per coordinate, with
// h = 1e-4·max(1,|z_i|); it is exact for polynomials up to degree 4 and
// accurate to ~1e-9 relative for the smooth kernels here.
func fdGrad(f func([]float64) float64, z []float64) []float64 {
	g := make([]float64, len(z))
	w := append([]float64(nil), z...)
	for i := range z {
		h := 1e-4 * math.Max(1, math.Abs(z[i]))
		at := func(s float64) float64 {
			w[i] = z[i] + s*h
			v := f(w)
			w[i] = z[i]
			return v
		}
		g[i] = (-at(2) + 8*at(1) - 8*at(-1) + at(-2)) / (12 * h)
	}
	return g
}

// relErr is the componentwise error relative to the gradient's size,
// max_i |a_i−b_i| / max(‖a‖∞, ‖b‖∞); zero when both vanish.
func relErr(a, b []float64) float64 {
	var diff, scale float64
	for i := range a {
		diff = math.Max(diff, math.Abs(a[i]-b[i]))
		scale = math.Max(scale, math.Max(math.Abs(a[i]), math.Abs(b[i])))
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}

type densityCase struct {
	name string
	k    kernel
	z    []float64
}

func randVec(rng *rand.Rand, d int, scale float64) []float64 {
	v := make([]float64, d)
	for i := range v {
		v[i] = scale * rng.NormFloat64()
	}
	return v
}

func posVec(rng *rand.Rand, d int, lo, hi float64) []float64 {
	v := make([]float64, d)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return v
}

// scaleTo rescales z so that xᵀz = eta exactly (up to rounding).
func scaleTo(x, z []float64, eta float64) []float64 {
	s := eta / dot(x, z)
	out := make([]float64, len(z))
	for i := range z {
		out[i] = s * z[i]
	}
	return out
}

// densityCases builds every family at random points, including linear
// predictors |xᵀz| up to 1e3 and heavy-tailed Student-t residuals.
func densityCases() []densityCase {
	rng := newRNG(70)
	const d = 5
	var cs []densityCase
	add := func(name string, k kernel, z []float64) {
		cs = append(cs, densityCase{fmt.Sprintf("%s/%d", name, len(cs)), k, z})
	}
	for rep := 0; rep < 4; rep++ {
		loc := randVec(rng, d, 1)
		z := randVec(rng, d, 2)
		add("diag_gaussian", &DiagGaussian{Loc: loc, Scale: posVec(rng, d, 0.05, 3)}, z)
		add("diag_laplace", &DiagLaplace{Loc: loc, Scale: posVec(rng, d, 0.05, 3)}, z)
		add("diag_student_t", &DiagStudentT{Loc: loc, Scale: posVec(rng, d, 0.05, 3), DF: 0.5 + 10*rng.Float64()}, z)
		// Heavy tail: tiny df, a point far out.
		add("diag_student_t_tail", &DiagStudentT{Loc: loc, Scale: posVec(rng, d, 0.1, 1), DF: 0.3}, randVec(rng, d, 500))
		task, _ := Simulate(rng, SimOptions{D: d, N: 1, Prior: FullRankGaussianFamily})
		add("fullrank_gaussian", task.Prior, z)

		x := randVec(rng, d, 1)
		add("gaussian", &Gaussian{Y: randVec(rng, d, 1), Sigma: 0.05 + rng.Float64()}, z)
		add("lin_gaussian", &LinGaussian{X: x, Y: rng.NormFloat64(), Sigma: 0.05 + rng.Float64()}, z)
		for _, eta := range []float64{0.3, -4, 40, -1e3, 1e3} {
			ze := scaleTo(x, z, eta)
			for _, y := range []float64{0, 1} {
				add(fmt.Sprintf("bernoulli_logit_eta%g_y%g", eta, y), &BernoulliLogit{X: x, Y: y}, ze)
			}
			for _, y := range []float64{0, 3, 8} {
				add(fmt.Sprintf("binomial_logit_eta%g_y%g", eta, y), &BinomialLogit{X: x, Y: y, Trials: 8}, ze)
			}
			add(fmt.Sprintf("lin_student_t_eta%g", eta), &LinStudentT{X: x, Y: 0.5, Sigma: 0.3, DF: 0.7 + 5*rng.Float64()}, ze)
			add(fmt.Sprintf("lin_gaussian_eta%g", eta), &LinGaussian{X: x, Y: 0.5, Sigma: 0.3}, ze)
		}
	}
	return cs
}

func TestGradientsFiniteDifference(t *testing.T) {
	for _, tc := range densityCases() {
		kern := func(z []float64) float64 {
			return tc.k.LogKernelGrad(z, make([]float64, len(z)))
		}
		g := make([]float64, len(tc.z))
		v := tc.k.LogKernelGrad(tc.z, g)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("%s: kernel %g", tc.name, v)
			continue
		}
		fd := fdGrad(kern, tc.z)
		if e := relErr(g, fd); !(e < 1e-6) {
			t.Errorf("%s: gradient relative error %.3g\n analytic %v\n      fd %v", tc.name, e, g, fd)
		}
		// LogProb is the kernel plus its normaliser.
		if lp, want := tc.k.LogProb(tc.z), v+tc.k.LogNormalizer(); math.Abs(lp-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: LogProb %.15g, kernel+normaliser %.15g", tc.name, lp, want)
		}
		// The gradient is added into grad, not written over it.
		g2 := []float64{1, 2, 3, 4, 5}
		tc.k.LogKernelGrad(tc.z, g2)
		for i := range g2 {
			if math.Abs(g2[i]-(float64(i+1)+g[i])) > 1e-12*math.Max(1, math.Abs(g[i])) {
				t.Fatalf("%s: LogKernelGrad does not accumulate into grad", tc.name)
			}
		}
	}
}

func TestTaskGradientFiniteDifference(t *testing.T) {
	rng := newRNG(71)
	for i := 0; i < 40; i++ {
		task, err := Simulate(rng, SimOptions{DMax: 8, NMax: 60})
		if err != nil {
			t.Fatal(err)
		}
		z := task.TrueZ
		g := make([]float64, task.D)
		for j := range g {
			g[j] = math.NaN() // LogDensityGrad must overwrite
		}
		v := task.LogDensityGrad(z, g)
		if v != task.LogDensity(z) {
			t.Fatalf("task %d: LogDensityGrad %g ≠ LogDensity %g", i, v, task.LogDensity(z))
		}
		fd := fdGrad(task.LogDensity, z)
		if e := relErr(g, fd); !(e < 1e-6) {
			t.Errorf("task %d (%s, N=%d): relative error %.3g", i, task.Prior.Family(), task.N(), e)
		}
	}
}

// TestLogProbAgainstGonum compares every family's normalised density with
// an independent implementation in gonum's stat/distuv (and distmv for the
// full-rank Gaussian).
func TestLogProbAgainstGonum(t *testing.T) {
	rng := newRNG(72)
	const d = 4
	close := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: LogProb %.15g, gonum %.15g", name, got, want)
		}
	}
	for rep := 0; rep < 20; rep++ {
		z := randVec(rng, d, 1.5)
		loc := randVec(rng, d, 1)
		scale := posVec(rng, d, 0.1, 2)
		df := 0.5 + 8*rng.Float64()

		var wantG, wantL, wantT float64
		for i := 0; i < d; i++ {
			wantG += distuv.Normal{Mu: loc[i], Sigma: scale[i]}.LogProb(z[i])
			wantL += distuv.Laplace{Mu: loc[i], Scale: scale[i]}.LogProb(z[i])
			wantT += distuv.StudentsT{Mu: loc[i], Sigma: scale[i], Nu: df}.LogProb(z[i])
		}
		close("diag_gaussian", (&DiagGaussian{Loc: loc, Scale: scale}).LogProb(z), wantG)
		close("diag_laplace", (&DiagLaplace{Loc: loc, Scale: scale}).LogProb(z), wantL)
		close("diag_student_t", (&DiagStudentT{Loc: loc, Scale: scale, DF: df}).LogProb(z), wantT)

		task, _ := Simulate(rng, SimOptions{D: d, N: 1, Prior: FullRankGaussianFamily})
		fr := task.Prior.(*FullRankGaussian)
		close("fullrank_gaussian", fr.LogProb(z), mvnLogProbFromCovariance(t, fr.Precision, fr.Loc, z))

		x := randVec(rng, d, 0.7)
		eta := dot(x, z)
		y := randVec(rng, d, 1)
		sigma := 0.1 + rng.Float64()
		var wantV float64
		for i := 0; i < d; i++ {
			wantV += distuv.Normal{Mu: z[i], Sigma: sigma}.LogProb(y[i])
		}
		close("gaussian", (&Gaussian{Y: y, Sigma: sigma}).LogProb(z), wantV)
		close("lin_gaussian", (&LinGaussian{X: x, Y: y[0], Sigma: sigma}).LogProb(z), distuv.Normal{Mu: eta, Sigma: sigma}.LogProb(y[0]))
		close("lin_student_t", (&LinStudentT{X: x, Y: y[0], Sigma: sigma, DF: df}).LogProb(z),
			distuv.StudentsT{Mu: eta, Sigma: sigma, Nu: df}.LogProb(y[0]))
		p := Sigmoid(eta)
		for _, yb := range []float64{0, 1} {
			close("bernoulli_logit", (&BernoulliLogit{X: x, Y: yb}).LogProb(z), distuv.Bernoulli{P: p}.LogProb(yb))
		}
		trials := 1 + rng.IntN(12)
		for k := 0; k <= trials; k++ {
			close("binomial_logit", (&BinomialLogit{X: x, Y: float64(k), Trials: trials}).LogProb(z),
				distuv.Binomial{N: float64(trials), P: p}.LogProb(float64(k)))
		}
	}
}

// mvnLogProbFromCovariance evaluates log N(z; μ, Σ) the long way round
// with gonum's dense LU: Σ = Λ⁻¹ by inversion, then log det Σ and
// Σ⁻¹(z−μ) by solving, sharing nothing with the precision-form code under
// test.
func mvnLogProbFromCovariance(t *testing.T, prec, loc, z []float64) float64 {
	t.Helper()
	d := len(loc)
	var cov mat.Dense
	if err := cov.Inverse(mat.NewDense(d, d, append([]float64(nil), prec...))); err != nil {
		t.Fatal(err)
	}
	r := make([]float64, d)
	for i := range r {
		r[i] = z[i] - loc[i]
	}
	var sol mat.VecDense
	if err := sol.SolveVec(&cov, mat.NewVecDense(d, r)); err != nil {
		t.Fatal(err)
	}
	logDet, sign := mat.LogDet(&cov)
	if sign <= 0 {
		t.Fatal("covariance determinant not positive")
	}
	return -0.5 * (float64(d)*math.Log(2*math.Pi) + logDet + dot(r, sol.RawVector().Data))
}

// TestExtremeLinearPredictor checks the logistic families at |xᵀz| = 1e3,
// where the naive log(sigmoid) under- or overflows, against their exact
// asymptotic values.
func TestExtremeLinearPredictor(t *testing.T) {
	x := []float64{0.5, -0.25}
	lc56 := math.Log(56)
	tests := []struct {
		name string
		k    kernel
		eta  float64
		want float64
	}{
		{"bernoulli y=1 η=−1e3", &BernoulliLogit{X: x, Y: 1}, -1e3, -1e3},
		{"bernoulli y=0 η=1e3", &BernoulliLogit{X: x, Y: 0}, 1e3, -1e3},
		{"bernoulli y=1 η=1e3", &BernoulliLogit{X: x, Y: 1}, 1e3, 0},
		{"binomial y=3/8 η=1e3", &BinomialLogit{X: x, Y: 3, Trials: 8}, 1e3, lc56 - 5e3},
		{"binomial y=3/8 η=−1e3", &BinomialLogit{X: x, Y: 3, Trials: 8}, -1e3, lc56 - 3e3},
	}
	for _, tc := range tests {
		z := []float64{2 * tc.eta, 0}
		if got := tc.k.LogProb(z); math.Abs(got-tc.want) > 1e-12*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("%s: LogProb %.15g, want %.15g", tc.name, got, tc.want)
		}
		g := make([]float64, 2)
		tc.k.LogKernelGrad(z, g)
		for _, v := range g {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: gradient %v", tc.name, g)
			}
		}
	}
}

func TestSoftplusSigmoid(t *testing.T) {
	for _, x := range []float64{-1e3, -40, -1, 0, 1e-9, 1, 40, 1e3} {
		// Independent forms: log(1+e^x) where it is safe, else the
		// asymptote x + e^{−x} or e^{x}.
		var sp float64
		switch {
		case x > 30:
			sp = x + math.Exp(-x)
		case x < -30:
			sp = math.Exp(x)
		default:
			sp = math.Log(1 + math.Exp(x))
		}
		if got := Softplus(x); math.Abs(got-sp) > 1e-14*math.Max(1e-300, math.Abs(sp)) && math.Abs(got-sp) > 1e-15 {
			t.Errorf("Softplus(%g) = %.17g, want %.17g", x, got, sp)
		}
		if s := Sigmoid(x); math.Abs(s+Sigmoid(-x)-1) > 1e-15 || s < 0 || s > 1 {
			t.Errorf("Sigmoid(%g) = %g", x, s)
		}
		// d/dx softplus = sigmoid.
		if math.Abs(x) < 50 {
			h := 1e-5
			fd := (Softplus(x+h) - Softplus(x-h)) / (2 * h)
			if math.Abs(fd-Sigmoid(x)) > 1e-9 {
				t.Errorf("softplus'(%g) = %g, sigmoid %g", x, fd, Sigmoid(x))
			}
		}
	}
}

// TestRandMoments checks the samplers behind the simulator: StudentT,
// ChiSquare, Gamma and each prior's Rand.
func TestRandMoments(t *testing.T) {
	rng := newRNG(73)
	const n = 200000
	mom := func(draw func() float64) (m, v float64) {
		for i := 0; i < n; i++ {
			x := draw()
			m += x
			v += x * x
		}
		m /= n
		return m, v/n - m*m
	}
	tests := []struct {
		name     string
		draw     func() float64
		mean, vr float64
	}{
		{"gamma(0.5)", func() float64 { return Gamma(rng, 0.5) }, 0.5, 0.5},
		{"gamma(3.2)", func() float64 { return Gamma(rng, 3.2) }, 3.2, 3.2},
		{"chi2(7)", func() float64 { return ChiSquare(rng, 7) }, 7, 14},
		{"t(6)", func() float64 { return StudentT(rng, 6) }, 0, 1.5},
		{"laplace(1, 0.5)", func() float64 {
			z := []float64{0}
			(&DiagLaplace{Loc: []float64{1}, Scale: []float64{0.5}}).Rand(rng, z)
			return z[0]
		}, 1, 0.5},
		{"student prior(−1, 2, ν=9)", func() float64 {
			z := []float64{0}
			(&DiagStudentT{Loc: []float64{-1}, Scale: []float64{2}, DF: 9}).Rand(rng, z)
			return z[0]
		}, -1, 4 * 9.0 / 7},
	}
	for _, tc := range tests {
		m, v := mom(tc.draw)
		if math.Abs(m-tc.mean) > 0.02*math.Max(1, math.Abs(tc.mean)) || math.Abs(v-tc.vr) > 0.05*tc.vr {
			t.Errorf("%s: mean %.4f var %.4f, want %.4f %.4f", tc.name, m, v, tc.mean, tc.vr)
		}
	}
}

// BenchmarkLogDensityGrad times log p̃ and its gradient at d = 16 per
// family; the ns/factor metric divides by the number of factors of that
// family in the task (256 sites, or the one prior).
func BenchmarkLogDensityGrad(b *testing.B) {
	const d, n = 16, 256
	for _, fam := range append(append([]string(nil), PriorFamilies...), LikelihoodFamilies...) {
		b.Run(fam, func(b *testing.B) {
			rng := newRNG(80)
			o := SimOptions{D: d, N: n, Prior: DiagGaussianFamily, Likelihoods: []string{fam}}
			perFactor := float64(n)
			if isPrior(fam) {
				o = SimOptions{D: d, N: 1, Prior: fam, Likelihoods: []string{LinGaussianFamily}}
				perFactor = 1
			}
			task, err := Simulate(rng, o)
			if err != nil {
				b.Fatal(err)
			}
			if isPrior(fam) {
				task.Factors = nil
			}
			z := task.TrueZ
			g := make([]float64, d)
			b.ReportAllocs()
			for b.Loop() {
				task.LogDensityGrad(z, g)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/perFactor, "ns/factor")
		})
	}
}

func isPrior(fam string) bool {
	for _, p := range PriorFamilies {
		if p == fam {
			return true
		}
	}
	return false
}

// TestLogDensityMatchesGradPath checks that the gradient-free LogDensity
// equals the value LogDensityGrad returns, to the last bit, and allocates
// nothing.
func TestLogDensityMatchesGradPath(t *testing.T) {
	rng := newRNG(74)
	for i := 0; i < 200; i++ {
		task, err := Simulate(rng, SimOptions{DMax: 10, NMax: 40})
		if err != nil {
			t.Fatal(err)
		}
		z := randVec(rng, task.D, 2)
		g := make([]float64, task.D)
		if a, b := task.LogDensity(z), task.LogDensityGrad(z, g); a != b {
			t.Fatalf("task %d: LogDensity %.17g, LogDensityGrad %.17g", i, a, b)
		}
		if i < 5 {
			if n := testing.AllocsPerRun(20, func() { task.LogDensity(z) }); n != 0 {
				t.Errorf("LogDensity allocates %v times per call", n)
			}
		}
	}
}
