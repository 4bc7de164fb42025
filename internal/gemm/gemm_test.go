package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naive is the reference: a float64 triple loop over the unpacked weights.
func naive(a []float32, lda int, w []float32, k, n int, bias []float32, c0 []float32, ldc, m int, op Op) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for kk := 0; kk < k; kk++ {
				s += float64(a[i*lda+kk]) * float64(w[kk*n+j])
			}
			if op&WithBias != 0 {
				s += float64(bias[j])
			}
			if op&Accumulate != 0 {
				s += float64(c0[i*ldc+j])
			}
			if op&ApplySiLU != 0 {
				s = s / (1 + math.Exp(-s))
			}
			out[i*n+j] = s
		}
	}
	return out
}

func randSlice(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// eachKernel runs f once under every kernel this CPU can run (Use), so
// every path is checked against the same references, and restores the
// default afterwards.
func eachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	def := Kernel()
	defer func() {
		if err := Use(def); err != nil {
			t.Fatal(err)
		}
	}()
	for _, k := range Kernels() {
		if err := Use(k); err != nil {
			t.Fatal(err)
		}
		t.Run(k, f)
	}
}

func TestMulMatchesNaive(t *testing.T) {
	shapes := []struct{ m, k, n int }{
		{1, 1, 1}, {5, 3, 7}, {7, 16, 16}, {17, 40, 192}, {49, 192, 40}, {100, 40, 33},
		{13, 192, 192}, {3, 5, 65}, {48, 32, 16}, {97, 16, 32}, {61, 160, 1}, {50, 7, 160},
	}
	ops := []Op{0, WithBias, Accumulate, ApplySiLU, WithBias | ApplySiLU, WithBias | Accumulate | ApplySiLU}
	rng := rand.New(rand.NewPCG(1, 2))
	eachKernel(t, func(t *testing.T) {
		for _, s := range shapes {
			for _, op := range ops {
				name := fmt.Sprintf("%dx%dx%d/op=%d", s.m, s.k, s.n, op)
				t.Run(name, func(t *testing.T) {
					lda, ldc := s.k+3, s.n+5 // strides wider than the rows catch stride bugs
					a := randSlice(rng, s.m*lda)
					w := randSlice(rng, s.k*s.n)
					bias := randSlice(rng, s.n)
					c := randSlice(rng, s.m*ldc)
					c0 := append([]float32(nil), c...)
					p, err := Pack(w, s.k, s.n, bias)
					if err != nil {
						t.Fatal(err)
					}
					p.Mul(c, ldc, a, lda, s.m, op)
					want := naive(a, lda, w, s.k, s.n, bias, c0, ldc, s.m, op)
					for i := 0; i < s.m; i++ {
						for j := 0; j < ldc; j++ {
							got := float64(c[i*ldc+j])
							if j >= s.n { // padding between rows must be untouched
								if c[i*ldc+j] != c0[i*ldc+j] {
									t.Fatalf("c[%d,%d] (padding) changed", i, j)
								}
								continue
							}
							if d := math.Abs(got - want[i*s.n+j]); d > 1e-5*(1+math.Sqrt(float64(s.k))) {
								t.Fatalf("c[%d,%d] = %g, want %g", i, j, got, want[i*s.n+j])
							}
						}
					}
				})
			}
		}
	})
}

func TestSiLU(t *testing.T) {
	xs := []float32{0, 1, -1, 1e-8, -1e-8, 3.5, -7.25, 20, -20, 87, -87, 88.5, -88.5, 100, -100, 1e30, -1e30}
	eachKernel(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 15, 16, 17, 33, len(xs)} {
			t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
				x := make([]float32, n)
				for i := range x {
					x[i] = xs[i%len(xs)] * float32(1+i/len(xs))
				}
				a := make([]float32, n)
				b := make([]float32, n)
				for i := range a {
					a[i], b[i] = 0.25, -0.5
				}
				y := append([]float32(nil), x...)
				z := append([]float32(nil), x...)
				SiLU(y)
				AddSiLU(z, a, b)
				for i, v := range x {
					checkSiLU(t, v, y[i])
					checkSiLU(t, v-0.25, z[i])
				}
			})
		}
	})
}

// TestSiLUSweep checks SiLU, AddSiLU and SiLUGrad against float64 on a
// dense sweep of [−90, 90] (every vector lane sees every part of the
// range): the reciprocal and exp approximations must hold everywhere,
// not only at TestSiLU's points.
func TestSiLUSweep(t *testing.T) {
	const n = 36001
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(-90 + 180*float64(i)/float64(n-1))
	}
	zero, one := make([]float32, n), make([]float32, n)
	for i := range one {
		one[i] = 1
	}
	eachKernel(t, func(t *testing.T) {
		y := append([]float32(nil), x...)
		SiLU(y)
		z := append([]float32(nil), x...)
		AddSiLU(z, zero, zero)
		g := make([]float32, n)
		SiLUGrad(g, one, x)
		for i, v := range x {
			checkSiLU(t, v, y[i])
			checkSiLU(t, v, z[i])
			xf := float64(v)
			s := 1 / (1 + math.Exp(-xf))
			want := s * (1 + xf*(1-s))
			if math.Abs(float64(g[i])-want) > 2e-6*math.Max(1, math.Abs(want)) {
				t.Fatalf("SiLUGrad at z=%g: %g, want %g", v, g[i], want)
			}
		}
	})
}

