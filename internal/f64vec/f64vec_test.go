package f64vec

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// eachKernel runs f once per kernel this CPU has, forced with Use.
func eachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	def := Kernel()
	t.Cleanup(func() {
		if err := Use(def); err != nil {
			t.Fatal(err)
		}
	})
	for _, k := range Kernels() {
		if err := Use(k); err != nil {
			t.Fatal(err)
		}
		t.Run(k, f)
	}
}

func TestUse(t *testing.T) {
	def := Kernel()
	defer func() {
		if err := Use(def); err != nil {
			t.Fatal(err)
		}
	}()
	for _, k := range Kernels() {
		if err := Use(k); err != nil || Kernel() != k {
			t.Fatalf("Use(%q): %v, kernel %q", k, err, Kernel())
		}
	}
	// This test machine's kernels: on amd64 and arm64 FMA is hardware.
	if runtime.GOARCH == "arm64" || (runtime.GOARCH == "amd64" && cpu.X86.HasFMA) {
		if !Fast() {
			t.Fatal("Fast() false with hardware FMA")
		}
	}
	if err := Use("avx9"); err == nil {
		t.Fatal("Use accepted an unknown kernel")
	}
}

func TestExpPoly(t *testing.T) {
	f := big.NewRat(1, 1)
	for k, c := range expPoly13 {
		if k > 0 {
			f.Quo(f, big.NewRat(int64(k), 1))
		}
		if want, _ := f.Float64(); c != want {
			t.Errorf("1/%d! = %x, want %x", k, c, want)
		}
	}
	if ln2 := new(big.Float).SetPrec(200).Add(big.NewFloat(expLn2Hi), big.NewFloat(expLn2Lo)); ln2.Text('g', 25) != "0.6931471805599453094172321" {
		t.Errorf("ln2 split sums to %s", ln2.Text('g', 25))
	}
}

// ulps is |got − want| in units of the last place of want (for want = 0,
// of the smallest subnormal).
func ulps(got, want float64) float64 {
	if got == want {
		return 0
	}
	u := math.Nextafter(want, math.Inf(1)) - want
	return math.Abs(got-want) / u
}

// TestExpNegAbs sweeps [−746, 0] densely (and both signs, since the
// kernel takes |x|) against math.Exp, asserting the documented 2 ulps.
func TestExpNegAbs(t *testing.T) {
	const n = 1 << 20
	src := make([]float64, n+3) // a length that is not a multiple of 4
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range src {
		src[i] = -746 * (float64(i) + rng.Float64()) / n
		if i%2 == 1 {
			src[i] = -src[i]
		}
	}
	special := []float64{0, math.Copysign(0, -1), 1e-300, 5e-324, 0.5 * math.Ln2, -0.5 * math.Ln2, 708.39, 745.13, 745.2, 746, 750, 1e3, 1e300, math.Inf(1), math.Inf(-1)}
	src = append(src, special...)
	dst := make([]float64, len(src))
	var first []float64
	eachKernel(t, func(t *testing.T) {
		ExpNegAbs(dst, src)
		// The kernels do the same operations in the same order.
		if first == nil {
			first = append([]float64(nil), dst...)
		}
		for i := range dst {
			if math.Float64bits(dst[i]) != math.Float64bits(first[i]) {
				t.Fatalf("exp(-|%v|) = %x, first kernel %x", src[i], dst[i], first[i])
			}
		}
		worst, at := 0.0, 0.0
		for i, x := range src {
			want := math.Exp(-math.Abs(x))
			if e := ulps(dst[i], want); e > worst {
				worst, at = e, x
			}
		}
		t.Logf("max error %.3f ulp at x = %.17g", worst, at)
		if worst > 2 {
			t.Fatalf("max error %.3f ulp at x = %.17g, want <= 2", worst, at)
		}
		ExpNegAbs(dst[:5], []float64{math.NaN(), 1, 2, math.NaN(), 3})
		if !math.IsNaN(dst[0]) || !math.IsNaN(dst[3]) {
			t.Fatalf("exp(-|NaN|) = %v, %v, want NaN", dst[0], dst[3])
		}
	})
}

