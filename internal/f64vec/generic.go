package f64vec

import "math"

// Constants of exp(−|x|) = 2^k·p(r) (see the package doc); the assembly
// kernels carry the same bits in their DATA tables.
const (
	log2e     = 0x1.71547652b82fep0
	expLn2Hi  = 0x1.62e42fefa39efp-1  // ln2 rounded to float64
	expLn2Lo  = 0x1.abc9e3b39803fp-56 // ln2 − expLn2Hi
	expClamp  = 750                   // |x| beyond which exp(−|x|) is 0
	siteClamp = 708                   // the logistic kernels' clamp
	mantMask  = 1<<52 - 1
	oneBits   = 0x3ff0000000000000 // math.Float64bits(1)
)

// expPoly are 1/k! for k = 0…13 rounded to float64 (TestExpPoly checks
// them against exact rationals).
var expPoly13 = [14]float64{
	0x1p0, 0x1p0, 0x1p-1, 0x1.5555555555555p-3,
	0x1.5555555555555p-5, 0x1.1111111111111p-7, 0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13,
	0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26,
	0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
}

// pow2 is 2^h for an integral h in [−1022, 1023], built in the exponent
// field.
func pow2(h float64) float64 { return math.Float64frombits(uint64(int64(h)+1023) << 52) }

// magic is 1.5·2⁵²: x + magic rounds x to an integer held in the low bits.
const magic = 0x1.8p52

// expPoly returns k = round(x·log₂e) for x ≤ 0 and p(r), r = x − k·ln2,
// exp(x) = 2^k·p(r). The polynomial's tail T (degree 11) is summed as
// b₀ + r⁴(b₁ + r⁴b₂), each b = cᵢ + cᵢ₊₁r + r²(cᵢ₊₂ + cᵢ₊₃r) computed as
// fma(r, cᵢ₊₁, fma(r², cᵢ₊₂ + cᵢ₊₃r, cᵢ)): a third of Horner's chain of
// dependent FMAs; the last two steps, 1 + r(1 + rT), are Horner's, and
// their roundings decide the result. The assembly kernels do the same
// operations in the same order.
func expPoly(x float64) (k, p float64) {
	c := &expPoly13
	k = math.FMA(x, log2e, magic) - magic
	r := math.FMA(-k, expLn2Hi, x)
	r = math.FMA(-k, expLn2Lo, r)
	r2 := r * r
	r4 := r2 * r2
	pair := func(i int) float64 {
		return math.FMA(r, c[i+1], math.FMA(r2, math.FMA(r, c[i+3], c[i+2]), c[i]))
	}
	t := math.FMA(r4, math.FMA(r4, pair(10), pair(6)), pair(2))
	return k, math.FMA(r, math.FMA(r, t, c[1]), c[0])
}

// expNegAbs is exp(−|v|) over the whole range: 2^k in two halves, each
// normal, so that a subnormal result is rounded once, by the last
// product.
func expNegAbs(v float64) float64 {
	x := -math.Min(math.Abs(v), expClamp)
	if x != x {
		return x
	}
	k, p := expPoly(x)
	h := math.Floor(k * 0.5)
	return p * pow2(h) * pow2(k-h)
}

// expNegAbsSite is the logistic kernels' exp(−|v|): |v| is clamped at
// 708 instead, where 2^k is still normal, so one factor does. Below
// e^−708 ≈ 3e-308 the result is that instead of the true value, which
// changes log1p(e) by less than 3e-308.
func expNegAbsSite(v float64) float64 {
	a := math.Abs(v)
	if a > siteClamp { // a comparison, not math.Min: a NaN passes either way
		a = siteClamp
	}
	k, p := expPoly(-a)
	return p * pow2(k)
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

// logisticGeneric is the logistic kernel in Go. With bits = 0 (every n
// is 1) the product takes u directly and is renormalised once, at the
// end, as the assembly does; the products of u ≤ 2 stay finite for
// maxFlatSites sites.
func logisticGeneric(eta, y, n []float64, ni []int64, bits int, a *Acc) {
	logisticGradGeneric(eta, y, n, ni, bits, a, nil)
}

// logisticGradGeneric is logisticGeneric that also sets w[j] to site j's
// gradient weight y − n·σ(η) unless w is nil; w may be eta itself (η is
// read before w is written). σ(η) is 1/u for η ≥ 0 and e/u below, one
// division, the numerator chosen by η's sign bit as VBLENDVPD does (e = 1
// at η = −0, where both agree).
func logisticGradGeneric(eta, y, n []float64, ni []int64, bits int, a *Acc, w []float64) {
	for j, v := range eta {
		l := j & 3
		e := expNegAbsSite(v)
		u := 1 + e
		nj := n[j]
		if w != nil {
			num := 1.0
			if math.Signbit(v) {
				num = e
			}
			w[j] = math.FMA(-nj, num/u, y[j])
		}
		// 1/u from the line through (1, 1) and (2, ½): within 9 % on
		// [1, 2], and it only scales δ ≤ 2⁻⁵³.
		inv := math.FMA(-u, 0.5, 1.5)
		a.Corr[l] = math.FMA(nj, (e-(u-1))*inv, a.Corr[l])
		var pos float64 // max(η, 0), 0 for a NaN η as VMAXPD gives
		if v > 0 {
			pos = v
		}
		a.Lin[l] += math.FMA(v, y[j], -(nj * pos))
		if bits == 0 {
			a.Prod[l] *= u
		} else {
			a.mulProd(l, powBits(u, ni[j], bits))
		}
	}
	for l := range a.Prod {
		a.mulProd(l, 1)
	}
}

func studentTGeneric(eta, y, invQ []float64, a *Acc) { studentTGradGeneric(eta, y, invQ, a, nil) }

// studentTGradGeneric is studentTGeneric that also sets w[j] =
// r·(1/q)/u = r/(q + r²) unless w is nil; w may be eta itself.
func studentTGradGeneric(eta, y, invQ []float64, a *Acc, w []float64) {
	for j, v := range eta {
		l := j & 3
		r := y[j] - v
		t := r * r * invQ[j]
		u := 1 + t
		if w != nil {
			w[j] = r * invQ[j] / u
		}
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

// addMatVecGeneric is AddMatVec in Go: four lane sums per row over the
// full groups of four sites, combined as (l₀+l₂)+(l₁+l₃) the way the
// assembly folds a ymm register, then the remaining sites one FMA each.
func addMatVecGeneric(xt, w []float64, c float64, grad []float64) {
	np := len(w)
	v := np &^ 3
	for i := range grad {
		row := xt[i*np : (i+1)*np]
		var l0, l1, l2, l3 float64
		for j := 0; j < v; j += 4 {
			x, wj := row[j:j+4:j+4], w[j:j+4:j+4]
			l0 = math.FMA(x[0], wj[0], l0)
			l1 = math.FMA(x[1], wj[1], l1)
			l2 = math.FMA(x[2], wj[2], l2)
			l3 = math.FMA(x[3], wj[3], l3)
		}
		s := (l0 + l2) + (l1 + l3)
		for j := v; j < np; j++ {
			s = math.FMA(row[j], w[j], s)
		}
		grad[i] = math.FMA(c, s, grad[i])
	}
}
