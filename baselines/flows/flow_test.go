package flows

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
	"gonum.org/v1/gonum/mat"
)

// jitter moves every free parameter away from the identity initialisation
// so the tests exercise non-trivial conditioners.
func jitter(f *Flow, rng *rand.Rand, sd float64) {
	p := f.Params()
	for i := range p {
		p[i] += sd * rng.NormFloat64() * f.free[i]
	}
}

func testArchs() []struct {
	kind Kind
	arch Arch
} {
	return []struct {
		kind Kind
		arch Arch
	}{
		{IAF, Arch{Layers: 3, Hidden: 8}},
		{MAF, Arch{Layers: 3, Hidden: 8}},
		{NSF, Arch{Layers: 3, Hidden: 8, Bins: 5, Bound: 2.5}},
		{IAF, Arch{Layers: 2, Hidden: 6, Depth: 1}},
		{MAF, Arch{Layers: 1, Hidden: 5, Depth: 3}},
		{NSF, Arch{Layers: 2, Hidden: 6, Depth: 1, Bins: 3}},
	}
}

// logAbsDetFD is log|det ∂T/∂u| by central differences of Transform.
func logAbsDetFD(f *Flow, u []float64) float64 {
	d := f.D
	const h = 1e-6
	jac := mat.NewDense(d, d, nil)
	up, um := make([]float64, d), make([]float64, d)
	zp, zm := make([]float64, d), make([]float64, d)
	for j := range d {
		copy(up, u)
		copy(um, u)
		up[j] += h
		um[j] -= h
		f.Transform(up, zp)
		f.Transform(um, zm)
		for i := range d {
			jac.Set(i, j, (zp[i]-zm[i])/(2*h))
		}
	}
	ld, _ := mat.LogDet(jac)
	return ld
}

func TestLogDensityIsChangeOfVariables(t *testing.T) {
	for _, d := range []int{1, 2, 5} {
		for ci, c := range testArchs() {
			t.Run(fmt.Sprintf("%s/d%d/%d", c.kind, d, ci), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(d), uint64(ci)))
				f, err := New(d, c.kind, c.arch, rng)
				if err != nil {
					t.Fatal(err)
				}
				jitter(f, rng, 0.4)
				u, z, back := make([]float64, d), make([]float64, d), make([]float64, d)
				for range 5 {
					for i := range u {
						u[i] = 1.3 * rng.NormFloat64()
					}
					lq := f.Transform(u, z)
					want := logStdNormal(u) - logAbsDetFD(f, u)
					if math.Abs(lq-want) > 1e-5 {
						t.Errorf("log q = %.9g, change of variables gives %.9g", lq, want)
					}
					lq2 := f.Inverse(z, back)
					for i := range u {
						if math.Abs(back[i]-u[i]) > 1e-9*(1+math.Abs(u[i])) {
							t.Fatalf("inverse: u[%d] = %.12g, got back %.12g", i, u[i], back[i])
						}
					}
					if math.Abs(lq2-lq) > 1e-9*(1+math.Abs(lq)) {
						t.Errorf("LogProb at a sample %.12g, sampling gave %.12g", lq2, lq)
					}
				}
			})
		}
	}
}

func TestIdentityInitIsBase(t *testing.T) {
	for _, kind := range Kinds() {
		rng := rand.New(rand.NewPCG(7, 1))
		f, err := New(4, kind, Arch{}, rng)
		if err != nil {
			t.Fatal(err)
		}
		u, z := make([]float64, 4), make([]float64, 4)
		for range 20 {
			for i := range u {
				u[i] = 2 * rng.NormFloat64()
			}
			lq := f.Transform(u, z)
			for i := range u {
				if math.Abs(z[i]-u[i]) > 1e-12 {
					t.Fatalf("%s: identity init moved u[%d] %.15g to %.15g", kind, i, u[i], z[i])
				}
			}
			if want := logStdNormal(u); math.Abs(lq-want) > 1e-12 {
				t.Fatalf("%s: log q = %.15g, base density %.15g", kind, lq, want)
			}
		}
	}
}

