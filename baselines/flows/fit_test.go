package flows

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
	"gonum.org/v1/gonum/mat"
)

// conjugateTask is a Bayesian linear regression with a diagonal Gaussian
// prior; its exact posterior and evidence come from gaussianPosterior.
func conjugateTask(d, n int, seed uint64) *factor.Task {
	rng := rand.New(rand.NewPCG(seed, 99))
	loc, scale := make([]float64, d), make([]float64, d)
	for i := range loc {
		loc[i], scale[i] = 0.5*rng.NormFloat64(), 0.5+rng.Float64()
	}
	t := &factor.Task{D: d, Prior: &factor.DiagGaussian{Loc: loc, Scale: scale}}
	ztrue := make([]float64, d)
	for i := range ztrue {
		ztrue[i] = loc[i] + scale[i]*rng.NormFloat64()
	}
	for range n {
		x := make([]float64, d)
		var mu float64
		for i := range x {
			x[i] = rng.NormFloat64()
			mu += x[i] * ztrue[i]
		}
		const sigma = 0.8
		t.Factors = append(t.Factors, &factor.LinGaussian{X: x, Y: mu + sigma*rng.NormFloat64(), Sigma: sigma})
	}
	return t
}

// gaussianPosterior is the closed-form posterior of a conjugate task
// (diagonal Gaussian prior, lin_gaussian factors) and its log evidence
// log p(y) = log p(z, y) − log p(z | y) at the posterior mean; written here
// from the normal equations, independent of the code under test.
func gaussianPosterior(t *factor.Task) (mean, cov []float64, logEvidence float64) {
	d := t.D
	pr := t.Prior.(*factor.DiagGaussian)
	prec := mat.NewSymDense(d, nil)
	b := mat.NewVecDense(d, nil)
	for i := range d {
		prec.SetSym(i, i, 1/(pr.Scale[i]*pr.Scale[i]))
		b.SetVec(i, pr.Loc[i]/(pr.Scale[i]*pr.Scale[i]))
	}
	for _, f := range t.Factors {
		lg := f.(*factor.LinGaussian)
		w := 1 / (lg.Sigma * lg.Sigma)
		for i := range d {
			b.SetVec(i, b.AtVec(i)+w*lg.X[i]*lg.Y)
			for j := i; j < d; j++ {
				prec.SetSym(i, j, prec.At(i, j)+w*lg.X[i]*lg.X[j])
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		panic("posterior precision not SPD")
	}
	var m mat.VecDense
	if err := ch.SolveVecTo(&m, b); err != nil {
		panic(err)
	}
	var c mat.SymDense
	if err := ch.InverseTo(&c); err != nil {
		panic(err)
	}
	mean = make([]float64, d)
	cov = make([]float64, d*d)
	for i := range d {
		mean[i] = m.AtVec(i)
		for j := range d {
			cov[i*d+j] = c.At(i, j)
		}
	}
	// log N(mean; mean, cov) = −d/2 log 2π + ½ log det(prec).
	logPost := -0.5*float64(d)*math.Log(2*math.Pi) + 0.5*ch.LogDet()
	return mean, cov, t.LogJoint(mean) - logPost
}

func TestConjugateELBOReachesEvidence(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: fits every flow kind to the evidence by optimisation")
	}
	task := conjugateTask(3, 20, 1)
	mean, cov, logZ := gaussianPosterior(task)
	for _, kind := range Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			res, err := Fit(context.Background(), task, kind, Options{
				Arch:    Arch{Layers: 2, Hidden: 16},
				Budgets: []int{3000},
				LRs:     []float64{3e-3, 1e-2},
				Seed:    5,
			})
			if err != nil {
				t.Fatal(err)
			}
			q := res.Final()
			rng := rand.New(rand.NewPCG(11, 0))
			elbo := vi.ELBO(task, q, rng, 20000) + task.LogNormalizer()
			t.Logf("lr %g: ELBO %.4f, log evidence %.4f", q.LR, elbo, logZ)
			if math.Abs(elbo-logZ) > 0.05 {
				t.Errorf("ELBO %.4f is %.3f nats from the log evidence %.4f", elbo, logZ-elbo, logZ)
			}
			dr, _ := vi.Draw(q, rng, 20000)
			m1 := dist(dr.Mean(), mean)
			m2 := dist(dr.Cov(), cov)
			t.Logf("‖mean − exact‖ = %.4f, ‖cov − exact‖_F = %.4f (exact sd %.3f)", m1, m2, math.Sqrt(cov[0]))
			if m1 > 0.02 || m2 > 0.01 {
				t.Errorf("moments off: ‖Δmean‖ = %.4f, ‖Δcov‖_F = %.4f", m1, m2)
			}
		})
	}
}

func dist(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// skewTask is a d = 2 logistic regression whose four observations are
// all successes: the data are separable, so the posterior has a hard
// prior-bounded wall on one side and a long tail on the other, a shape no
// Gaussian matches.
func skewTask() *factor.Task {
	t := &factor.Task{D: 2, Prior: &factor.DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{3, 3}}}
	for _, x := range [][]float64{{1, 0.5}, {0.8, -0.3}, {1.2, 0.1}, {0.5, 0.9}} {
		t.Factors = append(t.Factors, &factor.BernoulliLogit{X: x, Y: 1})
	}
	return t
}

// studentTTask is a d = 2 posterior with a Student-t prior (ν = 3) and two
// conflicting Student-t observations of z₁: its z₁ marginal is bimodal with
// heavy tails, which a Gaussian cannot follow.
func studentTTask() *factor.Task {
	t := &factor.Task{D: 2, Prior: &factor.DiagStudentT{Loc: []float64{0, 0}, Scale: []float64{1.5, 1}, DF: 3}}
	for _, y := range []float64{2.5, -2.5} {
		t.Factors = append(t.Factors, &factor.LinStudentT{X: []float64{1, 0.2}, Y: y, Sigma: 0.4, DF: 3})
	}
	return t
}