func TestMatVecT(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{1, 2, 3, 4, 5, 8, 16} {
		for _, np := range []int{0, 1, 3, 4, 7, 16, 20, 33, 64} {
			xt := make([]float64, d*np)
			for i := range xt {
				xt[i] = rng.NormFloat64()
			}
			z := make([]float64, d)
			for i := range z {
				z[i] = 3 * rng.NormFloat64()
			}
			var ref []float64
			eachKernel(t, func(t *testing.T) {
				eta := make([]float64, np)
				MatVecT(xt, z, eta)
				for j := range eta {
					var s, scale float64
					for i := range z {
						s += z[i] * xt[i*np+j]
						scale += math.Abs(z[i] * xt[i*np+j])
					}
					if math.Abs(eta[j]-s) > 1e-14*scale {
						t.Fatalf("d=%d np=%d: eta[%d] = %v, want %v", d, np, j, eta[j], s)
					}
				}
				// One FMA per term in order: every kernel gives the same bits.
				if ref == nil {
					ref = eta
				}
				for j := range eta {
					if math.Float64bits(eta[j]) != math.Float64bits(ref[j]) {
						t.Fatalf("d=%d np=%d: eta[%d] = %x, first kernel %x", d, np, j, eta[j], ref[j])
					}
				}
			})
		}
	}
}

type sites struct {
	eta, y, n, invQ []float64
	ni              []int64
}

// randSites draws m sites; unless maxN is 1, every fifth is padding
// (n = 0, y = 0, η = 0).
func randSites(rng *rand.Rand, m int, etaScale float64, maxN int64) sites {
	s := sites{make([]float64, m), make([]float64, m), make([]float64, m), make([]float64, m), make([]int64, m)}
	for j := range m {
		if j%5 == 4 && maxN > 1 {
			s.invQ[j] = 1
			continue
		}
		s.eta[j] = etaScale * rng.NormFloat64()
		s.ni[j] = 1 + rng.Int64N(maxN)
		s.n[j] = float64(s.ni[j])
		s.y[j] = float64(rng.Int64N(s.ni[j] + 1))
		s.invQ[j] = 1 / (0.1 + 5*rng.Float64())
	}
	return s
}

func bitLen(n int64) int {
	b := 1
	for n>>b > 0 {
		b++
	}
	return b
}

func TestLogistic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, m := range []int{1, 3, 4, 9, 64, 257, 1000} {
		for _, scale := range []float64{0.01, 3, 40, 1e3} {
			for _, maxN := range []int64{1, 7, 64} {
				s := randSites(rng, m, scale, maxN)
				if m > 3 {
					s.eta[1], s.eta[2] = math.Copysign(0, -1), 745.5
				}
				var want, size float64
				for j, v := range s.eta {
					term := s.y[j]*v - s.n[j]*(math.Max(v, 0)+math.Log1p(math.Exp(-math.Abs(v))))
					want += term
					size += math.Abs(term)
				}
				name := fmt.Sprintf("m=%d/eta=%g/n<=%d", m, scale, maxN)
				bits := []int{bitLen(maxN)}
				if maxN == 1 {
					bits = append(bits, 0)
				}
				for _, b := range bits {
					var first *Acc
					eachKernel(t, func(t *testing.T) {
						var a Acc
						a.Reset()
						// Two calls, the second continuing the lanes.
						h := m / 2 &^ 3
						Logistic(s.eta[:h], s.y, s.n, s.ni, b, &a)
						Logistic(s.eta[h:], s.y[h:], s.n[h:], s.ni[h:], b, &a)
						got := Sum(&a.Lin) - (a.LogProd() + Sum(&a.Corr))
						if math.Abs(got-want) > 1e-13*(1+size) {
							t.Fatalf("%s bits=%d: %.17g, want %.17g (term size %.3g)", name, b, got, want, size)
						}
						if first == nil {
							first = &a
						} else if a != *first {
							t.Fatalf("%s bits=%d: lanes %+v, first kernel %+v", name, b, a, *first)
						}
					})
				}
			}
		}
	}
}

func TestStudentT(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, m := range []int{1, 3, 4, 9, 64, 257} {
		for _, scale := range []float64{1e-9, 1, 1e3, 1e100, 1e150} {
			s := randSites(rng, m, scale, 2) // with padding sites
			var want, size float64
			for j, v := range s.eta {
				r := s.y[j] - v
				term := math.Log1p(r * r * s.invQ[j])
				want += term
				size += math.Abs(term)
			}
			eachKernel(t, func(t *testing.T) {
				var a Acc
				a.Reset()
				StudentT(s.eta, s.y, s.invQ, &a)
				got := a.LogProd() + Sum(&a.Corr)
				if math.Abs(got-want) > 1e-13*(1+size) {
					t.Fatalf("m=%d scale=%g: %.17g, want %.17g", m, scale, got, want)
				}
			})
		}
	}
	// An overflowing residual must not come back finite.
	eachKernel(t, func(t *testing.T) {
		var a Acc
		a.Reset()
		StudentT([]float64{0, 0, 0, 0, 0}, []float64{1, 1e200, 1, 1, math.Inf(1)}, []float64{1, 1, 1, 1, 1}, &a)
		if v := a.LogProd() + Sum(&a.Corr); !math.IsNaN(v) && !math.IsInf(v, 0) {
			t.Fatalf("overflowing residual gives %v", v)
		}
	})
}
