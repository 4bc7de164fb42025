package factor

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/afin-bench/afin/internal/countctx"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

func TestSimulateDeterministic(t *testing.T) {
	for _, o := range []SimOptions{{}, {D: 3, N: 7, Prior: FullRankGaussianFamily, Design: DesignStudentT}} {
		a, err := Simulate(newRNG(11), o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Simulate(newRNG(11), o)
		c, _ := Simulate(newRNG(12), o)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%+v: same seed gave different tasks", o)
		}
		if reflect.DeepEqual(a, c) {
			t.Errorf("%+v: different seeds gave the same task", o)
		}
	}
}

func TestSimulateValidTasks(t *testing.T) {
	rng := newRNG(1)
	for i := 0; i < 300; i++ {
		task, err := Simulate(rng, SimOptions{DMax: 6, NMax: 20})
		if err != nil {
			t.Fatal(err)
		}
		if err := task.Validate(); err != nil {
			t.Fatalf("task %d invalid: %v", i, err)
		}
		if g := task.LogDensity(task.TrueZ); math.IsNaN(g) || math.IsInf(g, 0) {
			t.Fatalf("task %d: log density at true z is %g", i, g)
		}
	}
}

func TestSimOptionsCheck(t *testing.T) {
	tests := []struct {
		name string
		o    SimOptions
		ok   bool
	}{
		{"defaults", SimOptions{}, true},
		{"fixed", SimOptions{D: 4, N: 9, Prior: DiagLaplaceFamily, Likelihoods: []string{LinGaussianFamily, GaussianFamily}, Design: DesignCorrelated, KappaMax: 100}, true},
		{"bad prior", SimOptions{Prior: "cauchy"}, false},
		{"bad likelihood", SimOptions{Likelihoods: []string{"poisson"}}, false},
		{"duplicate likelihood", SimOptions{Likelihoods: []string{LinGaussianFamily, LinGaussianFamily}}, false},
		{"bad design", SimOptions{Design: "banded"}, false},
		{"negative d", SimOptions{D: -1}, false},
		{"empty range", SimOptions{DMin: 5, DMax: 3}, false},
		{"kappa < 1", SimOptions{KappaMax: 0.5}, false},
		{"kappa NaN", SimOptions{KappaMax: math.NaN()}, false},
		{"d too large", SimOptions{D: MaxDim + 1}, false},
		{"d_max too large", SimOptions{DMax: MaxDim + 1}, false},
	}
	for _, tc := range tests {
		err := tc.o.Check()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Check() = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if _, err := Simulate(newRNG(1), tc.o); (err == nil) != tc.ok {
			t.Errorf("%s: Simulate error = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	// The size messages name the one setting at fault.
	for _, tc := range []struct {
		o   SimOptions
		msg string
	}{
		{SimOptions{D: MaxDim + 1}, "d must be ≤ 65536 (the task JSON limit), got 65537"},
		{SimOptions{DMax: MaxDim + 1}, "d_max must be ≤ 65536 (the task JSON limit), got 65537"},
	} {
		if err := tc.o.Check(); err == nil || err.Error() != tc.msg {
			t.Errorf("Check(%+v) = %v, want %q", tc.o, err, tc.msg)
		}
	}
}

// TestSampleDN compares the empirical (d, N) marginals with the exact
// mixture 0.6·hard + 0.4·uniform on a small grid.
func TestSampleDN(t *testing.T) {
	o := SimOptions{DMin: 2, DMax: 5, NMin: 3, NMax: 6}
	const draws = 200000
	rng := newRNG(2)
	var dc, nc [8]float64
	for i := 0; i < draws; i++ {
		d, n := SampleDN(rng, o)
		if d < 2 || d > 5 || n < 3 || n > 6 {
			t.Fatalf("(d,n) = (%d,%d) outside support", d, n)
		}
		dc[d]++
		nc[n]++
	}
	var wd, wn [8]float64
	var sd, sn float64
	for d := 2; d <= 5; d++ {
		wd[d] = float64(d-1) / 4
		sd += wd[d]
	}
	for n := 3; n <= 6; n++ {
		wn[n] = math.Pow(3/float64(n), 0.75)
		sn += wn[n]
	}
	for d := 2; d <= 5; d++ {
		want := 0.6*wd[d]/sd + 0.4/4
		if got := dc[d] / draws; math.Abs(got-want) > 0.005 {
			t.Errorf("P(d=%d) = %.4f, want %.4f", d, got, want)
		}
	}
	for n := 3; n <= 6; n++ {
		want := 0.6*wn[n]/sn + 0.4/4
		if got := nc[n] / draws; math.Abs(got-want) > 0.005 {
			t.Errorf("P(N=%d) = %.4f, want %.4f", n, got, want)
		}
	}
	// Defaults: support 1..16 × 1..256; fixed sizes override.
	for i := 0; i < 1000; i++ {
		d, n := SampleDN(rng, SimOptions{})
		if d < 1 || d > 16 || n < 1 || n > 256 {
			t.Fatalf("default support violated: (%d,%d)", d, n)
		}
		d, n = SampleDN(rng, SimOptions{D: 40, N: 3})
		if d != 40 || n != 3 {
			t.Fatalf("fixed sizes not honoured: (%d,%d)", d, n)
		}
	}
}

// TestSimulatePriorMoments checks the mean and variance of the simulated
// prior parameters and of z against values derived from the facts sheet.
func TestSimulatePriorMoments(t *testing.T) {
	const tasks = 4000
	const d = 3
	// E[σ²] for log σ ~ U(a,b) is (e^{2b}−e^{2a})/(2(b−a)).
	eS2 := func(a, b float64) float64 { return (math.Exp(2*b) - math.Exp(2*a)) / (2 * (b - a)) }
	tests := []struct {
		prior   string
		varZ    float64 // Var(z_i) marginal over μ and the scales
		meanLog float64 // E[log scale], if a diagonal prior
	}{
		{DiagGaussianFamily, 0.45*0.45 + eS2(-0.8, 0), -0.4},
		{DiagLaplaceFamily, 0.45*0.45 + 2*eS2(-1, -0.05), -0.525},
		{FullRankGaussianFamily, math.NaN(), math.NaN()},
		{DiagStudentTFamily, math.NaN(), -0.35},
	}
	for _, tc := range tests {
		rng := newRNG(3)
		var sumZ, sumZ2, sumLog, sumMu2 float64
		var cnt, cntLog float64
		for i := 0; i < tasks; i++ {
			task, err := Simulate(rng, SimOptions{D: d, N: 1, Prior: tc.prior})
			if err != nil {
				t.Fatal(err)
			}
			if task.Prior.Family() != tc.prior {
				t.Fatalf("prior %s, want %s", task.Prior.Family(), tc.prior)
			}
			for j, z := range task.TrueZ {
				sumZ += z
				sumZ2 += z * z
				mu := task.Prior.Location()[j]
				sumMu2 += mu * mu
				cnt++
			}
			for _, s := range simulatedScales(t, task.Prior, d) {
				sumLog += math.Log(s)
				cntLog++
			}
		}
		meanZ := sumZ / cnt
		if math.Abs(meanZ) > 0.04 {
			t.Errorf("%s: mean z %.4f, want 0", tc.prior, meanZ)
		}
		if v := sumMu2 / cnt; math.Abs(v-0.2025) > 0.015 {
			t.Errorf("%s: E[μ²] = %.4f, want 0.2025", tc.prior, v)
		}
		if !math.IsNaN(tc.varZ) {
			if v := sumZ2 / cnt; math.Abs(v-tc.varZ)/tc.varZ > 0.05 {
				t.Errorf("%s: Var z = %.4f, want %.4f", tc.prior, v, tc.varZ)
			}
		}
		if !math.IsNaN(tc.meanLog) {
			if m := sumLog / cntLog; math.Abs(m-tc.meanLog) > 0.01 {
				t.Errorf("%s: E[log scale] = %.4f, want %.4f", tc.prior, m, tc.meanLog)
			}
		}
	}
}

// TestFullRankPriorCovariance checks z from the fullrank prior has
// covariance Λ⁻¹ for one fixed prior (drawn once from the simulator).
func TestFullRankPriorCovariance(t *testing.T) {
	task, _ := Simulate(newRNG(4), SimOptions{D: 3, N: 1, Prior: FullRankGaussianFamily})
	p := task.Prior.(*FullRankGaussian)
	const s = 100000
	rng := newRNG(5)
	z := make([]float64, 3)
	var cov [9]float64
	for i := 0; i < s; i++ {
		p.Rand(rng, z)
		for a := 0; a < 3; a++ {
			for b := 0; b < 3; b++ {
				cov[a*3+b] += (z[a] - p.Loc[a]) * (z[b] - p.Loc[b]) / s
			}
		}
	}
	// cov·Λ should be the identity.
	for a := 0; a < 3; a++ {
		for b := 0; b < 3; b++ {
			var v float64
			for k := 0; k < 3; k++ {
				v += cov[a*3+k] * p.Precision[k*3+b]
			}
			want := 0.0
			if a == b {
				want = 1
			}
			if math.Abs(v-want) > 0.02 {
				t.Errorf("(Cov·Λ)[%d][%d] = %.4f, want %g", a, b, v, want)
			}
		}
	}
}

// TestSimulateDesignScale checks E‖x‖² = 0.81 for every design family and
// that spectra sum to d.
func TestSimulateDesignScale(t *testing.T) {
	for _, fam := range DesignFamilies {
		for _, d := range []int{1, 5} {
			rng := newRNG(6)
			var sum float64
			var rows int
			for i := 0; i < 400; i++ {
				task, err := Simulate(rng, SimOptions{D: d, N: 50, Design: fam, Likelihoods: []string{LinGaussianFamily}})
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range task.Factors {
					x := f.Covariate()
					sum += dot(x, x)
					rows++
				}
			}
			if m := sum / float64(rows); math.Abs(m-0.81) > 0.03 {
				t.Errorf("%s d=%d: E‖x‖² = %.4f, want 0.81", fam, d, m)
			}
		}
	}
	rng := newRNG(7)
	for i := 0; i < 200; i++ {
		d := 1 + rng.IntN(20)
		kmax := []float64{1, 40, 1000}[i%3]
		lam := designSpectrum(rng, d, kmax)
		var s, lo, hi float64 = 0, math.Inf(1), 0
		for _, l := range lam {
			s += l
			lo = math.Min(lo, l)
			hi = math.Max(hi, l)
		}
		if math.Abs(s-float64(d)) > 1e-9*float64(d) {
			t.Fatalf("spectrum sums to %g, want %d", s, d)
		}
		if hi/lo > kmax*(1+1e-9) {
			t.Fatalf("spectrum condition %g exceeds κ_max %g", hi/lo, kmax)
		}
	}
}

// TestHaarOrthogonal checks QᵀQ = I and that the distribution is
// rotation invariant in the first moment sense: E[Q_11²] = 1/d.
func TestHaarOrthogonal(t *testing.T) {
	rng := newRNG(8)
	for _, d := range []int{2, 7, 40} {
		var q11 float64
		const reps = 2000
		for r := 0; r < reps; r++ {
			q, err := haarOrthogonal(simRun{ctx: context.Background()}, rng, d)
			if err != nil {
				t.Fatal(err)
			}
			q11 += q[0] * q[0] / reps
			if r > 5 {
				continue
			}
			for a := 0; a < d; a++ {
				for b := 0; b < d; b++ {
					var v float64
					for k := 0; k < d; k++ {
						v += q[k*d+a] * q[k*d+b]
					}
					want := 0.0
					if a == b {
						want = 1
					}
					if math.Abs(v-want) > 1e-12 {
						t.Fatalf("d=%d: (QᵀQ)[%d][%d] = %g", d, a, b, v)
					}
				}
			}
		}
		if math.Abs(q11-1/float64(d)) > 4*math.Sqrt(2/float64(d*d)/reps)+0.01 {
			t.Errorf("d=%d: E[Q11²] = %.4f, want %.4f", d, q11, 1/float64(d))
		}
	}
}

// TestSimulateSiteFamilies checks homogeneous/heterogeneous proportions,
// the k distribution, explicit family lists and observation ranges.
func TestSimulateSiteFamilies(t *testing.T) {
	rng := newRNG(9)
	const tasks = 6000
	var homog float64
	var kCount [6]float64
	for i := 0; i < tasks; i++ {
		task, err := Simulate(rng, SimOptions{D: 2, N: 12})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, f := range task.Factors {
			seen[f.Family()] = true
			checkObservation(t, task.D, f)
		}
		if len(seen) == 1 {
			homog++
		} else {
			kCount[len(seen)]++
		}
	}
	if p := homog / tasks; math.Abs(p-0.5) > 0.025 {
		t.Errorf("homogeneous share %.3f, want 0.5", p)
	}
	// Heterogeneous k ∝ exp(−(k−2)) over 2..5, each type present.
	var z float64
	for k := 2; k <= 5; k++ {
		z += math.Exp(-float64(k - 2))
	}
	het := tasks - homog
	for k := 2; k <= 5; k++ {
		want := math.Exp(-float64(k-2)) / z
		if got := kCount[k] / het; math.Abs(got-want) > 0.025 {
			t.Errorf("P(k=%d) = %.3f, want %.3f", k, got, want)
		}
	}

	// An explicit list: every listed family appears when N allows, none other.
	list := []string{BinomialLogitFamily, GaussianFamily, LinStudentTFamily}
	for i := 0; i < 200; i++ {
		task, _ := Simulate(rng, SimOptions{D: 3, N: 5, Likelihoods: list})
		seen := map[string]int{}
		for _, f := range task.Factors {
			seen[f.Family()]++
			checkObservation(t, task.D, f)
		}
		if len(seen) != 3 {
			t.Fatalf("explicit list %v gave families %v", list, seen)
		}
	}
	// N smaller than the list: N distinct listed families.
	task, _ := Simulate(rng, SimOptions{D: 3, N: 2, Likelihoods: list})
	if a, b := task.Factors[0].Family(), task.Factors[1].Family(); a == b || !slices.Contains(list, a) || !slices.Contains(list, b) {
		t.Errorf("N=2 from a 3-family list gave %s, %s", a, b)
	}
	// N = 1 is homogeneous.
	for i := 0; i < 50; i++ {
		task, _ := Simulate(rng, SimOptions{D: 3, N: 1})
		if task.N() != 1 {
			t.Fatalf("N=%d, want 1", task.N())
		}
	}
}

func checkObservation(t *testing.T, d int, f Likelihood) {
	t.Helper()
	switch f := f.(type) {
	case *Gaussian:
		if len(f.Y) != d || f.Sigma < math.Exp(-0.8) || f.Sigma > math.Exp(-0.05) {
			t.Fatalf("gaussian factor: len(y)=%d sigma=%g", len(f.Y), f.Sigma)
		}
	case *LinGaussian:
		if f.Sigma < math.Exp(-0.8) || f.Sigma > math.Exp(-0.05) {
			t.Fatalf("lin_gaussian sigma %g out of range", f.Sigma)
		}
	case *BernoulliLogit:
		if f.Y != 0 && f.Y != 1 {
			t.Fatalf("bernoulli y = %g", f.Y)
		}
	case *BinomialLogit:
		if f.Trials < 2 || f.Trials > 8 || f.Y < 0 || f.Y > float64(f.Trials) || f.Y != math.Trunc(f.Y) {
			t.Fatalf("binomial y=%g trials=%d", f.Y, f.Trials)
		}
	case *LinStudentT:
		if f.Sigma < math.Exp(-0.7) || f.Sigma > 1 || f.DF < 3.5 || f.DF > 8 {
			t.Fatalf("lin_student_t sigma=%g df=%g", f.Sigma, f.DF)
		}
	}
}

// TestSimulateObservationMeans checks y given z: the binomial mean is
// n_c·sigmoid(xᵀz), the Bernoulli mean sigmoid(xᵀz), and linear Gaussian
// residuals have variance σ².
func TestSimulateObservationMeans(t *testing.T) {
	rng := newRNG(10)
	var binRes, bernRes, linStd, vecStd float64
	var nb, nbe, nl, nv float64
	for i := 0; i < 300; i++ {
		task, _ := Simulate(rng, SimOptions{D: 4, N: 60, Likelihoods: []string{BinomialLogitFamily, BernoulliLogitFamily, LinGaussianFamily, GaussianFamily}})
		z := task.TrueZ
		for _, f := range task.Factors {
			switch f := f.(type) {
			case *BinomialLogit:
				binRes += f.Y - float64(f.Trials)*Sigmoid(dot(f.X, z))
				nb++
			case *BernoulliLogit:
				bernRes += f.Y - Sigmoid(dot(f.X, z))
				nbe++
			case *LinGaussian:
				r := (f.Y - dot(f.X, z)) / f.Sigma
				linStd += r * r
				nl++
			case *Gaussian:
				for j, y := range f.Y {
					r := (y - z[j]) / f.Sigma
					vecStd += r * r
					nv++
				}
			}
		}
	}
	if m := binRes / nb; math.Abs(m) > 0.05 {
		t.Errorf("binomial mean residual %.4f", m)
	}
	if m := bernRes / nbe; math.Abs(m) > 0.02 {
		t.Errorf("bernoulli mean residual %.4f", m)
	}
	if v := linStd / nl; math.Abs(v-1) > 0.05 {
		t.Errorf("lin_gaussian standardised residual variance %.4f", v)
	}
	if v := vecStd / nv; math.Abs(v-1) > 0.03 {
		t.Errorf("gaussian standardised residual variance %.4f", v)
	}
}

func BenchmarkSimulate(b *testing.B) {
	rng := newRNG(1)
	o := SimOptions{D: 8, N: 64}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Simulate(rng, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

func TestSimulateBatch(t *testing.T) {
	rng := newRNG(13)
	for i := 0; i < 20; i++ {
		tasks, err := SimulateBatch(rng, SimOptions{}, 8)
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) != 8 {
			t.Fatalf("%d tasks, want 8", len(tasks))
		}
		for _, task := range tasks {
			if task.D != tasks[0].D || task.N() != tasks[0].N() {
				t.Fatalf("batch mixes sizes (%d,%d) and (%d,%d)", task.D, task.N(), tasks[0].D, tasks[0].N())
			}
		}
		if tasks[0] == tasks[1] || reflect.DeepEqual(tasks[0].TrueZ, tasks[1].TrueZ) {
			t.Fatal("batch tasks are not independent")
		}
	}
	if _, err := SimulateBatch(rng, SimOptions{}, -1); err == nil {
		t.Error("negative batch size accepted")
	}
}

// simulatedScales returns the scales of a diagonal simulated prior (none
// for a full-rank one) after checking the family's own ranges: Student-t
// df in [3, 8], and a full-rank precision Λ = MMᵀ/d + 0.5 I, whose
// smallest eigenvalue, hence every diagonal entry, is ≥ 0.5.
func simulatedScales(t *testing.T, prior Prior, d int) []float64 {
	t.Helper()
	switch p := prior.(type) {
	case *DiagGaussian:
		return p.Scale
	case *DiagLaplace:
		return p.Scale
	case *DiagStudentT:
		if p.DF < 3 || p.DF > 8 {
			t.Fatalf("student-t prior df %g outside [3,8]", p.DF)
		}
		return p.Scale
	case *FullRankGaussian:
		for k := 0; k < d; k++ {
			if p.Precision[k*d+k] < 0.5 {
				t.Fatalf("fullrank precision diagonal %g < 0.5", p.Precision[k*d+k])
			}
		}
	}
	return nil
}

// TestDesignRowSpaceLaw compares designRowSpace with the Haar
// construction it replaces above simFastMinD, x = base·Q diag(√λ) ε, on a
// small d where both run: moments of one row (E x₀², E x₀x₁), of the
// Gram matrix (E (x₁·x₂)²) and of two rows through their shared rotation
// (E x₁₀²x₂₀², which differs between rows that share Q and rows that do
// not), each within 5 Monte Carlo standard errors.
func TestDesignRowSpaceLaw(t *testing.T) {
	const d, rows, reps = 5, 3, 40000
	lambda := []float64{0.2, 0.4, 0.8, 1.2, 2.4}
	base := simBaseScale / math.Sqrt(d)
	r := simRun{ctx: context.Background()}
	stats := func(x []float64) []float64 {
		x1, x2 := x[:d], x[d:2*d]
		g := dot(x1, x2)
		return []float64{x1[0] * x1[0], x1[0] * x1[1], g * g, x1[0] * x1[0] * x2[0] * x2[0]}
	}
	haar := func(rng *rand.Rand) []float64 {
		q, err := haarOrthogonal(r, rng, d)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, rows*d)
		eps := make([]float64, d)
		for row := 0; row < rows; row++ {
			for j := range eps {
				eps[j] = base * math.Sqrt(lambda[j]) * rng.NormFloat64()
			}
			for i := 0; i < d; i++ {
				x[row*d+i] = dot(q[i*d:(i+1)*d], eps)
			}
		}
		return x
	}
	fast := func(rng *rand.Rand) []float64 {
		x, err := designRowSpace(r, rng, make([]float64, rows*d), base, lambda, 0)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	moments := func(draw func(*rand.Rand) []float64, seed uint64) (mean, se []float64) {
		rng := newRNG(seed)
		var sum, sq [4]float64
		for range reps {
			for k, v := range stats(draw(rng)) {
				sum[k] += v
				sq[k] += v * v
			}
		}
		for k := range sum {
			m := sum[k] / reps
			mean = append(mean, m)
			se = append(se, math.Sqrt((sq[k]/reps-m*m)/reps))
		}
		return mean, se
	}
	hm, hse := moments(haar, 21)
	fm, fse := moments(fast, 22)
	for k, name := range []string{"E x₀²", "E x₀x₁", "E (x₁·x₂)²", "E x₁₀²x₂₀²"} {
		if z := math.Abs(hm[k]-fm[k]) / math.Hypot(hse[k], fse[k]); z > 5 {
			t.Errorf("%s: Haar %.4g ± %.2g, row space %.4g ± %.2g (%.1f SE apart)", name, hm[k], hse[k], fm[k], fse[k], z)
		}
	}
	// Rows that share one rotation are dependent: E x₁₀²x₂₀² exceeds
	// (E x₀²)², which is what a test of the law must be able to see.
	if hm[3] < hm[0]*hm[0]+5*hse[3] {
		t.Fatalf("E x₁₀²x₂₀² = %.4g is not above (E x₀²)² = %.4g: the statistic cannot tell shared rotations", hm[3], hm[0]*hm[0])
	}
}

// TestSimulateCancel cancels the simulator from inside its long stages
// (the Haar rotation and design rows at d ≤ simFastMinD, the row-space
// design and a full-rank prior above) at every look at the context and
// checks it returns context.Canceled with no further look (no further
// row or column of work).
func TestSimulateCancel(t *testing.T) {
	for _, o := range []SimOptions{
		{D: 40, N: 30, Prior: DiagGaussianFamily, Likelihoods: []string{LinGaussianFamily}, Design: DesignCorrelated},
		{D: 40, N: 30, Prior: DiagGaussianFamily, Likelihoods: []string{LinGaussianFamily}, Design: DesignStudentT},
		{D: simFastMinD + 20, N: 12, Prior: DiagGaussianFamily, Likelihoods: []string{LinGaussianFamily}, Design: DesignCorrelated},
		{D: simFastMinD + 20, N: 2, Prior: FullRankGaussianFamily, Likelihoods: []string{LinGaussianFamily}, Design: DesignIID},
	} {
		whole := countctx.CancelAt(0)
		if _, err := SimulateContext(whole, newRNG(5), o, nil); err != nil {
			t.Fatal(err)
		}
		looks := whole.Calls()
		whole.Stop()
		if looks < int64(o.N) {
			t.Fatalf("%+v: %d looks at the context, want one per row or column (≥ %d)", o, looks, o.N)
		}
		for at := int64(1); at <= looks; at += 1 + looks/50 {
			ctx := countctx.CancelAt(at)
			_, err := SimulateContext(ctx, newRNG(5), o, nil)
			ctx.Stop()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%+v: cancel at look %d of %d: err %v, want context.Canceled", o, at, looks, err)
			}
			if ctx.After() != 0 {
				t.Errorf("%+v: cancel at look %d of %d: %d more looks after it", o, at, looks, ctx.After())
			}
		}
	}
}
