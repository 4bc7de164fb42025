package nuts

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/factor/factortest"
)

// closedForm is the exact posterior of a task with a Gaussian prior and
// only lin_gaussian / gaussian factors, computed here independently of
// factor.ExactPosterior: Λ = Λ₀ + Σ xxᵀ/σ² (+ I/σ²), m = Λ⁻¹(Λ₀μ₀ + Σ xy/σ² (+ y/σ²)).
func closedForm(t *testing.T, task *factor.Task) (mean, cov []float64) {
	t.Helper()
	d := task.D
	prec := mat.NewSymDense(d, nil)
	b := make([]float64, d)
	switch p := task.Prior.(type) {
	case *factor.DiagGaussian:
		for i := range p.Loc {
			v := 1 / (p.Scale[i] * p.Scale[i])
			prec.SetSym(i, i, v)
			b[i] = p.Loc[i] * v
		}
	case *factor.FullRankGaussian:
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				prec.SetSym(i, j, p.Precision[i*d+j])
			}
			for j := 0; j < d; j++ {
				b[i] += p.Precision[i*d+j] * p.Loc[j]
			}
		}
	default:
		t.Fatalf("closedForm: prior %s is not Gaussian", p.Family())
	}
	for _, f := range task.Factors {
		switch f := f.(type) {
		case *factor.LinGaussian:
			s2 := f.Sigma * f.Sigma
			for i := 0; i < d; i++ {
				for j := i; j < d; j++ {
					prec.SetSym(i, j, prec.At(i, j)+f.X[i]*f.X[j]/s2)
				}
				b[i] += f.X[i] * f.Y / s2
			}
		case *factor.Gaussian:
			s2 := f.Sigma * f.Sigma
			for i := 0; i < d; i++ {
				prec.SetSym(i, i, prec.At(i, i)+1/s2)
				b[i] += f.Y[i] / s2
			}
		default:
			t.Fatalf("closedForm: factor %s is not conjugate", f.Family())
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		t.Fatal("closedForm: posterior precision not SPD")
	}
	var c mat.SymDense
	if err := ch.InverseTo(&c); err != nil {
		t.Fatal(err)
	}
	mean = make([]float64, d)
	cov = make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			cov[i*d+j] = c.At(i, j)
			mean[i] += c.At(i, j) * b[j]
		}
	}
	return mean, cov
}

// gridMoments integrates exp(log p̃) over a 2-D (or 1-D) grid: a coarse
// pass over a wide box locates the mass, a fine pass over ±12 sd of it
// gives mean and covariance with negligible quadrature error.
func gridMoments(task *factor.Task) (mean, cov []float64) {
	d := task.D
	lo := make([]float64, d)
	hi := make([]float64, d)
	for i := range lo {
		lo[i], hi[i] = -20, 20
	}
	m, c := gridPass(task, lo, hi, 400)
	for i := range lo {
		s := math.Sqrt(c[i*d+i])
		lo[i], hi[i] = m[i]-12*s, m[i]+12*s
	}
	n := 600
	if d == 1 {
		n = 20000
	}
	return gridPass(task, lo, hi, n)
}

func gridPass(task *factor.Task, lo, hi []float64, n int) (mean, cov []float64) {
	d := task.D
	h := make([]float64, d)
	for i := range h {
		h[i] = (hi[i] - lo[i]) / float64(n)
	}
	total := 1
	for range d {
		total *= n
	}
	lps := make([]float64, total)
	pts := make([]float64, total*d)
	maxLP := math.Inf(-1)
	for k := 0; k < total; k++ {
		r := k
		z := pts[k*d : (k+1)*d]
		for i := 0; i < d; i++ {
			z[i] = lo[i] + (float64(r%n)+0.5)*h[i]
			r /= n
		}
		lps[k] = task.LogDensity(z)
		maxLP = math.Max(maxLP, lps[k])
	}
	mean = make([]float64, d)
	cov = make([]float64, d*d)
	var wsum float64
	for k, lp := range lps {
		w := math.Exp(lp - maxLP)
		wsum += w
		for i, v := range pts[k*d : (k+1)*d] {
			mean[i] += w * v
		}
	}
	for i := range mean {
		mean[i] /= wsum
	}
	for k, lp := range lps {
		w := math.Exp(lp-maxLP) / wsum
		z := pts[k*d : (k+1)*d]
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				cov[i*d+j] += w * (z[i] - mean[i]) * (z[j] - mean[j])
			}
		}
	}
	return mean, cov
}

// mcse returns the Monte Carlo standard errors of the posterior mean of
// every coordinate and of every covariance entry, from the ESS of the
// corresponding scalar chains (posterior.ESS).
func mcse(chains [][]float64, d int, mean []float64) (seMean, seCov []float64) {
	seMean = make([]float64, d)
	seCov = make([]float64, d*d)
	cols := make([][]float64, len(chains))
	stat := func(f func(z []float64) float64) float64 {
		var all []float64
		for k, ch := range chains {
			n := len(ch) / d
			cols[k] = make([]float64, n)
			for s := 0; s < n; s++ {
				cols[k][s] = f(ch[s*d : (s+1)*d])
			}
			all = append(all, cols[k]...)
		}
		var m, v float64
		for _, x := range all {
			m += x
		}
		m /= float64(len(all))
		for _, x := range all {
			v += (x - m) * (x - m)
		}
		v /= float64(len(all) - 1)
		return math.Sqrt(v / essOf(cols))
	}
	for i := 0; i < d; i++ {
		seMean[i] = stat(func(z []float64) float64 { return z[i] })
		for j := 0; j <= i; j++ {
			se := stat(func(z []float64) float64 { return (z[i] - mean[i]) * (z[j] - mean[j]) })
			seCov[i*d+j], seCov[j*d+i] = se, se
		}
	}
	return seMean, seCov
}

func simulate(t *testing.T, seed uint64, prior, lik string, d, n int) *factor.Task {
	return factortest.Simulate(t, seed, 7, prior, lik, d, n)
}

func l2(a, b []float64) float64 { return factortest.L2(a, b) }

func norm(a []float64) float64 {
	var s float64
	for _, v := range a {
		s += v * v
	}
	return math.Sqrt(s)
}