// gradTask is a small non-Gaussian posterior: Student-t prior and logistic
// likelihood factors.
func gradTask(d int, rng *rand.Rand) *factor.Task {
	loc, scale := make([]float64, d), make([]float64, d)
	for i := range loc {
		loc[i], scale[i] = 0.3*rng.NormFloat64(), 1+rng.Float64()
	}
	t := &factor.Task{D: d, Prior: &factor.DiagStudentT{Loc: loc, Scale: scale, DF: 4}}
	for range 6 {
		x := make([]float64, d)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		t.Factors = append(t.Factors, &factor.BernoulliLogit{X: x, Y: float64(rng.IntN(2))})
	}
	return t
}

func TestELBOGradMatchesFiniteDifferences(t *testing.T) {
	for _, d := range []int{1, 3, 4} {
		for ci, c := range testArchs() {
			t.Run(fmt.Sprintf("%s/d%d/%d", c.kind, d, ci), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(10+d), uint64(ci)))
				task := gradTask(d, rng)
				f, err := New(d, c.kind, c.arch, rng)
				if err != nil {
					t.Fatal(err)
				}
				jitter(f, rng, 0.3)
				us := make([]float64, 3*d)
				for i := range us {
					us[i] = rng.NormFloat64()
				}
				if _, err := f.ELBOGrad(task, us); err != nil {
					t.Fatal(err)
				}
				grad := append([]float64(nil), f.Grad()...)
				elbo := func() float64 {
					v, _ := f.ELBOGrad(task, us)
					return v
				}
				p := f.Params()
				checked := 0
				for k := range p {
					if f.free[k] == 0 {
						if grad[k] != 0 {
							t.Fatalf("masked parameter %d has gradient %g", k, grad[k])
						}
						continue
					}
					// Every parameter for small flows, a sample otherwise.
					if len(p) > 400 && rng.IntN(len(p)/300) != 0 {
						continue
					}
					const h = 1e-5
					old := p[k]
					p[k] = old + h
					ep := elbo()
					p[k] = old - h
					em := elbo()
					p[k] = old
					fd := (ep - em) / (2 * h)
					if math.Abs(fd-grad[k]) > 1e-5*(1+math.Abs(fd)) {
						t.Errorf("param %d: backprop %.9g, finite difference %.9g", k, grad[k], fd)
					}
					checked++
				}
				if checked < 20 {
					t.Fatalf("only %d parameters checked", checked)
				}
			})
		}
	}
}

func TestSplineRoundTripAndDerivatives(t *testing.T) {
	for _, sp := range []spline{{K: 2, B: 1}, {K: 5, B: 3}, {K: 8, B: 3}} {
		rng := rand.New(rand.NewPCG(3, uint64(sp.K)))
		st := newKnotState(sp.K)
		raw := make([]float64, sp.nRaw())
		graw := make([]float64, sp.nRaw())
		work := make([]float64, 3*sp.K+2)
		for trial := range 200 {
			for i := range raw {
				raw[i] = 1.5 * rng.NormFloat64()
			}
			x := (sp.B + 0.5) * (2*rng.Float64() - 1)
			y, ld := sp.forward(x, raw, &st)
			xb, ldb := sp.inverse(y, raw, &st)
			if math.Abs(xb-x) > 1e-10 || math.Abs(ldb-ld) > 1e-8 {
				t.Fatalf("K=%d trial %d: x=%.12g → y=%.12g → %.12g (logderiv %.9g vs %.9g)", sp.K, trial, x, y, xb, ld, ldb)
			}
			const h = 1e-6
			yp, ldp := sp.forward(x+h, raw, &st)
			ym, ldm := sp.forward(x-h, raw, &st)
			if fd := math.Log((yp - ym) / (2 * h)); math.Abs(fd-ld) > 1e-5 {
				t.Fatalf("K=%d: log dy/dx = %.9g, finite difference %.9g", sp.K, ld, fd)
			}
			// Backward, for L = a·y + b·logDeriv.
			a, b := rng.NormFloat64(), rng.NormFloat64()
			sp.forward(x, raw, &st)
			clear(graw)
			gx := sp.backward(&st, raw, a, b, graw, work)
			if fd := (a*(yp-ym) + b*(ldp-ldm)) / (2 * h); math.Abs(fd-gx) > 1e-5*(1+math.Abs(fd)) {
				t.Fatalf("K=%d: ∂L/∂x = %.9g, finite difference %.9g", sp.K, gx, fd)
			}
			for k := range raw {
				old := raw[k]
				raw[k] = old + h
				yp, ldp := sp.forward(x, raw, &st)
				raw[k] = old - h
				ym, ldm := sp.forward(x, raw, &st)
				raw[k] = old
				fd := (a*(yp-ym) + b*(ldp-ldm)) / (2 * h)
				if math.Abs(fd-graw[k]) > 1e-5*(1+math.Abs(fd)) {
					t.Fatalf("K=%d trial %d: ∂L/∂raw[%d] = %.9g, finite difference %.9g", sp.K, trial, k, graw[k], fd)
				}
			}
		}
	}
}

