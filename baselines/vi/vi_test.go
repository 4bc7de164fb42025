package vi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/factor/factortest"
)

func simTask(t *testing.T, seed uint64, prior, lik string, d, n int) *factor.Task {
	return factortest.Simulate(t, seed, 5, prior, lik, d, n)
}

func l2(a, b []float64) float64 { return factortest.L2(a, b) }

func TestOptimizeSnapshotsAverageIterates(t *testing.T) {
	// Record every iterate, then check each budget's snapshot is the mean
	// of the iterates in its trailing 20% window.
	var iterates [][]float64
	params := []float64{1, 2}
	grad := func(step int, p, g []float64) (float64, error) {
		g[0], g[1] = math.Sin(float64(step)), p[1]-1
		return p[1] * p[1], nil
	}
	var got [][]float64
	var budgets []int
	snap := func(b int, p []float64) error {
		got = append(got, append([]float64(nil), p...))
		budgets = append(budgets, b)
		return nil
	}
	rec := func(step int, p, g []float64) (float64, error) {
		if step > 0 {
			iterates = append(iterates, append([]float64(nil), p...))
		}
		return grad(step, p, g)
	}
	if err := Optimize(context.Background(), params, LoopConfig{LR: 0.01, Budgets: []int{10, 50}}, rec, snap); err != nil {
		t.Fatal(err)
	}
	iterates = append(iterates, append([]float64(nil), params...))
	if len(budgets) != 2 || budgets[0] != 10 || budgets[1] != 50 {
		t.Fatalf("snapshots at %v, want [10 50]", budgets)
	}
	for k, b := range []int{10, 50} {
		lo := b - int(0.2*float64(b)) // iterates lo+1..b, 1-based
		for i := 0; i < 2; i++ {
			var m float64
			for s := lo; s < b; s++ {
				m += iterates[s][i]
			}
			m /= float64(b - lo)
			if math.Abs(got[k][i]-m) > 1e-12 {
				t.Errorf("budget %d coord %d: snapshot %g, mean of window %g", b, i, got[k][i], m)
			}
		}
	}
}

