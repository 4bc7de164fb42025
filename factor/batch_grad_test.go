package factor

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/afin-bench/afin/internal/f64vec"
)

// gradTol is the batched gradient's bound against the scalar path's, as
// a fraction of 1 + the coordinate's summed term sizes (the value's
// bound, packedClose): the sites' weights differ by a few ulps (exp from
// f64vec's polynomial, σ by one division instead of a reciprocal and a
// product), and the sums run in another order.
const gradTol = 1e-12

// gradScales is termScales' gradient scale plus, for a full-rank prior,
// Σⱼ|Λᵢⱼrⱼ| per coordinate, the terms the batched path sums in another
// order than quadForm.
func gradScales(task *Task, z []float64) []float64 {
	_, gs := termScales(task, z)
	if fr, ok := task.Prior.(*FullRankGaussian); ok {
		d := task.D
		for i := range d {
			for j := range d {
				gs[i] += math.Abs(fr.Precision[i*d+j] * (z[j] - fr.Loc[j]))
			}
		}
	}
	return gs
}

// gradWorst is the largest |batched − scalar| / (1 + term scale) a
// checkGrad call has seen, for the log.
type gradWorst struct{ value, grad float64 }

// checkGrad holds LogDensityGrad at each row of zs (row-major) to the
// scalar path: value and gradient within the bounds where the scalar
// value is finite, bitwise equal where it is not (the fallback); and its
// value to LogDensity's and LogDensities' bit for bit.
func checkGrad(t *testing.T, name string, task *Task, zs []float64, worst *gradWorst) {
	t.Helper()
	p, d := task.Packed(), task.D
	rows := len(zs) / d
	batch := make([]float64, rows)
	if err := p.LogDensities(zs, batch); err != nil {
		t.Fatal(err)
	}
	gb, gs := make([]float64, d), make([]float64, d)
	for s := range rows {
		z := zs[s*d : (s+1)*d]
		for i := range gb {
			gb[i] = math.NaN() // LogDensityGrad must overwrite, not add
		}
		vb := p.LogDensityGrad(z, gb)
		if v := p.LogDensity(z); math.Float64bits(v) != math.Float64bits(vb) || math.Float64bits(batch[s]) != math.Float64bits(vb) {
			t.Fatalf("%s row %d: LogDensityGrad %.17g, LogDensity %.17g, LogDensities %.17g", name, s, vb, v, batch[s])
		}
		vs := p.scalarValueGrad(z, gs)
		if !finiteAll(vs, z) || !finiteAll(vb, nil) {
			if math.Float64bits(vb) != math.Float64bits(vs) || !sameBits(gb, gs) {
				t.Fatalf("%s row %d: %v %v, scalar path %v %v", name, s, vb, gb, vs, gs)
			}
			continue
		}
		if sc := batchScale(task, z); !packedClose(vb, vs, sc) {
			t.Fatalf("%s row %d: value %.17g, scalar path %.17g (term scale %.3g)", name, s, vb, vs, sc)
		} else if worst != nil {
			worst.value = math.Max(worst.value, math.Abs(vb-vs)/(1+sc))
		}
		sg := gradScales(task, z)
		for i := range gb {
			if gb[i] == gs[i] {
				continue
			}
			e := math.Abs(gb[i]-gs[i]) / (1 + sg[i])
			if !(e <= gradTol) {
				t.Fatalf("%s row %d: grad[%d] %.17g, scalar path %.17g (term scale %.3g)", name, s, i, gb[i], gs[i], sg[i])
			}
			if worst != nil {
				worst.grad = math.Max(worst.grad, e)
			}
		}
	}
}

