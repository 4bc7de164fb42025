package posterior

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

const log2Pi = 1.8378770664093453

// Gaussian is afin's one full-rank Gaussian posterior approximation,
// N(Mean, Σ), held by a lower-triangular factor L (row-major d×d, positive
// diagonal) of either its covariance or its precision.
//
// Both factorisations are kept because each method produces one of them
// natively: FRVI optimises the covariance factor (Σ = LLᵀ, so a draw is a
// single triangular mat-vec and the reparameterisation gradient is
// simple), while AFIN's decoder outputs a precision (Λ = LLᵀ after a
// Cholesky, so log q is a single mat-vec). Converting either into the
// other would cost an O(d³) inversion per task and change the draws of
// the published numbers for no gain.
type Gaussian struct {
	Mean []float64
	L    []float64
	// PrecisionFactor is true when L factors the precision (Λ = LLᵀ),
	// false when it factors the covariance (Σ = LLᵀ).
	PrecisionFactor bool
	// Precision is the precision L was computed from, when the Gaussian
	// was built from one (NewGaussianPrecision); nil otherwise.
	Precision []float64
	// Jitter is the diagonal jitter the factorisation needed (0 normally).
	Jitter float64
}

// NewGaussianPrecision factorises a symmetric precision (row-major d×d)
// into a Gaussian. A precision that is positive definite only up to
// rounding gets a small diagonal jitter τ = max(10⁻¹² mean|Λ_ii|, 10⁻¹⁰),
// then 10τ, before giving up; the jitter used is recorded.
func NewGaussianPrecision(mean, precision []float64) (*Gaussian, error) {
	d := len(mean)
	if d < 1 || len(precision) != d*d {
		return nil, fmt.Errorf("gaussian: %d means and %d precision entries, want d ≥ 1 and d²", d, len(precision))
	}
	var diag float64
	for i := range d {
		diag += math.Abs(precision[i*d+i])
	}
	tau := math.Max(1e-12*diag/float64(d), 1e-10)
	for _, j := range []float64{0, tau, 10 * tau} {
		if l, ok := Cholesky(precision, d, j); ok {
			return &Gaussian{Mean: mean, L: l, PrecisionFactor: true, Precision: precision, Jitter: j}, nil
		}
	}
	return nil, errors.New("gaussian: precision is not positive definite even with jitter")
}

// Cholesky returns the lower factor L (row-major d×d, a + jitter·I = LLᵀ)
// of the symmetric matrix a, reading only its lower triangle, and whether
// a + jitter·I is numerically positive definite (a NaN or ±Inf entry is
// not). It is gonum's LAPACK factorisation (mat.Cholesky), afin's one.
func Cholesky(a []float64, d int, jitter float64) ([]float64, bool) {
	sym := mat.NewSymDense(d, nil)
	for i := range d {
		for j := range i {
			sym.SetSym(j, i, a[i*d+j])
		}
		sym.SetSym(i, i, a[i*d+i]+jitter)
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return nil, false
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	l := make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			v := lt.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, false
			}
			l[i*d+j] = v
		}
	}
	return l, true
}

// SolveLowerT solves Lᵀx = b for x by back substitution, with L lower
// triangular (row-major d×d); x and b may be the same slice. It is
// sampling for a precision factor (this Gaussian's, and factor's
// full-rank Gaussian prior, so the simulator's), and the score term L⁻ᵀε
// of FRVI's sticking-the-landing gradient.
//
// It stays by hand rather than gonum's blas64.Trsv: Trsv subtracts the
// terms of each row in the opposite order, which moves draws in their
// last bits, and the simulator's draws fix the tasks' content hashes
// (the reference cache keys).
func SolveLowerT(l []float64, b, x []float64) {
	d := len(b)
	for i := d - 1; i >= 0; i-- {
		v := b[i]
		for k := i + 1; k < d; k++ {
			v -= l[k*d+i] * x[k]
		}
		x[i] = v / l[i*d+i]
	}
}

// solveLowerT4 is SolveLowerT in place on four right-hand sides (each
// x its own b): each side gets the same operations in the same order, so
// the same bits, and the four sides' chains of dependent subtractions and
// divisions, d long, run side by side instead of one after another.
func solveLowerT4(l []float64, x0, x1, x2, x3 []float64) {
	d := len(x0)
	x1, x2, x3 = x1[:d], x2[:d], x3[:d]
	for i := d - 1; i >= 0; i-- {
		v0, v1, v2, v3 := x0[i], x1[i], x2[i], x3[i]
		for k := i + 1; k < d; k++ {
			lk := l[k*d+i]
			v0 -= lk * x0[k]
			v1 -= lk * x1[k]
			v2 -= lk * x2[k]
			v3 -= lk * x3[k]
		}
		li := l[i*d+i]
		x0[i], x1[i], x2[i], x3[i] = v0/li, v1/li, v2/li, v3/li
	}
}

