package factor

import (
	"math"
	"testing"

	"github.com/afin-bench/afin/internal/cputime"
)

// wrappedLik and wrappedPrior hide a built-in family behind a type Packed
// does not know, to exercise its interface fallbacks.
type wrappedLik struct{ Likelihood }
type wrappedPrior struct{ Prior }

// termScales returns Σ|term| over the prior and every factor for the value
// and per gradient coordinate: the size of the rounding error that summing
// the same terms in another order may make.
func termScales(t *Task, z []float64) (float64, []float64) {
	gs := make([]float64, t.D)
	g := make([]float64, t.D)
	acc := func(v float64) float64 {
		for i := range g {
			gs[i] += math.Abs(g[i])
			g[i] = 0
		}
		return math.Abs(v)
	}
	s := acc(t.Prior.LogKernelGrad(z, g))
	for _, f := range t.Factors {
		s += acc(f.LogKernelGrad(z, g))
	}
	return s, gs
}

// packedClose reports whether Packed's a agrees with Task's b: equal
// (infinities included), or within 1e-12 of the term scale, the size of
// the rounding error of summing the terms in another order.
func packedClose(a, b, scale float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*(1+scale)
}

// checkPackedAt compares Packed with Task at z, value and gradient.
func checkPackedAt(t *testing.T, task *Task, p *Packed, z []float64) {
	t.Helper()
	gt := make([]float64, task.D)
	gp := make([]float64, task.D)
	for i := range gp {
		gp[i] = math.NaN() // LogDensityGrad must overwrite, not add
	}
	vt := task.LogDensityGrad(z, gt)
	vp := p.LogDensityGrad(z, gp)
	if v := p.LogDensity(z); v != vp && !(math.IsNaN(v) && math.IsNaN(vp)) {
		t.Fatalf("Packed LogDensity %.17g, LogDensityGrad %.17g", v, vp)
	}
	sv, sg := termScales(task, z)
	if !packedClose(vp, vt, sv) {
		t.Fatalf("d=%d n=%d: value %.17g, Task %.17g, term scale %.3g", task.D, task.N(), vp, vt, sv)
	}
	for i := range gt {
		if !packedClose(gp[i], gt[i], sg[i]) {
			t.Fatalf("d=%d n=%d: grad[%d] %.17g, Task %.17g, term scale %.3g", task.D, task.N(), i, gp[i], gt[i], sg[i])
		}
	}
}

func TestPackedMatchesTask(t *testing.T) {
	all := []string{LinGaussianFamily, BernoulliLogitFamily, BinomialLogitFamily, LinStudentTFamily, GaussianFamily}
	type tc struct {
		name   string
		o      SimOptions
		zScale float64 // z ~ N(0, zScale²) per coordinate; 0: use TrueZ
	}
	var cases []tc
	for _, lik := range all {
		cases = append(cases,
			tc{lik + "/medium", SimOptions{D: 8, N: 64, Prior: DiagGaussianFamily, Likelihoods: []string{lik}}, 0},
			tc{lik + "/any-prior", SimOptions{DMax: 12, NMax: 80, Likelihoods: []string{lik}}, 2},
			tc{lik + "/large-n", SimOptions{D: 4, N: 1000, Likelihoods: []string{lik}}, 0.5},
			// |xᵀz| into the hundreds and beyond 1e3 for the logistic sites.
			tc{lik + "/extreme", SimOptions{D: 8, N: 64, Prior: DiagGaussianFamily, Likelihoods: []string{lik}, Design: DesignIID}, 400},
		)
	}
	cases = append(cases,
		tc{"heterogeneous", SimOptions{DMax: 16, NMax: 256}, 2},
		tc{"heterogeneous/all-five", SimOptions{DMax: 16, NMax: 256, Likelihoods: all}, 1},
		tc{"heterogeneous/extreme", SimOptions{D: 8, N: 128, Likelihoods: all}, 300},
	)
	rng := newRNG(91)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for rep := 0; rep < 20; rep++ {
				task, err := Simulate(rng, c.o)
				if err != nil {
					t.Fatal(err)
				}
				z := task.TrueZ
				if c.zScale > 0 {
					z = randVec(rng, task.D, c.zScale)
				}
				checkPackedAt(t, task, task.Packed(), z)
			}
		})
	}
}

// TestPackedEdgeSites covers the branches of the product-of-logs sums the
// simulator rarely reaches: many sites (the product is folded into the
// sum several times), binomial trials above maxPowTrials, degrees of
// freedom changing from site to site, and Student-t residuals so large
// that 1+r²/(νσ²) exceeds 2⁵⁰⁰ or overflows.
func TestPackedEdgeSites(t *testing.T) {
	rng := newRNG(96)
	const d = 3
	x := func() []float64 { return randVec(rng, d, 1) }
	var logit, stud []Likelihood
	for k := 0; k < 1500; k++ {
		if k%3 == 0 {
			logit = append(logit, &BernoulliLogit{X: x(), Y: float64(k % 2)})
		} else {
			n := []int{2, 7, 64, 65, 1000}[k%5]
			logit = append(logit, &BinomialLogit{X: x(), Y: float64(rng.IntN(n + 1)), Trials: n})
		}
	}
	for k := 0; k < 300; k++ {
		df := []float64{3, 3, 3, 5.5, 30}[k%5]
		y := rng.NormFloat64()
		switch k % 37 {
		case 5:
			y = 1e70 // u ≈ 1e139: the product passes 2⁵⁰⁰ and restarts
		case 11:
			y = 1e100 // u > 2⁵⁰⁰: log1p directly
		}
		stud = append(stud, &LinStudentT{X: x(), Y: y, Sigma: 0.1 + rng.Float64(), DF: df})
	}
	prior := &DiagGaussian{Loc: make([]float64, d), Scale: []float64{1, 2, 3}}
	for _, fs := range [][]Likelihood{logit, stud, append(append([]Likelihood(nil), stud...), logit...)} {
		task := &Task{D: d, Prior: prior, Factors: fs}
		p := task.Packed()
		for _, scale := range []float64{0.01, 1, 30} {
			checkPackedAt(t, task, p, randVec(rng, d, scale))
		}
	}
	// r² overflows: Task's value is −Inf, and so must Packed's be.
	task := &Task{D: d, Prior: prior, Factors: append(stud[:3:3], &LinStudentT{X: []float64{1, 0, 0}, Y: 1e200, Sigma: 1, DF: 4})}
	checkPackedAt(t, task, task.Packed(), []float64{0.5, 0.5, 0.5})
	if v := task.Packed().LogDensity([]float64{0.5, 0.5, 0.5}); !math.IsInf(v, -1) {
		t.Fatalf("overflowing residual: log density %v, want -Inf", v)
	}
}