func sameBits(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestLogDensityGradMatchesScalar: every prior × family mix, d from 1 to
// 16 and N from 0 to 1000, points from 0.01 to 1e4 in scale and the true
// z, on every f64vec kernel.
func TestLogDensityGradMatchesScalar(t *testing.T) {
	rng := newRNG(301)
	eachVecKernel(t, func(t *testing.T) {
		var worst gradWorst
		eachPackedCase(t, rng, func(t *testing.T, name string, task *Task, zs []float64) {
			checkGrad(t, name, task, zs, &worst)
		})
		t.Logf("largest difference from the scalar path, over 1 + term scale: value %.3g, gradient %.3g", worst.value, worst.grad)
	})
}

// TestLogDensityGradEdges: TestLogDensitiesEdges' points and tasks
// (η of ±1e3, ±40, ±0, trials 1–70 and 1000, overflowing residuals,
// NaN and infinite coordinates) for the gradient.
func TestLogDensityGradEdges(t *testing.T) {
	const d = 2
	var fs []Likelihood
	for n := 1; n <= 70; n++ {
		fs = append(fs, &BinomialLogit{X: []float64{1, 0}, Y: float64(n / 3), Trials: n})
		fs = append(fs, &BernoulliLogit{X: []float64{0, -1}, Y: float64(n % 2)})
	}
	fs = append(fs, &BinomialLogit{X: []float64{1, 1}, Y: 400, Trials: 1000})
	stud := []Likelihood{
		&LinStudentT{X: []float64{1, 0}, Y: 1e100, Sigma: 1, DF: 3},
		&LinStudentT{X: []float64{0, 1}, Y: 1e70, Sigma: 1, DF: 3},
		&LinStudentT{X: []float64{1, 1}, Y: 0.5, Sigma: 0.1, DF: 5},
	}
	etas := []float64{1e3, -1e3, 40, -40, 0, math.Copysign(0, -1), 1e-300, 745.5}
	var zs []float64
	for _, a := range etas {
		for _, b := range etas {
			zs = append(zs, a, b)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		zs = append(zs, v, 0.5, 0.5, v, v, v)
	}
	over := append(stud[2:], &LinStudentT{X: []float64{1, 0}, Y: 1e200, Sigma: 1, DF: 4})
	// A finite value (−5e307) whose gradient (1e150·1e159) is not: the
	// gradient alone comes from the scalar path, +Inf there too.
	steep := []Likelihood{&LinGaussian{X: []float64{1e150, 0}, Y: 1e149, Sigma: 1e-5}}
	for _, prior := range allPriors {
		pt := simTask(t, newRNG(302), d, 0, prior, nil).Prior
		eachVecKernel(t, func(t *testing.T) {
			checkGrad(t, prior+" logistic", &Task{D: d, Prior: pt, Factors: fs}, zs, nil)
			checkGrad(t, prior+" student", &Task{D: d, Prior: pt, Factors: stud}, zs, nil)
			checkGrad(t, prior+" overflow", &Task{D: d, Prior: pt, Factors: over}, []float64{0.5, 0.5}, nil)
			steepTask := &Task{D: d, Prior: pt, Factors: steep}
			checkGrad(t, prior+" steep", steepTask, []float64{0, 0}, nil)
			g := make([]float64, d)
			if v := steepTask.Packed().LogDensityGrad([]float64{0, 0}, g); math.IsInf(v, 0) || !math.IsInf(g[0], 1) {
				t.Fatalf("%s steep: value %v, gradient %v; want finite and +Inf", prior, v, g)
			}
		})
	}
}

// TestLogDensityGradFiniteDifference holds the batched gradient to
// central differences of LogDensity (the batched value), for every prior
// × family mix, on every kernel.
func TestLogDensityGradFiniteDifference(t *testing.T) {
	rng := newRNG(303)
	eachVecKernel(t, func(t *testing.T) {
		for _, d := range []int{1, 3, 8} {
			for _, n := range []int{1, 16, 64} {
				for _, prior := range allPriors {
					for _, lik := range packedMixes {
						if n < len(lik) {
							continue
						}
						task := simTask(t, rng, d, n, prior, lik)
						p := task.Packed()
						for _, z := range [][]float64{task.TrueZ, randVec(rng, d, 1)} {
							g := make([]float64, d)
							p.LogDensityGrad(z, g)
							fd := fdGrad(p.LogDensity, z)
							// A Laplace prior has a kink at its location: a
							// coordinate within the differences' reach of it
							// is not compared.
							if lp, ok := task.Prior.(*DiagLaplace); ok {
								for i, m := range lp.Loc {
									if math.Abs(z[i]-m) < 3e-4*math.Max(1, math.Abs(z[i])) {
										g[i], fd[i] = 0, 0
									}
								}
							}
							if e := relErr(g, fd); e > 1e-6 {
								t.Fatalf("d=%d n=%d %s %v: grad %v, finite differences %v, rel err %.2g", d, n, prior, lik, g, fd, e)
							}
						}
					}
				}
			}
		}
	})
}

// TestLogDensityGradConcurrent: goroutines sharing one Packed, as NUTS's
// chains and the flows' runs do, get each point's sequential value and
// gradient bit for bit (run under -race, this also checks that they
// share no scratch).
func TestLogDensityGradConcurrent(t *testing.T) {
	rng := newRNG(304)
	for _, prior := range allPriors {
		task := simTask(t, rng, 5, 256, prior, []string{BernoulliLogitFamily, BinomialLogitFamily, LinStudentTFamily, LinGaussianFamily})
		p := task.Packed()
		const points, workers = 64, 8
		zs := make([][]float64, points)
		want := make([][]float64, points)
		for k := range zs {
			zs[k] = randVec(rng, task.D, 1)
			want[k] = make([]float64, task.D+1)
			want[k][task.D] = p.LogDensityGrad(zs[k], want[k][:task.D])
		}
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g := make([]float64, task.D)
				for rep := range 20 {
					k := (w*7 + rep*13) % points
					v := p.LogDensityGrad(zs[k], g)
					if v != want[k][task.D] || !sameBits(g, want[k][:task.D]) || p.LogDensity(zs[k]) != v {
						errs[w] = fmt.Errorf("%s worker %d point %d: %v %v, sequential %v", prior, w, k, v, g, want[k])
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestLogDensityGradKernelsAgree: without Student-t sites (whose sums
// take VRCPPS's reciprocal on AVX2) every f64vec kernel gives the same
// value and gradient bits.
func TestLogDensityGradKernelsAgree(t *testing.T) {
	rng := newRNG(305)
	task := simTask(t, rng, 4, 256, DiagGaussianFamily, []string{BernoulliLogitFamily, BinomialLogitFamily, LinGaussianFamily})
	p := task.Packed()
	z := randVec(rng, 4, 1)
	var first []float64
	eachVecKernel(t, func(t *testing.T) {
		g := make([]float64, 5)
		g[4] = p.LogDensityGrad(z, g[:4])
		if first == nil {
			first = g
		} else if !sameBits(g, first) {
			t.Fatalf("%v, first kernel %v", g, first)
		}
	})
	if len(f64vec.Kernels()) < 2 {
		t.Logf("one kernel on this CPU (%s): nothing to compare", f64vec.Kernel())
	}
}