func TestFlowsBeatFRVIOnNonGaussianPosteriors(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: NUTS references and three sweeps per task")
	}
	for _, c := range []struct {
		name string
		task *factor.Task
	}{
		{"skewed_logistic", skewTask()},
		{"student_t", studentTTask()},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			task := c.task
			ref, err := nuts.Sample(ctx, task, 2, nuts.Config{Warmup: 1000, Draws: 10000, Chains: 4, Seed: 1, Init: []float64{0, 0}})
			if err != nil {
				t.Fatal(err)
			}
			rd := ref.Draws()
			// The same protocol for both: three rates, ELBO selection from
			// 2048 draws (the ELBO differences between rates are ~0.01 nats).
			budgets := []int{10000}
			lrs := vi.LRGrid(3, 1e-4, 1e-2)
			sw, err := vi.Sweep(ctx, lrs, budgets, vi.FRVIFit(task, vi.FRVIConfig{Budgets: budgets, Seed: 1}), vi.SelectELBO, vi.NegELBOScore(task, 2048, 1))
			if err != nil {
				t.Fatal(err)
			}
			fd, _ := vi.Draw(sw.Best[0].Q, rand.New(rand.NewPCG(2, 2)), 20000)
			frvi := posterior.SW2(fd, rd, 3)
			t.Logf("frvi: lr %g, SW2 %.4f", sw.Best[0].LR, frvi)
			for _, kind := range Kinds() {
				res, err := Fit(ctx, task, kind, Options{Arch: Arch{Hidden: 16}, Budgets: budgets, LRs: lrs, ScoreDraws: 2048, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				qd, _ := vi.Draw(res.Final(), rand.New(rand.NewPCG(2, 2)), 20000)
				sw2 := posterior.SW2(qd, rd, 3)
				t.Logf("%s: lr %g, SW2 %.4f (%.1f s)", kind, res.Final().LR, sw2, res.Seconds)
				if !(sw2 < 0.6*frvi) {
					t.Errorf("%s: SW2 %.4f does not beat FRVI's %.4f by 40%%", kind, sw2, frvi)
				}
			}
		})
	}
}

func TestFitOptionsAndFailures(t *testing.T) {
	task := conjugateTask(2, 5, 3)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		opt  Options
		want string
	}{
		{"budgets", Options{Budgets: []int{10, 5}}, "strictly increasing"},
		{"lr", Options{LRs: []float64{-1}}, "learning rate"},
		{"mc", Options{MCSamples: -2}, "MC samples"},
		{"arch", Options{Arch: Arch{Bins: 1}}, "bins"},
		{"selection", Options{Selection: "best"}, "selection"},
		{"oracle without score", Options{Selection: vi.SelectOracle}, "Score"},
		{"all diverge", Options{Budgets: []int{200}, LRs: []float64{1e6}}, "no learning rate produced a usable fit"},
	} {
		_, err := Fit(ctx, task, IAF, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	if _, err := Fit(ctx, task, Kind("realnvp"), Options{}); err == nil {
		t.Error("unknown kind accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Fit(cctx, task, MAF, Options{Budgets: []int{1000}, LRs: []float64{1e-3}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v", err)
	}
}

func TestFitSkipsDivergedRateAndIsReproducible(t *testing.T) {
	task := conjugateTask(2, 5, 3)
	opt := Options{Budgets: []int{100, 300}, LRs: []float64{1e6, 1e-2}, Seed: 9, Arch: Arch{Layers: 2, Hidden: 8}}
	var firsts [][]float64
	for range 2 {
		res, err := Fit(context.Background(), task, NSF, opt)
		if err != nil {
			t.Fatal(err)
		}
		if res.Sweep.Failures[0] == nil || !errors.Is(res.Sweep.Failures[0], vi.ErrDiverged) {
			t.Fatalf("lr 1e6 did not diverge: %v", res.Sweep.Failures)
		}
		if len(res.Best) != 2 || res.Final().LR != 1e-2 || res.Final().Steps != 300 || res.Best[0].Steps != 100 {
			t.Fatalf("best snapshots: %+v", res.Best)
		}
		if !(res.Final().Seconds >= res.Best[0].Seconds) {
			t.Errorf("snapshot seconds not increasing: %g then %g", res.Best[0].Seconds, res.Final().Seconds)
		}
		firsts = append(firsts, slices.Clone(res.Final().Params()))
	}
	if !slices.Equal(firsts[0], firsts[1]) {
		t.Error("two fits with the same seed differ")
	}
}

// A flow snapshot is a vi.Approx, which has LogQ: its convergence check
// weights it against the defensive mixture (q's draws and as many
// Student-t draws, 8000 weights in all).
func TestFitConvergenceIsDefensive(t *testing.T) {
	task := conjugateTask(2, 5, 3)
	for _, kind := range Kinds() {
		res, err := Fit(context.Background(), task, kind, Options{Budgets: []int{100}, LRs: []float64{1e-2}, Seed: 9, Arch: Arch{Layers: 2, Hidden: 8}})
		if err != nil {
			t.Fatal(err)
		}
		c := res.FinalConvergence()
		if c.DefensiveDraws != 8000 || math.IsNaN(c.ParetoK) {
			t.Errorf("%s: the convergence check weighted %d draws (k̂ %.3g), want the defensive 8000", kind, c.DefensiveDraws, c.ParetoK)
		}
	}
}
