package f64vec

import (
	"fmt"
	"math"
	"runtime"

	"github.com/afin-bench/afin/internal/kernelset"
	"golang.org/x/sys/cpu"
)

// impl is one implementation of the package's kernels; forcing one with
// Use forces it for every entry point.
type impl struct {
	name     string
	expNeg   func(dst, src []float64)
	matVecT  func(xt, z, eta []float64)
	logistic func(eta, y, n []float64, ni []int64, bits int, a *Acc)
	studentT func(eta, y, invQ []float64, a *Acc)
	// The gradient forms: the same sums, bit for bit, plus each site's
	// weight in w.
	logisticGrad func(eta, y, n []float64, ni []int64, bits int, a *Acc, w []float64)
	studentTGrad func(eta, y, invQ []float64, a *Acc, w []float64)
	addMatVec    func(xt, w []float64, c float64, grad []float64)
}

// kernelNames are every implementation's name, on any machine, for the
// error that refuses one this CPU cannot run.
var kernelNames = []string{"avx2", "generic"}

var genericImpl = &impl{
	name:     "generic",
	expNeg:   expNegGeneric,
	matVecT:  matVecTGeneric,
	logistic: logisticGeneric,
	studentT: studentTGeneric,

	logisticGrad: logisticGradGeneric,
	studentTGrad: studentTGradGeneric,
	addMatVec:    addMatVecGeneric,
}

// kernels are the implementations this build can run on this CPU,
// fastest first, and the one in use.
var kernels = kernelset.New("f64vec", kernelNames, append(archImpls(), genericImpl), func(im *impl) string { return im.name })

// Kernel names the implementation in use: "avx2" or "generic".
func Kernel() string { return kernels.Name() }

// Kernels lists, fastest first, the implementations this CPU can run.
func Kernels() []string { return kernels.Names() }

// Fast reports whether the kernel in use beats scalar code: an assembly
// kernel, or the generic one where math.FMA is one instruction. Without
// hardware FMA (amd64 before Haswell and Piledriver, 386, 32-bit arm) Go's
// math.FMA is a software routine, and the generic kernels, built on it so
// that they give the assembly's bits, are far slower than plain loops.
func Fast() bool { return Kernel() != genericImpl.name || nativeFMA() }

// nativeFMA reports whether math.FMA compiles to an instruction here.
func nativeFMA() bool {
	switch runtime.GOARCH {
	case "amd64":
		return cpu.X86.HasFMA
	case "arm64", "ppc64", "ppc64le", "s390x", "riscv64":
		return true
	}
	return false
}

// Use forces the named implementation for every later call (tests and
// benchmarks compare kernels with it). It refuses a kernel this CPU or
// build cannot run.
func Use(name string) error { return kernels.Use(name, "") }

// ExpNegAbs sets dst[j] = exp(−|src[j]|) for j < len(src) (dst at least
// as long): within 2 ulps of math.Exp, 0 below −745.2, NaN for NaN.
func ExpNegAbs(dst, src []float64) { kernels.Get().expNeg(dst[:len(src)], src) }

// MatVecT sets eta[j] = Σᵢ z[i]·xt[i·np + j] for j < np = len(eta): the
// linear predictors of np sites whose design is stored transposed (row i
// of xt holds coordinate i of every site). The sum runs over i in order,
// one FMA per term, so every kernel gives the same bits.
func MatVecT(xt, z, eta []float64) {
	if len(xt) < len(z)*len(eta) {
		panic(fmt.Sprintf("f64vec: MatVecT: %d design entries for %d×%d", len(xt), len(z), len(eta)))
	}
	kernels.Get().matVecT(xt, z, eta)
}

// Acc holds four lanes of running site sums; site j of a call goes to
// lane j mod 4. Reset it before the first call.
type Acc struct {
	Lin  [4]float64 // Σ y·η − n·max(η, 0) (logistic)
	Corr [4]float64 // Σ n·δ/u, δ = (1+t) − fl(1+t) the rounding of each u
	Prod [4]float64 // Π uⁿ with its exponent moved into Exp, in [1, 2)
	Exp  [4]int64   // Σ of the exponents moved out of Prod
}

// Reset empties the sums.
func (a *Acc) Reset() { *a = Acc{Prod: [4]float64{1, 1, 1, 1}} }

// ln2Hi has its low 21 bits zero, so k·ln2Hi is exact for |k| < 2³²:
// LogProd adds the exponent sum without rounding it first.
const (
	ln2Hi = 0x1.62e42fee00000p-1
	ln2Lo = 0x1.a39ef35793c76p-33
)

// LogProd is Σ log u over the lanes' products, log Π Prodᵢ + Σ Expᵢ·ln2:
// the four lanes in [1, 2) multiply to below 16, so one log does, at the
// cost of three roundings of 2⁻⁵³.
func (a *Acc) LogProd() float64 {
	k := float64((a.Exp[0] + a.Exp[1]) + (a.Exp[2] + a.Exp[3]))
	s := math.Log((a.Prod[0] * a.Prod[1]) * (a.Prod[2] * a.Prod[3]))
	return k*ln2Hi + (k*ln2Lo + s)
}

// Sum adds up the four lanes of v.
func Sum(v *[4]float64) float64 { return (v[0] + v[1]) + (v[2] + v[3]) }