// SolveLower solves Lx = b for x by forward substitution, with L lower
// triangular (row-major d×d); x and b may be the same slice. It is the
// log density of a covariance factor: ‖L⁻¹(z − μ)‖².
func SolveLower(l []float64, b, x []float64) {
	d := len(b)
	for i := range d {
		v := b[i]
		for j := range i {
			v -= l[i*d+j] * x[j]
		}
		x[i] = v / l[i*d+i]
	}
}

// Dim is the dimension d.
func (g *Gaussian) Dim() int { return len(g.Mean) }

// logDetL is Σ log L_ii.
func (g *Gaussian) logDetL() float64 {
	d := len(g.Mean)
	var s float64
	for i := range d {
		s += math.Log(g.L[i*d+i])
	}
	return s
}

// Rand writes one draw into z and returns log q(z) (Approx). The draw
// consumes d standard normals in coordinate order, so Sample(rng, s) is s
// calls of Rand.
func (g *Gaussian) Rand(rng *rand.Rand, z []float64) float64 { return g.rand(rng, z, nil) }

// logDiagonal is log L_ii for every i.
func (g *Gaussian) logDiagonal() []float64 {
	d := len(g.Mean)
	out := make([]float64, d)
	for i := range d {
		out[i] = math.Log(g.L[i*d+i])
	}
	return out
}

// rand is Rand with the logs of L's diagonal given (logDiagonal), or
// taken here when logDiag is nil: a loop of draws takes them once. The
// arithmetic, and so every bit of z and log q, is the same either way.
func (g *Gaussian) rand(rng *rand.Rand, z, logDiag []float64) float64 {
	d := len(g.Mean)
	var quad float64
	for i := range d {
		e := rng.NormFloat64()
		z[i] = e
		quad += e * e
	}
	logL := func(i int) float64 {
		if logDiag != nil {
			return logDiag[i]
		}
		return math.Log(g.L[i*d+i])
	}
	if g.PrecisionFactor {
		// z − μ = L⁻ᵀε, and then Lᵀ(z − μ) = ε: log q needs only ‖ε‖².
		SolveLowerT(g.L, z, z)
		for i := range z[:d] {
			z[i] += g.Mean[i]
		}
		var logDet float64 // Σ log L_ii, as logDetL sums it
		for i := range d {
			logDet += logL(i)
		}
		return logDet - 0.5*float64(d)*log2Pi - 0.5*quad
	}
	// z = μ + Lε in place from the last row up: row i of L reads only
	// ε_0..ε_i, which are still untouched.
	lq := -0.5*quad - 0.5*float64(d)*log2Pi
	for i := d - 1; i >= 0; i-- {
		row := g.L[i*d : i*d+i+1]
		var s float64
		for j, l := range row {
			s += l * z[j]
		}
		z[i] = g.Mean[i] + s
		lq -= logL(i)
	}
	return lq
}

// randFour is rand for four draws in a row, z holding them one after
// another and lq getting their log q; logDiag is logDiagonal's. The
// normals are drawn in the same order and each draw gets the same
// operations, so every bit is rand's, with the four draws' chains of
// dependent operations (the triangular solve's or product's, d long)
// run side by side: at d = 16 the solve was a tenth of an afin-snis unit.
func (g *Gaussian) randFour(rng *rand.Rand, z, lq, logDiag []float64) {
	d := len(g.Mean)
	zs := [4][]float64{z[:d], z[d : 2*d], z[2*d : 3*d], z[3*d : 4*d]}
	var quad [4]float64
	for b, zb := range zs {
		for i := range zb {
			e := rng.NormFloat64()
			zb[i] = e
			quad[b] += e * e
		}
	}
	if g.PrecisionFactor {
		solveLowerT4(g.L, zs[0], zs[1], zs[2], zs[3])
		var logDet float64 // Σ log L_ii, as rand sums it
		for i := range d {
			logDet += logDiag[i]
		}
		for b, zb := range zs {
			for i := range zb {
				zb[i] += g.Mean[i]
			}
			lq[b] = logDet - 0.5*float64(d)*log2Pi - 0.5*quad[b]
		}
		return
	}
	var lqs [4]float64
	for b := range lqs {
		lqs[b] = -0.5*quad[b] - 0.5*float64(d)*log2Pi
	}
	z0, z1, z2, z3 := zs[0], zs[1], zs[2], zs[3]
	for i := d - 1; i >= 0; i-- {
		row := g.L[i*d : i*d+i+1]
		var s0, s1, s2, s3 float64
		for j, l := range row {
			s0 += l * z0[j]
			s1 += l * z1[j]
			s2 += l * z2[j]
			s3 += l * z3[j]
		}
		z0[i], z1[i], z2[i], z3[i] = g.Mean[i]+s0, g.Mean[i]+s1, g.Mean[i]+s2, g.Mean[i]+s3
		for b := range lqs {
			lqs[b] -= logDiag[i]
		}
	}
	copy(lq, lqs[:])
}