func checkSiLU(t *testing.T, x, got float32) {
	t.Helper()
	xf := float64(x)
	want := xf / (1 + math.Exp(-xf))
	if math.IsNaN(float64(got)) || math.Abs(float64(got)-want) > 2e-6*math.Max(1, math.Abs(want)) {
		t.Fatalf("silu(%g) = %g, want %g", x, got, want)
	}
}

func TestRepackTransposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var p Packed
	eachKernel(t, func(t *testing.T) {
		testRepackTransposed(t, rng, &p)
	})
}

func testRepackTransposed(t *testing.T, rng *rand.Rand, p *Packed) {
	for _, s := range []struct{ m, k, n int }{{9, 100, 65}, {3, 7, 5}, {20, 120, 257}} {
		wt := randSlice(rng, s.n*s.k) // n×k: W's transpose
		w := make([]float32, s.k*s.n)
		for j := 0; j < s.n; j++ {
			for kk := 0; kk < s.k; kk++ {
				w[kk*s.n+j] = wt[j*s.k+kk]
			}
		}
		if err := p.Repack(wt, s.k, s.n, true); err != nil {
			t.Fatal(err)
		}
		a := randSlice(rng, s.m*s.k)
		c := make([]float32, s.m*s.n)
		p.Mul(c, s.n, a, s.k, s.m, 0)
		want := naive(a, s.k, w, s.k, s.n, nil, nil, s.n, s.m, 0)
		for i, v := range c {
			if math.Abs(float64(v)-want[i]) > 1e-4 {
				t.Fatalf("%v: c[%d] = %g, want %g", s, i, v, want[i])
			}
		}
	}
}

func TestExpSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	eachKernel(t, func(t *testing.T) {
		for _, n := range []int{1, 7, 16, 17, 100, 1000} {
			t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(rng.NormFloat64() * 10)
				}
				x[n/2] = -200 // far below the clamp
				m := x[0]
				for _, v := range x {
					m = max(m, v)
				}
				want := make([]float64, n)
				var ws float64
				for i, v := range x {
					want[i] = math.Exp(float64(v - m))
					ws += want[i]
				}
				s := ExpSum(x, m)
				if math.Abs(float64(s)-ws) > 1e-6*ws {
					t.Fatalf("sum %g, want %g", s, ws)
				}
				for i, v := range x {
					if math.Abs(float64(v)-want[i]) > 2e-7*math.Max(want[i], 1e-30)+1e-37 {
						t.Fatalf("x[%d] = %g, want %g", i, v, want[i])
					}
				}
			})
		}
	})
}

func TestSiLUGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	eachKernel(t, func(t *testing.T) {
		for _, n := range []int{1, 15, 16, 33, 200} {
			t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
				z, da, dz := randSlice(rng, n), randSlice(rng, n), make([]float32, n)
				for i := range z {
					z[i] *= 8
				}
				z[0] = -100
				SiLUGrad(dz, da, z)
				for i := range z {
					x := float64(z[i])
					s := 1 / (1 + math.Exp(-x))
					want := float64(da[i]) * s * (1 + x*(1-s))
					if math.Abs(float64(dz[i])-want) > 2e-6*math.Max(1, math.Abs(want)) {
						t.Fatalf("SiLUGrad at z=%g: %g, want %g", z[i], dz[i], want)
					}
				}
			})
		}
	})
}

// TestUse: every kernel Kernels lists is accepted and reported by Kernel;
// unknown names and kernels this CPU lacks are refused, naming what is
// available, and leave the kernel unchanged.
func TestUse(t *testing.T) {
	def := Kernel()
	defer func() {
		if err := Use(def); err != nil {
			t.Fatal(err)
		}
	}()
	if ks := Kernels(); ks[len(ks)-1] != "generic" || ks[0] != def {
		t.Fatalf("Kernels() = %v, default %s: want the default first and generic last", ks, def)
	}
	for _, k := range Kernels() {
		if err := Use(k); err != nil || Kernel() != k {
			t.Fatalf("Use(%q): %v, Kernel() = %s", k, err, Kernel())
		}
	}
	before := Kernel()
	for _, k := range append([]string{"sse4", ""}, kernelNames...) {
		if slices.Contains(Kernels(), k) {
			continue
		}
		err := Use(k)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", k)) || Kernel() != before {
			t.Errorf("Use(%q): err %v, kernel %s (want a refusal naming it, kernel still %s)", k, err, Kernel(), before)
		}
	}
	if CPUFeatures() == "" {
		t.Error("CPUFeatures() is empty")
	}
}