// maxFlatSites is the most sites one bits = 0 kernel call takes: the
// lanes' products of u ≤ 2 stay below 2^(maxFlatSites/4) between
// renormalisations.
const maxFlatSites = 4 * 960

// Logistic adds, for each logistic site j < len(eta) with linear
// predictor eta[j], response y[j] and n[j] trials (ni[j] as an integer,
// 0 ≤ ni[j] < 2^bits, bits ≤ 7), y·η − n·max(η,0) to Lin, and
// n·log1p(exp(−|η|)) to the product and its correction. A site with
// n = 0 adds nothing. bits = 0 says every site has one trial (ni is not
// read, and may be nil): the product then skips the powering.
func Logistic(eta, y, n []float64, ni []int64, bits int, a *Acc) {
	m := len(eta)
	if len(y) < m || len(n) < m || (bits > 0 && len(ni) < m) || bits < 0 || bits > 7 {
		panic(fmt.Sprintf("f64vec: Logistic: %d sites, %d y, %d n, %d ni, %d bits", m, len(y), len(n), len(ni), bits))
	}
	k := kernels.Get().logistic
	if bits > 0 {
		k(eta, y[:m], n[:m], ni[:m], bits, a)
		return
	}
	for lo := 0; lo < m; lo += maxFlatSites {
		hi := min(m, lo+maxFlatSites)
		k(eta[lo:hi], y[lo:hi], n[lo:hi], nil, 0, a)
	}
}

// LogisticGrad is Logistic that also sets w[j] to site j's gradient
// weight ∂ℓⱼ/∂ηⱼ = y[j] − n[j]·σ(η[j]), σ(η) = 1/(1+e) for η ≥ 0 and
// e/(1+e) below from the same e = exp(−|η|) as the sums (within 2 ulps
// of math.Exp, and e^−708 below that), with one division. The sums in a
// are those Logistic adds, bit for bit, so a value computed with either
// is the same. w may be eta itself: each η is read before its w is
// written. A site with n = 0 and y = 0 gets w = 0.
func LogisticGrad(eta, y, n []float64, ni []int64, bits int, a *Acc, w []float64) {
	m := len(eta)
	if len(y) < m || len(n) < m || len(w) < m || (bits > 0 && len(ni) < m) || bits < 0 || bits > 7 {
		panic(fmt.Sprintf("f64vec: LogisticGrad: %d sites, %d y, %d n, %d ni, %d w, %d bits", m, len(y), len(n), len(ni), len(w), bits))
	}
	k := kernels.Get().logisticGrad
	if bits > 0 {
		k(eta, y[:m], n[:m], ni[:m], bits, a, w[:m])
		return
	}
	// The same split as Logistic's, so that the products are renormalised
	// at the same sites.
	for lo := 0; lo < m; lo += maxFlatSites {
		hi := min(m, lo+maxFlatSites)
		k(eta[lo:hi], y[lo:hi], n[lo:hi], nil, 0, a, w[lo:hi])
	}
}

// StudentT adds, for each Student-t site j < len(eta) with residual
// r = y[j] − eta[j] and t = r²·invQ[j], log1p(t) to the product and its
// correction (the caller weighs the sum by −(ν+1)/2). Padding sites with
// y = 0 and η = 0 add nothing. An infinite or NaN t makes Corr NaN.
func StudentT(eta, y, invQ []float64, a *Acc) {
	m := len(eta)
	if len(y) < m || len(invQ) < m {
		panic(fmt.Sprintf("f64vec: StudentT: %d sites, %d y, %d 1/q", m, len(y), len(invQ)))
	}
	kernels.Get().studentT(eta, y[:m], invQ[:m], a)
}

// StudentTGrad is StudentT that also sets w[j] = r·invQ[j]/u, u =
// fl(1 + r²·invQ[j]), that is r/(q + r²) for q = 1/invQ[j]: site j's
// gradient weight ∂/∂ηⱼ of −(ν+1)/2·log1p(r²/q) divided by ν+1, which
// the caller applies once per block (AddMatVec's c). The sums in a are
// StudentT's, bit for bit; w may be eta itself. Padding sites (y = 0,
// η = 0) get w = 0.
func StudentTGrad(eta, y, invQ []float64, a *Acc, w []float64) {
	m := len(eta)
	if len(y) < m || len(invQ) < m || len(w) < m {
		panic(fmt.Sprintf("f64vec: StudentTGrad: %d sites, %d y, %d 1/q, %d w", m, len(y), len(invQ), len(w)))
	}
	kernels.Get().studentTGrad(eta, y[:m], invQ[:m], a, w[:m])
}

// AddMatVec sets grad[i] += c·Σⱼ xt[i·np + j]·w[j] for i < len(grad),
// np = len(w): the transposed design of MatVecT times the sites'
// weights, the gradient's Xᵀw. Each row is summed in four lanes (site j
// in lane j mod 4) by FMA, the lanes folded as (l₀+l₂)+(l₁+l₃), the sites
// beyond the last full four added after them, and c·s added to grad[i]
// by one FMA; every kernel gives the same bits.
func AddMatVec(xt, w []float64, c float64, grad []float64) {
	if len(xt) < len(grad)*len(w) {
		panic(fmt.Sprintf("f64vec: AddMatVec: %d design entries for %d×%d", len(xt), len(grad), len(w)))
	}
	kernels.Get().addMatVec(xt, w, c, grad)
}
