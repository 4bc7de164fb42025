package gemm

import "math"

// The portable element-wise kernels. exp is evaluated as in the assembly
// (u = n·ln2 + r, exp(u) = 2^n·p(r), u clamped to [−88, 88]) but in
// float64 with a degree-7 polynomial, so the float32 result is correctly
// rounded to within an ulp, without math.Exp's call and special cases:
// SiLU's exp was 59 % of the forward pass's time with math.Exp once the
// products ran on AVX2 (pprof, paper config at (8, 64)).

// exp32 is exp(max(−88, min(88, x))).
func exp32(x float32) float32 {
	u := float64(min(max(x, -88), 88))
	// round(u·log2 e) ∈ [−127, 127]: shifted positive, truncation floors
	// (math.Floor is a call on amd64).
	n := float64(int64(u*math.Log2E+128.5)) - 128
	r := u - n*math.Ln2
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return float32(p * math.Float64frombits(uint64(int64(n)+1023)<<52))
}

// silu1 is x·σ(x) = x/(1 + exp(−x)).
func silu1(x float32) float32 { return x / (1 + exp32(-x)) }

func siluGeneric(x []float32) {
	for i, v := range x {
		x[i] = silu1(v)
	}
}

func addSiLUGeneric(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = silu1(dst[i] + a[i] + b[i])
	}
}

func expSumGeneric(x []float32, m float32) float32 {
	var s float64
	for i, v := range x {
		e := exp32(v - m)
		x[i] = e
		s += float64(e)
	}
	return float32(s)
}

func siluGradGeneric(dz, da, z []float32) {
	da, z = da[:len(dz)], z[:len(dz)]
	for i := range dz {
		s := 1 / (1 + exp32(-z[i]))
		dz[i] = da[i] * s * (1 + z[i]*(1-s))
	}
}