// PushMoments are the mean and covariance of g's draws made from standard
// normal vectors whose mean is m and covariance c (StandardMoments): Rand
// maps ε to μ + Lε, or to μ + L⁻ᵀε for a precision factor, so the moments
// map as μ + Am and A c Aᵀ with that A. They equal the moments of the
// draws themselves up to rounding.
func (g *Gaussian) PushMoments(m, c []float64) (mean, cov []float64) {
	d := len(g.Mean)
	// a is A row-major: L, or L⁻ᵀ column by column (Lᵀ a_j = e_j).
	a := make([]float64, d*d)
	if g.PrecisionFactor {
		e, col := make([]float64, d), make([]float64, d)
		for j := range d {
			clear(e)
			e[j] = 1
			SolveLowerT(g.L, e, col)
			for i := range d {
				a[i*d+j] = col[i]
			}
		}
	} else {
		copy(a, g.L)
	}
	mean = make([]float64, d)
	for i := range d {
		mean[i] = g.Mean[i] + dot(a[i*d:(i+1)*d], m)
	}
	ac := make([]float64, d*d) // A c
	for i := range d {
		for j := range d {
			var s float64
			for k := range d {
				s += a[i*d+k] * c[k*d+j]
			}
			ac[i*d+j] = s
		}
	}
	cov = make([]float64, d*d)
	for i := range d {
		for j := range d {
			cov[i*d+j] = dot(ac[i*d:(i+1)*d], a[j*d:(j+1)*d])
		}
	}
	return mean, cov
}

// Sample draws s points, row-major s×d.
func (g *Gaussian) Sample(rng *rand.Rand, s int) []float64 {
	d := len(g.Mean)
	z := make([]float64, s*d)
	for n := range s {
		g.Rand(rng, z[n*d:(n+1)*d])
	}
	return z
}

// LogQ is log q(z).
func (g *Gaussian) LogQ(z []float64) float64 {
	d := len(g.Mean)
	var q float64
	if g.PrecisionFactor {
		// ‖Lᵀ(z − μ)‖².
		for i := range d {
			var v float64
			for k := i; k < d; k++ {
				v += g.L[k*d+i] * (z[k] - g.Mean[k])
			}
			q += v * v
		}
		return g.logDetL() - 0.5*float64(d)*log2Pi - 0.5*q
	}
	// ‖L⁻¹(z − μ)‖².
	u := make([]float64, d)
	for i := range d {
		u[i] = z[i] - g.Mean[i]
	}
	SolveLower(g.L, u, u)
	for _, v := range u {
		q += v * v
	}
	return -g.logDetL() - 0.5*float64(d)*log2Pi - 0.5*q
}

// Cov is Σ, row-major: LLᵀ for a covariance factor, L⁻ᵀL⁻¹ for a
// precision factor.
func (g *Gaussian) Cov() []float64 {
	if g.PrecisionFactor {
		return lowerInverseGram(g.L, len(g.Mean))
	}
	d := len(g.Mean)
	c := make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			var s float64
			for k := 0; k <= j; k++ {
				s += g.L[i*d+k] * g.L[j*d+k]
			}
			c[i*d+j], c[j*d+i] = s, s
		}
	}
	return c
}

// lowerInverseGram is (L⁻¹)ᵀL⁻¹ for lower-triangular L.
func lowerInverseGram(l []float64, d int) []float64 {
	// Columns of L⁻¹ by forward substitution.
	inv := make([]float64, d*d)
	for c := range d {
		for i := range d {
			v := 0.0
			if i == c {
				v = 1
			}
			for k := range i {
				v -= l[i*d+k] * inv[k*d+c]
			}
			inv[i*d+c] = v / l[i*d+i]
		}
	}
	cov := make([]float64, d*d)
	for i := range d {
		for j := i; j < d; j++ {
			var s float64
			for k := max(i, j); k < d; k++ {
				s += inv[k*d+i] * inv[k*d+j]
			}
			cov[i*d+j], cov[j*d+i] = s, s
		}
	}
	return cov
}

// Moments returns the mean and the covariance (row-major) in closed form.
func (g *Gaussian) Moments() (mean, cov []float64) {
	return append([]float64(nil), g.Mean...), g.Cov()
}

// Entropy is the differential entropy of q.
func (g *Gaussian) Entropy() float64 {
	d := float64(len(g.Mean))
	h := 0.5 * d * (1 + log2Pi)
	if g.PrecisionFactor {
		return h - g.logDetL()
	}
	return h + g.logDetL()
}