func TestOptimizeErrors(t *testing.T) {
	ok := func(step int, p, g []float64) (float64, error) { g[0] = 1; return 0, nil }
	nop := func(int, []float64) error { return nil }
	ctx := context.Background()
	for _, cfg := range []LoopConfig{{LR: 0.1}, {LR: 0.1, Budgets: []int{5, 5}}, {LR: 0, Budgets: []int{5}}, {LR: math.NaN(), Budgets: []int{5}}} {
		if err := Optimize(ctx, []float64{0}, cfg, ok, nop); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	var snaps int
	blowUp := func(step int, p, g []float64) (float64, error) {
		g[0] = 1
		if step == 7 {
			return math.Inf(1), nil
		}
		return 0, nil
	}
	err := Optimize(ctx, []float64{0}, LoopConfig{LR: 0.1, Budgets: []int{5, 10}}, blowUp, func(int, []float64) error { snaps++; return nil })
	if !errors.Is(err, ErrDiverged) || snaps != 1 {
		t.Errorf("divergence at step 7: err %v after %d snapshots, want ErrDiverged after 1", err, snaps)
	}
}

func TestLRGrid(t *testing.T) {
	g := LRGrid(7, 1e-6, 1e-2)
	want := []float64{1e-6, 1e-2 / math.Pow(10, 4.0*5/6), 0, 0, 0, 0, 1e-2}
	if len(g) != 7 || math.Abs(g[0]-want[0]) > 1e-18 || math.Abs(g[6]-want[6]) > 1e-15 {
		t.Fatalf("grid %v", g)
	}
	for i := 1; i < 7; i++ {
		if r := g[i] / g[i-1]; math.Abs(r-math.Pow(10, 4.0/6)) > 1e-9 {
			t.Errorf("ratio %d: %g, want 10^(2/3)", i, r)
		}
	}
}

// TestFRVIGradient checks the hand-derived reparameterised gradient
// against central finite differences of the same objective, with the
// noise held fixed, on a non-Gaussian task.
func TestFRVIGradient(t *testing.T) {
	for _, prior := range []string{factor.DiagStudentTFamily, factor.FullRankGaussianFamily} {
		task := simTask(t, 3, prior, factor.BinomialLogitFamily, 3, 12)
		d, S := task.D, 4
		obj := newFRVIObjective(task.Packed(), frviParams{d: task.D}, S, true)
		rng := rand.New(rand.NewPCG(1, 2))
		theta := make([]float64, obj.pz.size())
		for i := range theta {
			theta[i] = 0.5 * rng.NormFloat64()
		}
		noise := make([]float64, S*d)
		for i := range noise {
			noise[i] = rng.NormFloat64()
		}
		grad := make([]float64, len(theta))
		obj.lossGrad(theta, grad, noise)
		scratch := make([]float64, len(theta))
		for i := range theta {
			h := 1e-6
			orig := theta[i]
			theta[i] = orig + h
			fp := obj.lossGrad(theta, scratch, noise)
			theta[i] = orig - h
			fm := obj.lossGrad(theta, scratch, noise)
			theta[i] = orig
			fd := (fp - fm) / (2 * h)
			if math.Abs(fd-grad[i]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s: ∂/∂θ[%d] analytic %.8g, finite difference %.8g", prior, i, grad[i], fd)
			}
		}
	}
}

// TestSTLGradient checks the sticking-the-landing estimator: it differs
// from the total gradient by a zero-mean term, and it is exactly zero at
// the optimum of a conjugate (Gaussian) posterior for any noise.
func TestSTLGradient(t *testing.T) {
	task := simTask(t, 4, factor.DiagLaplaceFamily, factor.BernoulliLogitFamily, 3, 10)
	d, S := task.D, 2
	stl, tot := newFRVIObjective(task.Packed(), frviParams{d: task.D}, S, false), newFRVIObjective(task.Packed(), frviParams{d: task.D}, S, true)
	rng := rand.New(rand.NewPCG(3, 4))
	theta := make([]float64, stl.pz.size())
	for i := range theta {
		theta[i] = 0.3 * rng.NormFloat64()
	}
	n := len(theta)
	ga, gb := make([]float64, n), make([]float64, n)
	sum, sumSq := make([]float64, n), make([]float64, n)
	noise := make([]float64, S*d)
	const reps = 20000
	for range reps {
		for i := range noise {
			noise[i] = rng.NormFloat64()
		}
		stl.lossGrad(theta, ga, noise)
		tot.lossGrad(theta, gb, noise)
		for i := range ga {
			v := ga[i] - gb[i]
			sum[i] += v
			sumSq[i] += v * v
		}
	}
	for i := range sum {
		m := sum[i] / reps
		se := math.Sqrt((sumSq[i]/reps - m*m) / reps)
		if math.Abs(m) > 5*se+1e-12 {
			t.Errorf("θ[%d]: mean STL − total gradient %.3g (se %.3g), want 0", i, m, se)
		}
	}

	conj := simTask(t, 5, factor.FullRankGaussianFamily, factor.LinGaussianFamily, 3, 8)
	mean, cov, err := factor.ExactPosterior(conj)
	if err != nil {
		t.Fatal(err)
	}
	o := newFRVIObjective(conj.Packed(), frviParams{d: conj.D}, S, false)
	th := choleskyParams(t, mean, cov)
	g := make([]float64, len(th))
	for range 5 {
		for i := range noise {
			noise[i] = rng.NormFloat64()
		}
		o.lossGrad(th, g, noise)
		for i, v := range g {
			if math.Abs(v) > 1e-9 {
				t.Fatalf("STL gradient at the exact posterior: θ[%d] = %g, want 0", i, v)
			}
		}
	}
}

// choleskyParams encodes N(mean, cov) in FRVI's parameterisation.
func choleskyParams(t *testing.T, mean, cov []float64) []float64 {
	d := len(mean)
	l := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			s := cov[i*d+j]
			for k := 0; k < j; k++ {
				s -= l[i*d+k] * l[j*d+k]
			}
			if i == j {
				l[i*d+i] = math.Sqrt(s)
			} else {
				l[i*d+j] = s / l[j*d+j]
			}
		}
	}
	pz := frviParams{d: d}
	th := make([]float64, pz.size())
	copy(th, mean)
	k := 0
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			th[2*d+k] = l[i*d+j]
			k++
		}
		th[d+i] = softplusInv(l[i*d+i])
	}
	q := &Gaussian{Mean: make([]float64, d), L: make([]float64, d*d)}
	pz.decode(th, q)
	if e := l2(q.Cov(), cov); e > 1e-12 {
		t.Fatalf("encoding round trip off by %g", e)
	}
	return th
}

func TestGaussianDensity(t *testing.T) {
	q := &Gaussian{Mean: []float64{1, -1, 0.5}, L: []float64{0.5, 0, 0, 0.3, 1.2, 0, -0.2, 0.1, 0.7}}
	rng := rand.New(rand.NewPCG(9, 9))
	z := make([]float64, 3)
	for range 20 {
		lq := q.Rand(rng, z)
		if lp := q.LogQ(z); math.Abs(lp-lq) > 1e-12 {
			t.Fatalf("Rand says log q = %g, LogProb says %g", lq, lp)
		}
	}
	dr, _ := Draw(q, rng, 200000)
	if e := l2(dr.Cov(), q.Cov()); e > 0.02 {
		t.Errorf("sample covariance off from LLᵀ by %g", e)
	}
	// Entropy equals −E[log q].
	var h float64
	for s := 0; s < 200000; s++ {
		h -= q.LogQ(dr.Row(s))
	}
	if math.Abs(h/200000-q.Entropy()) > 0.01 {
		t.Errorf("entropy %g, Monte Carlo %g", q.Entropy(), h/200000)
	}
}

