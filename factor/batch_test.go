package factor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/afin-bench/afin/internal/f64vec"
)

// eachVecKernel runs f once per f64vec kernel this CPU has.
func eachVecKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	def := f64vec.Kernel()
	t.Cleanup(func() {
		if err := f64vec.Use(def); err != nil {
			t.Fatal(err)
		}
	})
	for _, k := range f64vec.Kernels() {
		if err := f64vec.Use(k); err != nil {
			t.Fatal(err)
		}
		t.Run(k, f)
	}
}

// batchScale is termScales' value scale plus, for a full-rank prior, the
// size of the terms of its quadratic form, ½Σ|rᵢΛᵢⱼrⱼ|, which the batched
// path sums in another order than quadForm.
func batchScale(task *Task, z []float64) float64 {
	s, _ := termScales(task, z)
	if fr, ok := task.Prior.(*FullRankGaussian); ok {
		d := task.D
		for i := range d {
			for j := range d {
				s += 0.5 * math.Abs((z[i]-fr.Loc[i])*fr.Precision[i*d+j]*(z[j]-fr.Loc[j]))
			}
		}
	}
	return s
}

// checkBatch compares LogDensities on the rows zs (row-major) with the
// scalar path row by row: equal when either is not finite, else within
// the packed bound.
func checkBatch(t *testing.T, name string, task *Task, zs []float64) {
	t.Helper()
	p := task.Packed()
	rows := len(zs) / task.D
	out := make([]float64, rows)
	if err := p.LogDensities(zs, out); err != nil {
		t.Fatal(err)
	}
	for s := range rows {
		z := zs[s*task.D : (s+1)*task.D]
		want := p.scalarValue(z)
		got := out[s]
		if math.IsNaN(want) || math.IsInf(want, 0) || math.IsNaN(got) || math.IsInf(got, 0) {
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%s row %d: %v, LogDensity %v", name, s, got, want)
			}
			continue
		}
		if sc := batchScale(task, z); !packedClose(got, want, sc) {
			t.Fatalf("%s row %d: %.17g, LogDensity %.17g (diff %.3g, term scale %.3g)", name, s, got, want, got-want, sc)
		}
	}
}

func TestLogDensitiesMatchesPacked(t *testing.T) {
	rng := newRNG(201)
	eachVecKernel(t, func(t *testing.T) {
		eachPackedCase(t, rng, checkBatch)
	})
}

// packedMixes are the family mixes the batched paths are checked on:
// each family alone, two mixes, and all five.
var packedMixes = [][]string{
	{BernoulliLogitFamily}, {BinomialLogitFamily}, {LinStudentTFamily}, {LinGaussianFamily}, {GaussianFamily},
	{BernoulliLogitFamily, LinStudentTFamily},
	{LinGaussianFamily, BernoulliLogitFamily, BinomialLogitFamily, LinStudentTFamily, GaussianFamily},
}

var allPriors = []string{DiagGaussianFamily, DiagLaplaceFamily, DiagStudentTFamily, FullRankGaussianFamily}

// eachPackedCase calls check on every prior × family mix, d from 1 to 16
// and N from 0 to 1000 (the largest N only at small d and on the
// single-family mixes), with points from 0.01 to 1e4 in scale and the
// true z.
func eachPackedCase(t *testing.T, rng *rand.Rand, check func(t *testing.T, name string, task *Task, zs []float64)) {
	for _, d := range []int{1, 2, 3, 4, 5, 8, 16} {
		for _, n := range []int{0, 1, 3, 64, 256, 1000} {
			for _, prior := range allPriors {
				for li, lik := range packedMixes {
					if n < len(lik) || (n == 1000 && (d > 5 || li%2 == 1)) {
						continue
					}
					task := simTask(t, rng, d, n, prior, lik)
					zs := make([]float64, 0, 12*d)
					for _, scale := range []float64{0.01, 1, 3, 30, 400, 1e4} {
						zs = append(zs, randVec(rng, d, scale)...)
						zs = append(zs, task.TrueZ...)
					}
					check(t, fmt.Sprintf("d=%d n=%d %s %v", d, n, prior, lik), task, zs)
				}
			}
		}
	}
}

