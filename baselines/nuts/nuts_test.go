package nuts

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/moments"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
)

func essOf(cols [][]float64) float64 { return posterior.ESS(cols) }

func sampleTask(t *testing.T, task *factor.Task, cfg Config) *Result {
	t.Helper()
	cfg.Init = task.Prior.Location()
	res, err := Sample(context.Background(), task, task.D, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkMoments compares the pooled draws with a truth: M1 and M2 must be
// within 4 Monte Carlo standard errors (the norms of the per-entry
// standard errors, from the ESS) plus tol for quadrature error.
func checkMoments(t *testing.T, res *Result, mean, cov []float64, tol float64) {
	t.Helper()
	d := res.D
	dr := res.Draws()
	gotM, gotC := dr.Mean(), dr.Cov()
	seM, seC := mcse(res.Chains, d, gotM)
	m1 := l2(gotM, mean)
	m2 := l2(gotC, cov)
	if lim := 4*norm(seM) + tol; m1 > lim {
		t.Errorf("M1 = %.3g exceeds 4 MCSE + tol = %.3g (mean %v, want %v)", m1, lim, gotM, mean)
	}
	if lim := 4*norm(seC) + tol; m2 > lim {
		t.Errorf("M2 = %.3g exceeds 4 MCSE + tol = %.3g", m2, lim)
	}
	t.Logf("M1 %.3g (MCSE %.3g)  M2 %.3g (MCSE %.3g)  ESS_bulk %.0f  R̂ %.4f  acc %.3f  eps %.3g  depth %.2f  grads %d",
		m1, norm(seM), m2, norm(seC), res.Convergence.MinESSBulk, res.Convergence.MaxRhat, res.AcceptRate, res.StepSize, res.MeanDepth, res.GradEvals)
}

func checkHealthy(t *testing.T, res *Result) {
	t.Helper()
	if res.Divergences != 0 {
		t.Errorf("%d divergences", res.Divergences)
	}
	if r := res.Convergence.MaxRhat; !(r < 1.01) {
		t.Errorf("max R̂ = %.4f, want < 1.01", r)
	}
	if a := res.AcceptRate; a < 0.6 || a > 0.99 {
		t.Errorf("acceptance %.3f far from the 0.8 target", a)
	}
}

func TestConjugateMatchesExact(t *testing.T) {
	cases := []struct {
		prior, lik string
		d, n       int
		dense      bool
	}{
		{factor.DiagGaussianFamily, factor.LinGaussianFamily, 1, 1, false},
		{factor.DiagGaussianFamily, factor.GaussianFamily, 4, 64, false},
		{factor.FullRankGaussianFamily, factor.LinGaussianFamily, 4, 256, false},
		{factor.FullRankGaussianFamily, factor.LinGaussianFamily, 16, 1, false},
		{factor.DiagGaussianFamily, factor.LinGaussianFamily, 16, 256, false},
		{factor.FullRankGaussianFamily, factor.GaussianFamily, 16, 64, true},
		{factor.FullRankGaussianFamily, factor.LinGaussianFamily, 4, 64, true},
	}
	if testing.Short() {
		cases = cases[:3]
	}
	for i, c := range cases {
		name := strings.Join([]string{c.prior, c.lik}, "/")
		t.Run(name, func(t *testing.T) {
			task := simulate(t, uint64(100+i), c.prior, c.lik, c.d, c.n)
			mean, cov := closedForm(t, task)
			res := sampleTask(t, task, Config{Warmup: 1000, Draws: 5000, Chains: 4, Seed: uint64(i), Dense: c.dense})
			checkHealthy(t, res)
			checkMoments(t, res, mean, cov, 0)
		})
	}
}

func TestNonConjugateMatchesQuadrature(t *testing.T) {
	cases := []struct {
		prior, lik string
		d, n       int
	}{
		{factor.DiagGaussianFamily, factor.BernoulliLogitFamily, 2, 64},
		{factor.DiagLaplaceFamily, factor.BinomialLogitFamily, 2, 16},
		{factor.DiagStudentTFamily, factor.LinStudentTFamily, 2, 8},
		{factor.DiagLaplaceFamily, factor.LinStudentTFamily, 1, 4},
		{factor.DiagStudentTFamily, factor.BernoulliLogitFamily, 1, 16},
	}
	if testing.Short() {
		cases = cases[:2]
	}
	for i, c := range cases {
		t.Run(c.prior+"/"+c.lik, func(t *testing.T) {
			task := simulate(t, uint64(200+i), c.prior, c.lik, c.d, c.n)
			mean, cov := gridMoments(task)
			res := sampleTask(t, task, Config{Warmup: 1000, Draws: 5000, Chains: 4, Seed: uint64(i)})
			checkHealthy(t, res)
			checkMoments(t, res, mean, cov, 1e-6)
		})
	}
}

func TestReproducibleAndIndependentChains(t *testing.T) {
	task := simulate(t, 1, factor.DiagGaussianFamily, factor.BernoulliLogitFamily, 3, 20)
	cfg := Config{Warmup: 200, Draws: 200, Chains: 2, Seed: 42}
	a := sampleTask(t, task, cfg)
	b := sampleTask(t, task, cfg)
	for c := range a.Chains {
		for k := range a.Chains[c] {
			if a.Chains[c][k] != b.Chains[c][k] {
				t.Fatalf("chain %d draw %d differs between identical runs", c, k)
			}
		}
	}
	if a.Chains[0][len(a.Chains[0])-1] == a.Chains[1][len(a.Chains[1])-1] {
		t.Error("chains 0 and 1 ended at the same point: streams are not independent")
	}
	cfg.Seed = 43
	c := sampleTask(t, task, cfg)
	if c.Chains[0][0] == a.Chains[0][0] {
		t.Error("a different seed gave the same first draw")
	}
}

func TestTransitionAllocatesNothing(t *testing.T) {
	for _, dense := range []bool{false, true} {
		task := simulate(t, 3, factor.DiagGaussianFamily, factor.BinomialLogitFamily, 5, 30)
		c := newChain(context.Background(), task.D, task, nil, newMetric(task.D, dense), 10, 1000)
		c.rng = streams.New(1, 1)
		c.setPosition(task.Prior.Location())
		c.eps = 0.1
		allocs := testing.AllocsPerRun(50, func() { c.transition() })
		if allocs != 0 {
			t.Errorf("dense=%v: %.1f allocations per transition, want 0", dense, allocs)
		}
	}
}

func TestWindowSchedule(t *testing.T) {
	cases := []struct {
		warmup int
		ends   []int
	}{
		// Stan's documented schedule for 1000 warm-up iterations.
		{1000, []int{99, 149, 249, 449, 949}},
		// Too short for 75/25/50: 15% / 75% / 10%.
		{100, []int{89}},
		{10, nil},
	}
	for _, c := range cases {
		w := newWindows(c.warmup)
		var ends []int
		for it := 0; it < c.warmup; it++ {
			if w.atWindowEnd() {
				ends = append(ends, it)
				w.advance()
			}
			w.counter++
		}
		if len(ends) != len(c.ends) {
			t.Fatalf("warmup %d: window ends %v, want %v", c.warmup, ends, c.ends)
		}
		for i := range ends {
			if ends[i] != c.ends[i] {
				t.Fatalf("warmup %d: window ends %v, want %v", c.warmup, ends, c.ends)
			}
		}
	}
}

func TestWelfordMatchesTwoPass(t *testing.T) {
	rng := streams.New(5, 5)
	d, n := 3, 500
	z := make([]float64, n*d)
	for i := range z {
		z[i] = rng.NormFloat64() * float64(1+i%d)
	}
	w := moments.NewWelford(d, true)
	for s := 0; s < n; s++ {
		w.Add(z[s*d : (s+1)*d])
	}
	got := make([]float64, d*d)
	regularised(w, got)
	want := (&posterior.Draws{D: d, Z: z}).Cov()
	a := float64(n) / float64(n+5)
	for i := range want {
		v := a * want[i]
		if i%(d+1) == 0 {
			v += 1e-3 * 5 / float64(n+5)
		}
		if math.Abs(got[i]-v) > 1e-9*math.Max(1, math.Abs(v)) {
			t.Fatalf("entry %d: Welford %g, two-pass %g", i, got[i], v)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	task := simulate(t, 1, factor.DiagGaussianFamily, factor.LinGaussianFamily, 2, 3)
	ctx := context.Background()
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Draws: 10, Init: []float64{0}}, "init has length"},
		{Config{Draws: 0, Init: []float64{0, 0}}, "draws must be"},
		{Config{Draws: 10, Init: []float64{0, 0}, TargetAccept: 1.5}, "target acceptance"},
		{Config{Draws: 10, Init: []float64{math.NaN(), 0}}, "initial point"},
	}
	for _, c := range cases {
		_, err := Sample(ctx, task, 2, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("config %+v: error %v, want one containing %q", c.cfg, err, c.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := Sample(cctx, task, 2, Config{Warmup: 500, Draws: 500, Init: []float64{0, 0}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v, want context.Canceled", err)
	}
}

func TestStreamingAndJitter(t *testing.T) {
	task := simulate(t, 9, factor.DiagStudentTFamily, factor.LinStudentTFamily, 2, 10)
	var counts [3]int
	res, err := Sample(context.Background(), task, task.D, Config{
		Warmup: 100, Draws: 150, Chains: 3, Seed: 1, Init: task.Prior.Location(), Jitter: 1,
		Discard: true, OnDraw: func(c int, z []float64) { counts[c]++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chains[0] != nil || res.Convergence.Rhat != nil {
		t.Error("Discard should keep no draws and compute no diagnostics")
	}
	for c, n := range counts {
		if n != 150 {
			t.Errorf("chain %d streamed %d draws, want 150", c, n)
		}
	}
	if _, err := Sample(context.Background(), task, task.D, Config{Draws: 10, Init: task.Prior.Location(), Jitter: -1}); err == nil {
		t.Error("negative jitter accepted")
	}
}

// TestFailedChainsOneLine checks that chains failing alike give one line
// (the first chain's error and a count), not one line per chain.
func TestFailedChainsOneLine(t *testing.T) {
	tests := []struct {
		name   string
		chains int
		want   string
	}{
		{"one chain", 1, "nuts: chain 0: step size search collapsed to 0"},
		{"four chains", 4, "(and 3 more chains failed)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A Laplace prior of scale 1e-300: every step overshoots.
			task := &factor.Task{D: 2, Prior: &factor.DiagLaplace{Loc: []float64{0, 0}, Scale: []float64{1e-300, 1e-300}}}
			_, err := Sample(context.Background(), task, 2, Config{Warmup: 10, Draws: 10, Chains: tc.chains, Init: []float64{0, 0}})
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q: want one line containing %q", msg, tc.want)
			}
			if tc.chains == 1 && strings.Contains(msg, "more chains") {
				t.Errorf("error %q counts other chains of a one-chain run", msg)
			}
		})
	}
	// A cancelled run still reports the cancellation through the wrapping
	// (chains look at the context every 64 iterations).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	task := &factor.Task{D: 1, Prior: &factor.DiagGaussian{Loc: []float64{0}, Scale: []float64{1}}}
	if _, err := Sample(ctx, task, 1, Config{Warmup: 100, Draws: 100, Chains: 3, Init: []float64{0}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: err = %v, want context.Canceled", err)
	}
}