func TestSplineIdentityAtInit(t *testing.T) {
	sp := spline{K: 8, B: 3}
	raw := make([]float64, sp.nRaw())
	for j := 2 * sp.K; j < len(raw); j++ {
		raw[j] = identityDerivRaw()
	}
	st := newKnotState(sp.K)
	for _, x := range []float64{-4, -3, -2.2, -0.1, 0, 0.7, 2.99, 3, 5} {
		y, ld := sp.forward(x, raw, &st)
		if math.Abs(y-x) > 1e-12 || math.Abs(ld) > 1e-12 {
			t.Errorf("x=%g: y=%.15g logderiv=%.3g, want identity", x, y, ld)
		}
	}
}

func TestMADEIsAutoregressive(t *testing.T) {
	for _, c := range []struct{ d, h, depth, l int }{{1, 4, 1, 0}, {5, 8, 2, 0}, {5, 8, 2, 1}, {13, 32, 2, 1}, {7, 3, 3, 0}} {
		rng := rand.New(rand.NewPCG(uint64(c.d), uint64(c.h)))
		m := newMADE(degrees(c.d, c.l), c.h, c.depth, 3)
		p, g := make([]float64, m.size()), make([]float64, m.size())
		m.bind(p, g)
		m.init(rng, func(int) float64 { return 0 })
		// Give the zero-initialised output layer weights too.
		out := &m.lin[len(m.lin)-1]
		for k, ok := range out.mask {
			if ok {
				out.w[k] = rng.NormFloat64()
			}
		}
		for li := range m.lin {
			for j := range m.lin[li].out {
				if m.lin[li].hi[j]-m.lin[li].lo[j] == m.lin[li].in && m.lin[li].in > 1 && !allTrue(m.lin[li].mask[j*m.lin[li].in:(j+1)*m.lin[li].in]) {
					t.Errorf("%+v: layer %d row %d fell back to the full range", c, li, j)
				}
			}
		}
		cache := m.newCache()
		x := make([]float64, c.d)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		base := append([]float64(nil), m.forward(x, cache)...)
		for j := range c.d {
			x[j] += 0.5
			got := m.forward(x, cache)
			x[j] -= 0.5
			for o, v := range got {
				i := o % c.d
				dependsAllowed := m.deg[i] > m.deg[j]
				if !dependsAllowed && v != base[o] {
					t.Fatalf("%+v: output %d (coordinate degree %d) depends on input degree %d", c, o, m.deg[i], m.deg[j])
				}
			}
		}
	}
}

func allTrue(b []bool) bool {
	for _, v := range b {
		if !v {
			return false
		}
	}
	return true
}
