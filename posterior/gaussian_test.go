package posterior

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Both factorisations of the one Gaussian type agree with gonum on the
// covariance, log density and entropy, and their draws have the right
// moments; Rand's log q is LogQ at the draw.
func TestGaussianMatchesGonum(t *testing.T) {
	const d = 4
	rng := rand.New(rand.NewPCG(3, 3))
	m := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	var a mat.Dense
	a.Mul(m, m.T())
	spd := make([]float64, d*d)
	for i := range d {
		for j := range d {
			spd[i*d+j] = a.At(i, j)
			if i == j {
				spd[i*d+j]++
			}
		}
	}
	mean := []float64{0.3, -1, 2, 0}
	chol, ok := Cholesky(spd, d, 0)
	if !ok {
		t.Fatal("Cholesky failed on an SPD matrix")
	}
	fromPrec, err := NewGaussianPrecision(mean, spd)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		g    *Gaussian
		cov  *mat.SymDense // what Cov must return
	}{
		{"precision factor", fromPrec, inverse(t, spd, d)},
		{"covariance factor", &Gaussian{Mean: mean, L: chol}, mat.NewSymDense(d, append([]float64(nil), spd...))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cov := tc.g.Cov()
			for i := range d {
				for j := range d {
					if math.Abs(cov[i*d+j]-tc.cov.At(i, j)) > 1e-10 {
						t.Fatalf("cov[%d][%d] = %g, want %g", i, j, cov[i*d+j], tc.cov.At(i, j))
					}
				}
			}
			var ch mat.Cholesky
			ch.Factorize(tc.cov)
			z := []float64{1, 2, 3, 4}
			r := mat.NewVecDense(d, []float64{1 - 0.3, 3, 1, 4})
			var sol mat.VecDense
			if err := ch.SolveVecTo(&sol, r); err != nil {
				t.Fatal(err)
			}
			want := -0.5*ch.LogDet() - 0.5*mat.Dot(r, &sol) - 0.5*float64(d)*log2Pi
			if got := tc.g.LogQ(z); math.Abs(got-want) > 1e-10 {
				t.Fatalf("LogQ = %g, want %g", got, want)
			}
			if h, want := tc.g.Entropy(), 0.5*float64(d)*(1+log2Pi)+0.5*ch.LogDet(); math.Abs(h-want) > 1e-10 {
				t.Errorf("entropy %g, want %g", h, want)
			}
			x := make([]float64, d)
			if lq := tc.g.Rand(rand.New(rand.NewPCG(1, 1)), x); math.Abs(lq-tc.g.LogQ(x)) > 1e-10 {
				t.Errorf("Rand's log q %g, LogQ at the draw %g", lq, tc.g.LogQ(x))
			}
			const s = 200000
			dr := &Draws{D: d, Z: tc.g.Sample(rng, s)}
			mu, c := dr.Mean(), dr.Cov()
			for i := range d {
				if math.Abs(mu[i]-mean[i]) > 5*math.Sqrt(cov[i*d+i]/s) {
					t.Errorf("sample mean[%d] = %g, want %g", i, mu[i], mean[i])
				}
			}
			if math.Abs(c[1]-cov[1]) > 0.05*math.Sqrt(cov[0]*cov[d+1]) {
				t.Errorf("sample cov[0][1] = %g, want %g", c[1], cov[1])
			}
		})
	}
}

func inverse(t *testing.T, a []float64, d int) *mat.SymDense {
	t.Helper()
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(d, append([]float64(nil), a...))) {
		t.Fatal("not SPD")
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		t.Fatal(err)
	}
	return &inv
}

// A precision that is not positive definite is refused, not jittered into
// a wrong answer.
func TestGaussianPrecisionRejectsIndefinite(t *testing.T) {
	tests := []struct {
		name string
		mean []float64
		prec []float64
	}{
		{"indefinite", []float64{0, 0}, []float64{1, 2, 2, 1}},
		{"wrong size", []float64{0, 0}, []float64{1, 0, 0}},
		{"empty", nil, nil},
	}
	for _, tc := range tests {
		if _, err := NewGaussianPrecision(tc.mean, tc.prec); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// TestDrawsOfGaussianAsRand: DrawsOfContext's loop for a Gaussian (the
// logs of L's diagonal taken once, four draws at a time by randFour, the
// rest one by one) gives every bit of the draws and log q that calls of
// Rand give, for a covariance and a precision factor, at several d.
func TestDrawsOfGaussianAsRand(t *testing.T) {
	prec, err := NewGaussianPrecision([]float64{0.5, 30, -2}, []float64{4, 1, 0.5, 1, 3, -0.2, 0.5, -0.2, 2})
	if err != nil {
		t.Fatal(err)
	}
	gs := []*Gaussian{{Mean: []float64{1, -2, 3}, L: []float64{2, 0, 0, 0.5, 1, 0, -0.3, 0.2, 0.7}}, prec}
	rng := rand.New(rand.NewPCG(7, 1))
	for _, d := range []int{1, 4, 5, 16, 17} {
		for _, precision := range []bool{false, true} {
			g := &Gaussian{Mean: make([]float64, d), L: make([]float64, d*d), PrecisionFactor: precision}
			for i := range d {
				g.Mean[i] = rng.NormFloat64()
				for k := range i {
					g.L[i*d+k] = rng.NormFloat64()
				}
				g.L[i*d+i] = 0.5 + rng.Float64()
			}
			gs = append(gs, g)
		}
	}
	for _, g := range gs {
		d := g.Dim()
		for _, n := range []int{500, 503} {
			got, lq := DrawsOf(g, rand.New(rand.NewPCG(2, 3)), n)
			rng := rand.New(rand.NewPCG(2, 3))
			z := make([]float64, d)
			for s := range n {
				l := g.Rand(rng, z)
				if l != lq[s] || !slices.Equal(z, got.Row(s)) {
					t.Fatalf("d = %d, precision factor %v, draw %d of %d: %v (log q %.17g), Rand %v (%.17g)", d, g.PrecisionFactor, s, n, got.Row(s), lq[s], z, l)
				}
			}
		}
	}
}