// TestFRVIConvergesOnConjugate runs the paper's 7-rate sweep with ELBO
// selection; at 10k steps the chosen fit must match the exact posterior.
func TestFRVIConvergesOnConjugate(t *testing.T) {
	cases := []struct {
		prior, lik string
		d, n       int
	}{
		{factor.DiagGaussianFamily, factor.LinGaussianFamily, 4, 64},
		{factor.FullRankGaussianFamily, factor.GaussianFamily, 4, 1},
		{factor.FullRankGaussianFamily, factor.LinGaussianFamily, 16, 256},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for i, c := range cases {
		t.Run(c.prior+"/"+c.lik, func(t *testing.T) {
			task := simTask(t, uint64(10+i), c.prior, c.lik, c.d, c.n)
			mean, cov, err := factor.ExactPosterior(task)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Sweep(context.Background(), LRGrid(7, 1e-6, 1e-2), DefaultBudgets, FRVIFit(task, FRVIConfig{Seed: 1}), SelectELBO, NegELBOScore(task, 2000, 3))
			if err != nil {
				t.Fatal(err)
			}
			best := res.Best[len(res.Best)-1]
			q := best.Q.(*Gaussian)
			m1, m2 := l2(q.Mean, mean), l2(q.Cov(), cov)
			t.Logf("selected lr %.2g at %d steps: M1 %.2e M2 %.2e", best.LR, best.Budget, m1, m2)
			if m1 >= 1e-2 || m2 >= 1e-2 {
				t.Errorf("M1 %.3g, M2 %.3g at 10k steps, want both < 1e-2", m1, m2)
			}
			if res.Selection != SelectELBO {
				t.Errorf("selection label %q", res.Selection)
			}
		})
	}
}

func TestSweepSelection(t *testing.T) {
	mk := func(mu float64) Approx { return &Gaussian{Mean: []float64{mu}, L: []float64{1}} }
	fit := func(ctx context.Context, lr float64) ([]Approx, error) {
		if lr > 0.5 {
			// Diverges after the first budget.
			return []Approx{mk(100)}, ErrDiverged
		}
		return []Approx{mk(lr), mk(lr / 10)}, nil
	}
	score := func(_ context.Context, b int, q Approx) (float64, error) {
		return math.Abs(q.(*Gaussian).Mean[0] - 0.01), nil
	}
	res, err := Sweep(context.Background(), []float64{0.1, 0.01, 1}, []int{1, 2}, fit, SelectOracle, score)
	if err != nil {
		t.Fatal(err)
	}
	if res.Best[0].LR != 0.01 || res.Best[1].LR != 0.1 || res.Selection != SelectOracle {
		t.Errorf("best %v/%v, label %q; want lr 0.01 then 0.1, oracle", res.Best[0].LR, res.Best[1].LR, res.Selection)
	}
	if res.Failures[2] == nil || res.Runs[2][1].Q != nil {
		t.Error("the diverged rate should be recorded with no second snapshot")
	}
	if _, err := ParseSelection("best"); err == nil || !strings.Contains(err.Error(), "elbo") {
		t.Errorf("ParseSelection accepted a bad name: %v", err)
	}
	bad := func(ctx context.Context, lr float64) ([]Approx, error) { return nil, errors.New("boom") }
	if _, err := Sweep(context.Background(), []float64{1}, []int{1}, bad, SelectELBO, score); err == nil {
		t.Error("a failing fit should fail the sweep")
	}
}

// TestSweepAllDivergedOneLine checks that a sweep whose every rate diverges
// fails with one line naming the first failure and the count of the rest.
func TestSweepAllDivergedOneLine(t *testing.T) {
	fit := func(ctx context.Context, lr float64) ([]Approx, error) {
		return nil, fmt.Errorf("optimisation diverged at step 0 (learning rate %g): %w", lr, ErrDiverged)
	}
	score := func(context.Context, int, Approx) (float64, error) { return 0, nil }
	for _, tc := range []struct {
		lrs  []float64
		want string
	}{
		{[]float64{1}, "(optimisation diverged at step 0 (learning rate 1): optimisation diverged)"},
		{LRGrid(7, 1e-6, 1e-2), "(learning rate 1e-06): optimisation diverged (and 6 more rates failed))"},
	} {
		_, err := Sweep(context.Background(), tc.lrs, []int{10}, fit, SelectELBO, score)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d rates: error %q, want one line containing %q", len(tc.lrs), err, tc.want)
		}
	}
}
