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

// wantLogistic is site j's gradient weight y − n·σ(η) from math.Exp,
// with σ(η) = 1/(1+e^−η) or e^η/(1+e^η) as η's sign says.
func wantLogistic(eta, y, n float64) float64 {
	if eta >= 0 {
		return y - n/(1+math.Exp(-eta))
	}
	e := math.Exp(eta)
	return y - n*e/(1+e)
}

// TestLogisticGrad: the sums are Logistic's bit for bit (w in place of η
// or apart), every kernel writes the same weights, and the weights agree
// with math.Exp's to 4 ulps of n·σ (the scale y − n·σ may cancel down
// from) plus 4 of the weight, or to e^−708 where the kernels clamp.
func TestLogisticGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, m := range []int{1, 3, 4, 9, 64, 257, 4000} {
		for _, scale := range []float64{0.01, 3, 40, 1e3} {
			for _, maxN := range []int64{1, 7, 64} {
				s := randSites(rng, m, scale, maxN)
				if m > 3 {
					s.eta[1], s.eta[2] = math.Copysign(0, -1), 745.5
				}
				bits := []int{bitLen(maxN)}
				if maxN == 1 {
					bits = append(bits, 0)
				}
				for _, b := range bits {
					name := fmt.Sprintf("m=%d/eta=%g/n<=%d/bits=%d", m, scale, maxN, b)
					var firstW []float64
					eachKernel(t, func(t *testing.T) {
						var a, ag, ai Acc
						a.Reset()
						ag.Reset()
						ai.Reset()
						Logistic(s.eta, s.y, s.n, s.ni, b, &a)
						w := make([]float64, m)
						LogisticGrad(s.eta, s.y, s.n, s.ni, b, &ag, w)
						inPlace := append([]float64(nil), s.eta...)
						LogisticGrad(inPlace, s.y, s.n, s.ni, b, &ai, inPlace)
						if ag != a || ai != a {
							t.Fatalf("%s: LogisticGrad's lanes %+v (in place %+v), Logistic's %+v", name, ag, ai, a)
						}
						for j, v := range s.eta {
							if math.Float64bits(inPlace[j]) != math.Float64bits(w[j]) {
								t.Fatalf("%s: in place w[%d] = %v, apart %v", name, j, inPlace[j], w[j])
							}
							want := wantLogistic(v, s.y[j], s.n[j])
							tol := 4 * 0x1p-52 * (math.Abs(s.y[j]-want) + math.Abs(want))
							if math.Abs(v) > 708 {
								tol += s.n[j] * 0x1p-1020
							}
							if math.Abs(w[j]-want) > tol && w[j] != want {
								t.Fatalf("%s: w[%d] = %.17g at η = %v, want %.17g", name, j, w[j], v, want)
							}
						}
						if firstW == nil {
							firstW = w
						} else if !equalBits(w, firstW) {
							t.Fatalf("%s: weights differ from the first kernel's", name)
						}
					})
				}
			}
		}
	}
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestStudentTGrad: StudentT's sums bit for bit, and w = r/(q + r²)
// within 3 ulps, the same on every kernel; an overflowing residual gives
// w = 0 (r/∞), as the scalar r/(q + r²) does.
func TestStudentTGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, m := range []int{1, 3, 4, 9, 64, 257} {
		for _, scale := range []float64{1e-9, 1, 1e3, 1e100, 1e150} {
			s := randSites(rng, m, scale, 2)
			var firstW []float64
			eachKernel(t, func(t *testing.T) {
				var a, ag Acc
				a.Reset()
				ag.Reset()
				StudentT(s.eta, s.y, s.invQ, &a)
				w := make([]float64, m)
				StudentTGrad(s.eta, s.y, s.invQ, &ag, w)
				if ag != a {
					t.Fatalf("m=%d scale=%g: StudentTGrad's lanes %+v, StudentT's %+v", m, scale, ag, a)
				}
				for j, v := range s.eta {
					r := s.y[j] - v
					want := r / (1/s.invQ[j] + r*r)
					if math.Abs(w[j]-want) > 3*0x1p-52*math.Abs(want) {
						t.Fatalf("m=%d scale=%g: w[%d] = %.17g, want %.17g", m, scale, j, w[j], want)
					}
				}
				if firstW == nil {
					firstW = w
				} else if !equalBits(w, firstW) {
					t.Fatalf("m=%d scale=%g: weights differ from the first kernel's", m, scale)
				}
			})
		}
	}
	eachKernel(t, func(t *testing.T) {
		var a Acc
		a.Reset()
		w := make([]float64, 5)
		StudentTGrad([]float64{0, 0, 0, 0, 0}, []float64{1, 1e200, 1, 1, 1e300}, []float64{1, 1, 1, 1, 1}, &a, w)
		if w[1] != 0 || w[4] != 0 {
			t.Fatalf("overflowing residuals: w = %v, want 0 at 1 and 4", w)
		}
	})
}

// TestAddMatVec against a float64 sum of the products, and the same bits
// on every kernel, for row counts around the assembly's four-row passes
// and site counts with and without a partial group of four.
func TestAddMatVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, d := range []int{1, 2, 3, 4, 5, 8, 9, 16} {
		for _, np := range []int{0, 1, 3, 4, 7, 16, 20, 64, 256} {
			xt := make([]float64, d*np)
			for i := range xt {
				xt[i] = rng.NormFloat64()
			}
			w := make([]float64, np)
			for j := range w {
				w[j] = 5 * rng.NormFloat64()
			}
			g0 := make([]float64, d)
			for i := range g0 {
				g0[i] = rng.NormFloat64()
			}
			const c = -1.75
			var first []float64
			eachKernel(t, func(t *testing.T) {
				g := append([]float64(nil), g0...)
				AddMatVec(xt, w, c, g)
				for i := range g {
					var s, scale float64
					for j := range w {
						s += xt[i*np+j] * w[j]
						scale += math.Abs(xt[i*np+j] * w[j])
					}
					want := g0[i] + c*s
					if math.Abs(g[i]-want) > 1e-14*(math.Abs(g0[i])+math.Abs(c)*scale) {
						t.Fatalf("d=%d np=%d: grad[%d] = %.17g, want %.17g", d, np, i, g[i], want)
					}
				}
				if first == nil {
					first = g
				} else if !equalBits(g, first) {
					t.Fatalf("d=%d np=%d: %v, first kernel %v", d, np, g, first)
				}
			})
		}
	}
}
