package factor

import (
	"errors"
	"math"
	"testing"

	"github.com/afin-bench/afin/posterior"
	"gonum.org/v1/gonum/stat/distuv"
)

// gridMoments integrates exp(log p̃) on a regular grid (d = 1 or 2) around
// center with half-width w and n points per axis, returning mean and
// row-major covariance. The integrand is smooth and decays like a
// Gaussian, so the plain Riemann sum is spectrally accurate.
func gridMoments(task *Task, center []float64, w float64, n int) ([]float64, []float64) {
	d := task.D
	h := 2 * w / float64(n-1)
	pts := make([][]float64, 0)
	lps := make([]float64, 0)
	z := make([]float64, d)
	var rec func(k int)
	rec = func(k int) {
		if k == d {
			pts = append(pts, append([]float64(nil), z...))
			lps = append(lps, task.LogDensity(z))
			return
		}
		for i := 0; i < n; i++ {
			z[k] = center[k] - w + float64(i)*h
			rec(k + 1)
		}
	}
	rec(0)
	mx := math.Inf(-1)
	for _, v := range lps {
		mx = math.Max(mx, v)
	}
	mean := make([]float64, d)
	second := make([]float64, d*d)
	var tot float64
	for k, p := range pts {
		wgt := math.Exp(lps[k] - mx)
		tot += wgt
		for i := 0; i < d; i++ {
			mean[i] += wgt * p[i]
			for j := 0; j < d; j++ {
				second[i*d+j] += wgt * p[i] * p[j]
			}
		}
	}
	for i := range mean {
		mean[i] /= tot
	}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			second[i*d+j] = second[i*d+j]/tot - mean[i]*mean[j]
		}
	}
	return mean, second
}

func TestExactVsNumericalIntegration(t *testing.T) {
	rng := newRNG(40)
	type tcase struct {
		name string
		task *Task
	}
	var cases []tcase
	for _, d := range []int{1, 2} {
		for _, prior := range []string{DiagGaussianFamily, FullRankGaussianFamily} {
			for _, n := range []int{1, 6} {
				task, err := Simulate(rng, SimOptions{D: d, N: n, Prior: prior, Likelihoods: []string{LinGaussianFamily, GaussianFamily}, Design: DesignCorrelated})
				if err != nil {
					t.Fatal(err)
				}
				cases = append(cases, tcase{prior + "/" + string(rune('0'+d)) + "d", task})
			}
		}
	}
	// A hand-made prior-only case and a strongly correlated one.
	p, _ := NewFullRankGaussian([]float64{0.3, -0.2}, []float64{2, 1.6, 1.6, 1.5})
	cases = append(cases, tcase{"prior only", &Task{D: 2, Prior: p}})
	cases = append(cases, tcase{"correlated data", &Task{D: 2, Prior: &DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{2, 0.5}},
		Factors: []Likelihood{&LinGaussian{X: []float64{1, 0.95}, Y: 1.2, Sigma: 0.3}, &Gaussian{Y: []float64{0.4, -0.1}, Sigma: 1.5}}}})
	for _, tc := range cases {
		mean, cov, err := ExactPosterior(tc.task)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		d := tc.task.D
		// The grid spans ±15 marginal sd around the closed-form mean. Only
		// its extent comes from the answer under test: a wrong mean puts
		// the mass off-centre and a too-small covariance truncates it,
		// and either shows up in the grid moments.
		w := 0.0
		for i := 0; i < d; i++ {
			w = math.Max(w, 15*math.Sqrt(cov[i*d+i]))
		}
		n := 4001
		if d == 2 {
			n = 401
		}
		gm, gc := gridMoments(tc.task, mean, w, n)
		for i := 0; i < d; i++ {
			if math.Abs(gm[i]-mean[i]) > 1e-6*(1+math.Abs(mean[i])) {
				t.Errorf("%s: mean[%d] exact %.10g, grid %.10g", tc.name, i, mean[i], gm[i])
			}
			for j := 0; j < d; j++ {
				if math.Abs(gc[i*d+j]-cov[i*d+j]) > 1e-6*(1+math.Abs(cov[i*d+j])) {
					t.Errorf("%s: cov[%d][%d] exact %.10g, grid %.10g", tc.name, i, j, cov[i*d+j], gc[i*d+j])
				}
			}
		}
	}
}