// TestPackedFallbacks covers families Packed reaches only through the
// Prior and Likelihood interfaces.
func TestPackedFallbacks(t *testing.T) {
	rng := newRNG(92)
	for rep := 0; rep < 10; rep++ {
		task, err := Simulate(rng, SimOptions{DMax: 10, NMax: 60})
		if err != nil {
			t.Fatal(err)
		}
		w := &Task{D: task.D, Prior: wrappedPrior{task.Prior}}
		for _, f := range task.Factors {
			w.Factors = append(w.Factors, wrappedLik{f})
		}
		p := w.Packed()
		if len(p.other) != task.N() || p.pLoc != nil {
			t.Fatalf("wrapped factors were packed: %d of %d in the fallback", len(p.other), task.N())
		}
		z := randVec(rng, task.D, 1)
		gt, gp := make([]float64, task.D), make([]float64, task.D)
		for i := range gp {
			gp[i] = 7 // stale content must be overwritten
		}
		vt, vp := task.LogDensityGrad(z, gt), p.LogDensityGrad(z, gp)
		if vt != vp || relErr(gt, gp) != 0 {
			t.Fatalf("rep %d: fallback value %.17g grad %v, Task %.17g %v", rep, vp, gp, vt, gt)
		}
		if v := p.LogDensity(z); v != vt {
			t.Fatalf("rep %d: fallback LogDensity %.17g, Task %.17g", rep, v, vt)
		}
	}
}

func TestPackedFiniteDifference(t *testing.T) {
	rng := newRNG(93)
	for rep := 0; rep < 30; rep++ {
		task, err := Simulate(rng, SimOptions{DMax: 8, NMax: 40})
		if err != nil {
			t.Fatal(err)
		}
		p := task.Packed()
		z := randVec(rng, task.D, 1)
		g := make([]float64, task.D)
		p.LogDensityGrad(z, g)
		fd := fdGrad(p.LogDensity, z)
		// Laplace priors have kinks; randVec lands on one with probability 0.
		if e := relErr(g, fd); e > 1e-6 {
			t.Fatalf("rep %d (%s prior): grad %v, finite differences %v, rel err %.2g", rep, task.Prior.Family(), g, fd, e)
		}
	}
}

func TestPackedAllocatesNothing(t *testing.T) {
	rng := newRNG(95)
	for _, lik := range []string{"", LinGaussianFamily, BernoulliLogitFamily, BinomialLogitFamily, LinStudentTFamily, GaussianFamily} {
		o := SimOptions{D: 8, N: 64}
		if lik != "" {
			o.Likelihoods = []string{lik}
		}
		task, err := Simulate(rng, o)
		if err != nil {
			t.Fatal(err)
		}
		p := task.Packed()
		z, g := task.TrueZ, make([]float64, task.D)
		if n := testing.AllocsPerRun(50, func() { p.LogDensityGrad(z, g) }); n != 0 {
			t.Errorf("%q: LogDensityGrad allocates %v times per call", lik, n)
		}
		if n := testing.AllocsPerRun(50, func() { p.LogDensity(z) }); n != 0 {
			t.Errorf("%q: LogDensity allocates %v times per call", lik, n)
		}
	}
}

// processCPUNanos is this process's user+system CPU time. Benchmarks
// report it per call (cpu-ns/op) beside wall time: on a shared machine
// wall time also counts the time other jobs hold the core. Run them with
// -cpu 1 so that the process time is the benchmark goroutine's.
func processCPUNanos() int64 {
	c, err := cputime.Process()
	if err != nil {
		return 0
	}
	return int64(c * 1e9)
}

// BenchmarkPacked times Task.LogDensityGrad against Packed.LogDensityGrad
// on the synthetic medium setting of the NUTS benchmark (diag_gaussian
// prior, d = 8, N = 64, iid design), one family at a time.
func BenchmarkPacked(b *testing.B) {
	for _, lik := range []string{LinGaussianFamily, BernoulliLogitFamily, BinomialLogitFamily, LinStudentTFamily} {
		task, err := Simulate(newRNG(8), SimOptions{D: 8, N: 64, Prior: DiagGaussianFamily, Likelihoods: []string{lik}, Design: DesignIID})
		if err != nil {
			b.Fatal(err)
		}
		z, g := task.TrueZ, make([]float64, task.D)
		for _, impl := range []struct {
			name string
			f    func(z, grad []float64) float64
		}{{"task", task.LogDensityGrad}, {"packed", task.Packed().LogDensityGrad}} {
			b.Run(lik+"/"+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				c0 := processCPUNanos()
				for b.Loop() {
					impl.f(z, g)
				}
				b.ReportMetric(float64(processCPUNanos()-c0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
