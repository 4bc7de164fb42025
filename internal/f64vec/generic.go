package f64vec

import "math"

// Constants of exp(−|x|) = 2^k·p(r) (see the package doc); the assembly
// kernels carry the same bits in their DATA tables.
const (
	log2e    = 0x1.71547652b82fep0
	expLn2Hi = 0x1.62e42fefa39efp-1  // ln2 rounded to float64
	expLn2Lo = 0x1.abc9e3b39803fp-56 // ln2 − expLn2Hi
	expClamp = 750                   // |x| beyond which exp(−|x|) is 0
	mantMask = 1<<52 - 1
	oneBits  = 0x3ff0000000000000 // math.Float64bits(1)
)

// expPoly are 1/k! for k = 0…13 rounded to float64 (TestExpPoly checks
// them against exact rationals).
var expPoly = [14]float64{
	0x1p0, 0x1p0, 0x1p-1, 0x1.5555555555555p-3,
	0x1.5555555555555p-5, 0x1.1111111111111p-7, 0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13,
	0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26,
	0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
}

// pow2 is 2^h for an integral h in [−1022, 1023], built in the exponent
// field.
func pow2(h float64) float64 { return math.Float64frombits(uint64(int64(h)+1023) << 52) }

// expNegAbs is exp(−|v|) by the package's algorithm, one lane of the
// assembly kernels.
func expNegAbs(v float64) float64 {
	x := -math.Min(math.Abs(v), expClamp)
	if x != x {
		return x
	}
	k := math.RoundToEven(x * log2e)
	r := math.FMA(-k, expLn2Hi, x)
	r = math.FMA(-k, expLn2Lo, r)
	p := expPoly[13]
	for i := 12; i >= 0; i-- {
		p = math.FMA(p, r, expPoly[i])
	}
	// Two halves of 2^k, each normal, so a subnormal result is rounded
	// once, by the last product.
	h := math.Floor(k * 0.5)
	return p * pow2(h) * pow2(k-h)
}

func expNegGeneric(dst, src []float64) {
	for j, v := range src {
		dst[j] = expNegAbs(v)
	}
}

func matVecTGeneric(xt, z, eta []float64) { matVecTCols(xt, z, eta, 0) }

// matVecTCols is MatVecT for the sites j ≥ j0 only.
func matVecTCols(xt, z, eta []float64, j0 int) {
	np := len(eta)
	for j := j0; j < np; j++ {
		var s float64
		for i, zi := range z {
			s = math.FMA(zi, xt[i*np+j], s)
		}
		eta[j] = s
	}
}

// mulProd multiplies lane l's product by f and moves its exponent into
// Exp, leaving the product in [1, 2).
func (a *Acc) mulProd(l int, f float64) {
	b := math.Float64bits(a.Prod[l] * f)
	a.Exp[l] += int64(b>>52) - 1023
	a.Prod[l] = math.Float64frombits(b&mantMask | oneBits)
}

// powBits is uⁿ by binary powering over the low bits bits of n, as
// factor's powSmall does.
func powBits(u float64, n int64, bits int) float64 {
	r := 1.0
	for b := range bits {
		if n>>b&1 == 1 {
			r *= u
		}
		u *= u
	}
	return r
}

func logisticGeneric(eta, y, n []float64, ni []int64, bits int, a *Acc) {
	for j, v := range eta {
		l := j & 3
		e := expNegAbs(v)
		u := 1 + e
		nj := n[j]
		a.Corr[l] += nj * ((e - (u - 1)) / u)
		a.Lin[l] += y[j]*v - nj*(0.5*(v+math.Abs(v)))
		a.mulProd(l, powBits(u, ni[j], bits))
	}
}

func studentTGeneric(eta, y, invQ []float64, a *Acc) {
	for j, v := range eta {
		l := j & 3
		r := y[j] - v
		t := r * r * invQ[j]
		u := 1 + t
		s := u - 1 // TwoSum(1, t): the rounding of u exactly
		delta := (1 - (u - s)) + (t - s)
		a.Corr[l] += delta / u
		// u's exponent goes to Exp before the product, so a huge u
		// cannot overflow it.
		b := math.Float64bits(u)
		a.Exp[l] += int64(b>>52) - 1023
		a.mulProd(l, math.Float64frombits(b&mantMask|oneBits))
	}
}