// simTask simulates a task, or builds one with no likelihood for n = 0.
func simTask(t *testing.T, rng interface{ Uint64() uint64 }, d, n int, prior string, lik []string) *Task {
	t.Helper()
	r := newRNG(rng.Uint64())
	if n == 0 {
		task, err := Simulate(r, SimOptions{D: d, N: 1, Prior: prior, Likelihoods: lik})
		if err != nil {
			t.Fatal(err)
		}
		task.Factors = nil
		return task
	}
	task, err := Simulate(r, SimOptions{D: d, N: n, Prior: prior, Likelihoods: lik})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// TestLogDensitiesEdges: linear predictors of exactly ±1e3, ±40, 0 and
// −0, every trial count from 1 to 70 and 1000 (the scalar log1p path),
// residuals that overflow, and non-finite coordinates, whose outcome must
// be LogDensity's own.
func TestLogDensitiesEdges(t *testing.T) {
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
	prior := &DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{10, 10}}
	etas := []float64{1e3, -1e3, 40, -40, 0, math.Copysign(0, -1), 1e-300, 745.5}
	var zs []float64
	for _, a := range etas {
		for _, b := range etas {
			zs = append(zs, a, b)
		}
	}
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	for _, v := range bad {
		zs = append(zs, v, 0.5, 0.5, v, v, v)
	}
	eachVecKernel(t, func(t *testing.T) {
		checkBatch(t, "logistic", &Task{D: d, Prior: prior, Factors: fs}, zs)
		checkBatch(t, "student", &Task{D: d, Prior: prior, Factors: stud}, zs)
		over := &Task{D: d, Prior: prior, Factors: append(stud[2:], &LinStudentT{X: []float64{1, 0}, Y: 1e200, Sigma: 1, DF: 4})}
		checkBatch(t, "overflow", over, []float64{0.5, 0.5})
		out := []float64{0}
		if err := over.Packed().LogDensities([]float64{0.5, 0.5}, out); err != nil || !math.IsInf(out[0], -1) {
			t.Fatalf("overflowing residual: %v, %v; want -Inf", out[0], err)
		}
	})
}

// TestLogDensitiesRowIndependent: a row's value is the same whichever
// rows share its call, in whatever order.
func TestLogDensitiesRowIndependent(t *testing.T) {
	rng := newRNG(202)
	for _, prior := range []string{DiagGaussianFamily, DiagLaplaceFamily, DiagStudentTFamily, FullRankGaussianFamily} {
		task := simTask(t, rng, 4, 256, prior, []string{BernoulliLogitFamily, BinomialLogitFamily, LinStudentTFamily})
		p := task.Packed()
		const rows = 37
		zs := make([]float64, 0, rows*4)
		for s := range rows {
			zs = append(zs, randVec(rng, 4, float64(1+s%5))...)
		}
		all := make([]float64, rows)
		if err := p.LogDensities(zs, all); err != nil {
			t.Fatal(err)
		}
		one := make([]float64, 1)
		for s := range rows {
			if err := p.LogDensities(zs[s*4:(s+1)*4], one); err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(one[0]) != math.Float64bits(all[s]) {
				t.Fatalf("%s row %d: %v alone, %v in a block", prior, s, one[0], all[s])
			}
		}
		rev := make([]float64, 0, len(zs))
		for s := rows - 1; s >= 0; s-- {
			rev = append(rev, zs[s*4:(s+1)*4]...)
		}
		back := make([]float64, rows)
		if err := p.LogDensities(rev, back); err != nil {
			t.Fatal(err)
		}
		slices.Reverse(back)
		if !slices.Equal(back, all) {
			t.Fatalf("%s: values change with the order of the rows", prior)
		}
	}
}

// TestLogDensitiesFallbacks: priors and likelihoods of types Packed does
// not know go through their interfaces on the batched path too.
func TestLogDensitiesFallbacks(t *testing.T) {
	rng := newRNG(204)
	for rep := range 10 {
		task := simTask(t, rng, 1+rep, 20+rep, "", nil)
		w := &Task{D: task.D, Prior: wrappedPrior{task.Prior}}
		for i, f := range task.Factors {
			if i%2 == 0 {
				f = wrappedLik{f}
			}
			w.Factors = append(w.Factors, f)
		}
		zs := append(randVec(rng, task.D, 1), randVec(rng, task.D, 5)...)
		eachVecKernel(t, func(t *testing.T) { checkBatch(t, fmt.Sprintf("rep %d", rep), w, zs) })
	}
}

func TestLogDensitiesBadLength(t *testing.T) {
	task := simTask(t, newRNG(203), 3, 10, DiagGaussianFamily, []string{BernoulliLogitFamily})
	if err := task.Packed().LogDensities(make([]float64, 7), make([]float64, 2)); err == nil {
		t.Fatal("7 coordinates for 2 rows of 3 accepted")
	}
}