func TestIsConjugate(t *testing.T) {
	lap := &DiagLaplace{Loc: []float64{0}, Scale: []float64{1}}
	gau := &DiagGaussian{Loc: []float64{0}, Scale: []float64{1}}
	tests := []struct {
		name string
		task *Task
		want bool
	}{
		{"gaussian prior only", &Task{D: 1, Prior: gau}, true},
		{"lin and vector gaussian", &Task{D: 1, Prior: gau, Factors: []Likelihood{&LinGaussian{X: []float64{1}, Sigma: 1}, &Gaussian{Y: []float64{0}, Sigma: 1}}}, true},
		{"laplace prior", &Task{D: 1, Prior: lap}, false},
		{"student-t factor", &Task{D: 1, Prior: gau, Factors: []Likelihood{&LinStudentT{X: []float64{1}, Sigma: 1, DF: 3}}}, false},
		{"bernoulli factor", &Task{D: 1, Prior: gau, Factors: []Likelihood{&BernoulliLogit{X: []float64{1}}}}, false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		if got := IsConjugate(tc.task); got != tc.want {
			t.Errorf("%s: IsConjugate = %v, want %v", tc.name, got, tc.want)
		}
		if !tc.want && tc.task != nil {
			if _, _, err := ExactPosterior(tc.task); !errors.Is(err, ErrNotConjugate) {
				t.Errorf("%s: ExactPosterior error %v, want ErrNotConjugate", tc.name, err)
			}
		}
	}
}

// sbcRanks simulates conjugate tasks and returns, per task, the rank of the
// true z's squared Mahalanobis distance among those of l draws from the
// posterior; covScale ≠ 1 distorts the posterior as a negative control.
func sbcRanks(t *testing.T, tasks, l int, covScale float64) []int {
	rng := newRNG(50)
	ranks := make([]int, tasks)
	for k := range ranks {
		o := SimOptions{DMax: 5, NMax: 30, Prior: []string{DiagGaussianFamily, FullRankGaussianFamily}[k%2]}
		switch k % 3 {
		case 0:
			o.Likelihoods = []string{LinGaussianFamily}
		case 1:
			o.Likelihoods = []string{GaussianFamily}
		default:
			o.Likelihoods = []string{LinGaussianFamily, GaussianFamily}
		}
		task, err := Simulate(rng, o)
		if err != nil {
			t.Fatal(err)
		}
		mean, cov, err := ExactPosterior(task)
		if err != nil {
			t.Fatal(err)
		}
		for i := range cov {
			cov[i] *= covScale
		}
		d := task.D
		l2, _ := posterior.Cholesky(cov, d, 0)
		maha := func(z []float64) float64 {
			// Solve L u = z − mean; the distance is ‖u‖².
			u := make([]float64, d)
			var s float64
			for i := 0; i < d; i++ {
				v := z[i] - mean[i]
				for j := 0; j < i; j++ {
					v -= l2[i*d+j] * u[j]
				}
				u[i] = v / l2[i*d+i]
				s += u[i] * u[i]
			}
			return s
		}
		draws, err := GaussianDraws(rng, mean, cov, l)
		if err != nil {
			t.Fatal(err)
		}
		m0 := maha(task.TrueZ)
		for s := 0; s < l; s++ {
			if maha(draws[s*d:(s+1)*d]) < m0 {
				ranks[k]++
			}
		}
	}
	return ranks
}

func chiSquareUniform(ranks []int, bins int) float64 {
	counts := make([]float64, bins)
	for _, r := range ranks {
		counts[r]++
	}
	exp := float64(len(ranks)) / float64(bins)
	var x2 float64
	for _, c := range counts {
		x2 += (c - exp) * (c - exp) / exp
	}
	return x2
}

// TestSBCExactPosterior is a small simulation-based calibration check: the
// simulator's z is a posterior draw, so its rank among exact posterior
// draws is uniform. A posterior with covariance shrunk by 0.8 must fail the
// same test (χ² ≈ 128 against a 0.999 critical value of 43.8).
func TestSBCExactPosterior(t *testing.T) {
	const tasks, l = 1200, 19
	crit := distuv.ChiSquared{K: l}.Quantile(0.999)
	if x2 := chiSquareUniform(sbcRanks(t, tasks, l, 1), l+1); x2 > crit {
		t.Errorf("SBC ranks not uniform: χ² = %.1f > %.1f", x2, crit)
	}
	if x2 := chiSquareUniform(sbcRanks(t, tasks, l, 0.8), l+1); x2 <= crit {
		t.Errorf("negative control passed: χ² = %.1f ≤ %.1f with a too-narrow posterior", x2, crit)
	}
}

func TestGaussianDraws(t *testing.T) {
	mean := []float64{1, -2}
	cov := []float64{2, 0.6, 0.6, 0.5}
	z, err := GaussianDraws(newRNG(60), mean, cov, 200000)
	if err != nil {
		t.Fatal(err)
	}
	var m [2]float64
	var c [4]float64
	n := float64(len(z) / 2)
	for s := 0; s < len(z)/2; s++ {
		m[0] += z[2*s] / n
		m[1] += z[2*s+1] / n
	}
	for s := 0; s < len(z)/2; s++ {
		a, b := z[2*s]-m[0], z[2*s+1]-m[1]
		c[0] += a * a / n
		c[1] += a * b / n
		c[3] += b * b / n
	}
	if math.Abs(m[0]-1) > 0.01 || math.Abs(m[1]+2) > 0.01 || math.Abs(c[0]-2) > 0.03 || math.Abs(c[1]-0.6) > 0.01 || math.Abs(c[3]-0.5) > 0.01 {
		t.Errorf("moments %v %v", m, c)
	}
	if _, err := GaussianDraws(newRNG(1), mean, []float64{1, 2, 2, 1}, 1); err == nil {
		t.Error("non-PD covariance accepted")
	}
}
