package flows

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/factor"
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
		t.Skip("optimisation test")
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
