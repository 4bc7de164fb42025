package factor

import (
	"math"
	"sync"
)

// Packed is a read-only, flattened copy of a Task for evaluating log p̃
// and its gradient many times (NUTS, VI gradient loops, SNIS weights).
// Task's methods walk a slice of Likelihood interfaces, each factor's
// design row a separate allocation; Packed instead holds two layouts of
// the likelihood data with no interface calls:
//
//   - batch.go's, where f64vec's kernels are fast (f64vec.Fast): the
//     logistic, Student-t and lin_gaussian designs transposed and padded
//     to four sites, so that one point's linear predictors, per-site
//     terms (with each site's gradient weight) and Xᵀw run four sites per
//     instruction on AVX2. LogDensity, LogDensityGrad and LogDensities
//     all take it, so they give the same value at the same z bit for bit.
//   - this file's scalar one, every family's design rows contiguous
//     (row-major, n×d) next to their per-row constants, evaluated in
//     chunks of sites: all linear predictors Xz (four rows at a time),
//     then the per-site terms, then Xᵀw (four columns at a time). It
//     serves where f64vec is not fast, and every point whose batched
//     value or coordinates are not finite, so that NaN and infinite
//     outcomes are always its own.
//
// Both make the per-site terms cheaper than Task's in two ways:
//
//   - A logistic site computes e = exp(−|η|) once, for both the softplus
//     max(η,0) + log1p(e) and the sigmoid (1/(1+e), or e/(1+e) for η < 0).
//   - The log1p terms of the logistic and Student-t sites are summed as
//     the log of a product, with the rounding of each 1+t recovered
//     exactly and added back: one math.Log per block instead of one
//     math.Log1p per site (see logitRows.eval for the error bound).
//
// The value and gradient equal Task.LogDensity and Task.LogDensityGrad up
// to rounding: the value within a few units of 2⁻⁵³ per site (the order of
// the rounding error of summing the sites at all), the gradient within a
// few ulps per term. Factors are summed family by family rather than in
// task order, and reciprocals are precomputed where Task divides. The
// tests hold every family mix, on both layouts, to 1e-12 of the summed
// term sizes, value and gradient.
//
// A Packed is a snapshot: build a new one after changing the task. Its
// methods are safe for concurrent use, and allocate nothing per call once
// each goroutine using it has its scratch (a sync.Pool of them).
type Packed struct {
	d     int
	prior Prior // evaluated through its interface unless diag_gaussian
	// diag_gaussian prior: location and reciprocal scales; nil otherwise.
	pLoc, pInvScale []float64

	lin   linRows
	logit logitRows // bernoulli_logit (trials 1) and binomial_logit
	stud  studentRows
	vec   []vecGaussian
	other []Likelihood // likelihood types this file does not know

	batch   batch     // the layout of f64vec's kernels (batch.go)
	scratch sync.Pool // *batchScratch, one per goroutine evaluating
}

// linRows are lin_gaussian sites: residual r = y − xᵀz, weight 1/σ².
type linRows struct {
	x, y, invS2 []float64
}

// logitRows are logistic sites with trials n (1 for bernoulli_logit,
// whose terms are the binomial ones with n = 1).
type logitRows struct {
	x, y, n []float64
	ni      []int // n as an integer, for powSmall
}

// studentRows are lin_student_t sites with q = νσ², nu1 = ν+1 and
// negHalfNu1 = −(ν+1)/2.
type studentRows struct {
	x, y, q, invQ, nu1, negHalfNu1 []float64
}

type vecGaussian struct {
	y     []float64
	invS2 float64
}

// Packed builds the packed evaluator of t, which must be valid. It copies
// the likelihood data; the prior (unless diag_gaussian) and likelihoods
// of types defined outside this package are shared with t.
func (t *Task) Packed() *Packed {
	p := &Packed{d: t.D, prior: t.Prior}
	if g, ok := t.Prior.(*DiagGaussian); ok {
		p.pLoc = append([]float64(nil), g.Loc...)
		p.pInvScale = make([]float64, len(g.Scale))
		for i, s := range g.Scale {
			p.pInvScale[i] = 1 / s
		}
	}
	for _, f := range t.Factors {
		switch f := f.(type) {
		case *LinGaussian:
			p.lin.x = append(p.lin.x, f.X...)
			p.lin.y = append(p.lin.y, f.Y)
			p.lin.invS2 = append(p.lin.invS2, 1/(f.Sigma*f.Sigma))
		case *BernoulliLogit:
			p.logit.x = append(p.logit.x, f.X...)
			p.logit.y = append(p.logit.y, f.Y)
			p.logit.n = append(p.logit.n, 1)
			p.logit.ni = append(p.logit.ni, 1)
		case *BinomialLogit:
			p.logit.x = append(p.logit.x, f.X...)
			p.logit.y = append(p.logit.y, f.Y)
			p.logit.n = append(p.logit.n, float64(f.Trials))
			p.logit.ni = append(p.logit.ni, f.Trials)
		case *LinStudentT:
			p.stud.x = append(p.stud.x, f.X...)
			p.stud.y = append(p.stud.y, f.Y)
			p.stud.q = append(p.stud.q, f.DF*f.Sigma*f.Sigma)
			p.stud.invQ = append(p.stud.invQ, 1/(f.DF*f.Sigma*f.Sigma))
			p.stud.nu1 = append(p.stud.nu1, f.DF+1)
			p.stud.negHalfNu1 = append(p.stud.negHalfNu1, -0.5*(f.DF+1))
		case *Gaussian:
			p.vec = append(p.vec, vecGaussian{y: append([]float64(nil), f.Y...), invS2: 1 / (f.Sigma * f.Sigma)})
		default:
			p.other = append(p.other, f)
		}
	}
	p.buildBatch()
	return p
}

// Dim is the latent dimension d.
func (p *Packed) Dim() int { return p.d }

// scalarValue is log p̃(z) by the row-major layout, one site at a time
// with math.Exp: LogDensity where f64vec's kernels are not worth calling,
// and for the points whose batched value is not finite.
func (p *Packed) scalarValue(z []float64) float64 {
	var lp float64
	if p.pLoc != nil {
		for i, m := range p.pLoc {
			r := (z[i] - m) * p.pInvScale[i]
			lp -= 0.5 * r * r
		}
	} else {
		lp = logKernelOf(p.prior, p.d, z)
	}
	lp = p.lin.value(z, lp)
	lp = p.logit.value(z, lp)
	lp = p.stud.value(z, lp)
	for _, g := range p.vec {
		lp += g.value(z)
	}
	for _, f := range p.other {
		lp += logKernelOf(f, p.d, z)
	}
	return lp
}

// scalarValueGrad is scalarValue with the gradient written into grad.
func (p *Packed) scalarValueGrad(z, grad []float64) float64 {
	var lp float64
	if p.pLoc != nil {
		for i, m := range p.pLoc {
			s := p.pInvScale[i]
			r := (z[i] - m) * s
			lp -= 0.5 * r * r
			grad[i] = -r * s
		}
	} else {
		clear(grad)
		lp = p.prior.LogKernelGrad(z, grad)
	}
	lp = p.lin.valueGrad(z, grad, lp)
	lp = p.logit.valueGrad(z, grad, lp)
	lp = p.stud.valueGrad(z, grad, lp)
	for _, g := range p.vec {
		lp += g.valueGrad(z, grad)
	}
	for _, f := range p.other {
		lp += f.LogKernelGrad(z, grad)
	}
	return lp
}

// matVec sets out[j] = x_jᵀz for the first len(out) rows x_j of the
// row-major block xs (rows of length len(z)). Four rows at a time keep
// four independent sums in flight instead of one dependent chain.
func matVec(xs, z, out []float64) {
	d := len(z)
	j := 0
	for ; j+4 <= len(out); j += 4 {
		x0 := xs[j*d : (j+1)*d][:len(z)]
		x1 := xs[(j+1)*d : (j+2)*d][:len(z)]
		x2 := xs[(j+2)*d : (j+3)*d][:len(z)]
		x3 := xs[(j+3)*d : (j+4)*d][:len(z)]
		var s0, s1, s2, s3 float64
		for i, zi := range z {
			s0 += x0[i] * zi
			s1 += x1[i] * zi
			s2 += x2[i] * zi
			s3 += x3[i] * zi
		}
		out[j], out[j+1], out[j+2], out[j+3] = s0, s1, s2, s3
	}
	for ; j < len(out); j++ {
		x := xs[j*d : (j+1)*d][:len(z)]
		var s float64
		for i, zi := range z {
			s += x[i] * zi
		}
		out[j] = s
	}
}

// addXtw adds Σ_j w_j·x_j, over the first len(w) rows of the row-major
// block xs, into grad. Four columns at a time, summed in registers: one
// axpy per row would carry every gradient entry through memory.
func addXtw(xs, w, grad []float64) {
	d := len(grad)
	i := 0
	for ; i+4 <= d; i += 4 {
		var g0, g1, g2, g3 float64
		o := i
		for _, wj := range w {
			x := xs[o : o+4 : o+4]
			g0 += wj * x[0]
			g1 += wj * x[1]
			g2 += wj * x[2]
			g3 += wj * x[3]
			o += d
		}
		grad[i] += g0
		grad[i+1] += g1
		grad[i+2] += g2
		grad[i+3] += g3
	}
	for ; i < d; i++ {
		var g float64
		o := i
		for _, wj := range w {
			g += wj * xs[o]
			o += d
		}
		grad[i] += g
	}
}

func (b *linRows) value(z []float64, lp float64) float64 {
	return b.eval(z, nil, lp)
}

func (b *linRows) valueGrad(z, grad []float64, lp float64) float64 {
	return b.eval(z, grad, lp)
}

// eval is the lin_gaussian block's value, and its gradient added into
// grad when grad is not nil, a chunk of sites at a time: the linear
// predictors, the per-site terms, then Xᵀw.
func (b *linRows) eval(z, grad []float64, lp float64) float64 {
	d := len(z)
	var etaBuf, wBuf [chunk]float64
	for k0 := 0; k0 < len(b.y); k0 += chunk {
		m := min(chunk, len(b.y)-k0)
		etas, ws := etaBuf[:m], wBuf[:m]
		xs := b.x[k0*d : (k0+m)*d]
		matVec(xs, z, etas)
		ys, is2 := b.y[k0:k0+m], b.invS2[k0:k0+m]
		ys, is2 = ys[:len(etas)], is2[:len(etas)]
		for j, eta := range etas {
			r := ys[j] - eta
			w := r * is2[j]
			lp -= 0.5 * r * w
			ws[j] = w
		}
		if grad != nil {
			addXtw(xs, ws, grad)
		}
	}
	return lp
}

// The logistic rows sum their log1p(exp(−|η|)) terms as the log of a
// product: Σ n·log(1+e) = log Π (1+e)ⁿ, one math.Log per block instead of
// one math.Log1p per site (log1p was over a third of NUTS's CPU time on
// bernoulli_logit). The exactness argument: u = fl(1+e) loses
// δ = (1+e) − u, which e − (u−1) recovers exactly (Fast2Sum, e ≤ 1), and
// log(1+e) = log u + δ/u up to (δ/u)²/2 < 2⁻¹⁰⁷; so the only errors are the
// roundings of the running product and of the powers uⁿ (about 2⁻⁵³
// relative per trial, so as much absolute in the log) and the half ulp of
// the final log. For the 64 bernoulli sites of the medium benchmark that
// bounds the error of the sum by about 70·2⁻⁵³ ≈ 8e-15, the order of the
// rounding error of summing the 64 terms themselves. The product stays
// below 2^maxProdLog2 (u ≤ 2), so it is folded into the sum before it
// could overflow; sites with more than maxPowTrials trials take
// math.Log1p directly.
const (
	maxProdLog2  = 960
	maxPowTrials = 64
	oneBits      = 0x3ff0000000000000 // math.Float64bits(1)
	chunk        = 64                 // sites per pass of the per-family loops
)

// powSmall is uⁿ by binary powering, for 1 ≤ n ≤ maxPowTrials.
func powSmall(u float64, n int) float64 {
	if n == 1 {
		return u
	}
	r := 1.0
	for ; n > 0; n >>= 1 {
		if n&1 == 1 {
			r *= u
		}
		u *= u
	}
	return r
}

func (b *logitRows) value(z []float64, lp float64) float64 {
	return b.eval(z, nil, lp)
}

func (b *logitRows) valueGrad(z, grad []float64, lp float64) float64 {
	return b.eval(z, grad, lp)
}

// eval is the logistic block's value, and its gradient added into grad
// when grad is not nil; one body keeps the two paths' values bitwise
// equal.
func (b *logitRows) eval(z, grad []float64, lp float64) float64 {
	d := len(z)
	prod, corr := 1.0, 0.0
	pending := 0 // log2 bound of prod
	// The exponentials get a pass of their own: Go's calling convention
	// spills every live register around the math.Exp call, and in its own
	// loop almost nothing is live.
	var etaBuf, expBuf, wBuf [chunk]float64
	for k0 := 0; k0 < len(b.y); k0 += chunk {
		m := min(chunk, len(b.y)-k0)
		etas, exps, ws := etaBuf[:m], expBuf[:m], wBuf[:m]
		xs := b.x[k0*d : (k0+m)*d]
		matVec(xs, z, etas)
		for j, eta := range etas {
			exps[j] = math.Exp(-math.Abs(eta))
		}
		exps = exps[:len(etas)]
		ys, ns, nis := b.y[k0:k0+m], b.n[k0:k0+m], b.ni[k0:k0+m]
		for j, eta := range etas {
			y, n, ni, e := ys[j], ns[j], nis[j], exps[j]
			u := 1 + e
			inv := 1 / u
			// y·η − n·softplus(η) with softplus = max(η,0) + log1p(e);
			// the log1p part goes to prod and corr. (η+|η|)/2 is
			// max(η,0) exactly, without a branch.
			lp += y*eta - n*(0.5*(eta+math.Abs(eta)))
			if ni <= maxPowTrials {
				prod *= powSmall(u, ni)
				corr += n * ((e - (u - 1)) * inv)
				pending += ni
				if pending > maxProdLog2-maxPowTrials {
					lp -= math.Log(prod)
					prod, pending = 1, 0
				}
			} else {
				lp -= n * math.Log1p(e)
			}
			if grad != nil {
				// sigmoid(η) = 1/(1+e) for η ≥ 0 and e/(1+e) below: the
				// numerator comes from η's sign bit, without a branch
				// (at η = −0, e = 1 and both numerators agree).
				neg := uint64(int64(math.Float64bits(eta)) >> 63)
				num := math.Float64frombits(oneBits ^ (neg & (oneBits ^ math.Float64bits(e))))
				ws[j] = y - n*(num*inv)
			}
		}
		if grad != nil {
			addXtw(xs, ws, grad)
		}
	}
	return lp - (math.Log(prod) + corr)
}

func (b *studentRows) value(z []float64, lp float64) float64 {
	return b.eval(z, nil, lp)
}

func (b *studentRows) valueGrad(z, grad []float64, lp float64) float64 {
	return b.eval(z, grad, lp)
}

// eval is the Student-t block's value, and its gradient added into grad
// when grad is not nil. As in logitRows.eval, the log1p terms are summed
// as the log of a product: −(ν+1)/2 · Σ log(1+t) for t = r²/(νσ²) is
// −(ν+1)/2 · (log Π u + Σ δ/u) with u = fl(1+t) and δ = (1+t) − u, which
// TwoSum recovers exactly. The product restarts whenever ν changes
// between consecutive sites or it passes 2⁵⁰⁰; a site with u > 2⁵⁰⁰ (and
// infinite or NaN ones) takes math.Log1p directly. 1/u = q/(q+r²) comes
// from the gradient's reciprocal, so each site costs one division and no
// log.
func (b *studentRows) eval(z, grad []float64, lp float64) float64 {
	d := len(z)
	prod, corr, c := 1.0, 0.0, 0.0 // the running product, Σ δ/u and their weight −(ν+1)/2
	var etaBuf, wBuf [chunk]float64
	for k0 := 0; k0 < len(b.y); k0 += chunk {
		m := min(chunk, len(b.y)-k0)
		etas, ws := etaBuf[:m], wBuf[:m]
		xs := b.x[k0*d : (k0+m)*d]
		matVec(xs, z, etas)
		ys, qs, iqs := b.y[k0:k0+m], b.q[k0:k0+m], b.invQ[k0:k0+m]
		nu1s, nhs := b.nu1[k0:k0+m], b.negHalfNu1[k0:k0+m]
		for j, eta := range etas {
			r := ys[j] - eta
			q, r2 := qs[j], r*r
			w := 1 / (q + r2)
			t := r2 * iqs[j]
			u := 1 + t
			if ck := nhs[j]; !(u <= 0x1p500) {
				lp += ck * math.Log1p(t)
			} else {
				if ck != c || prod > 0x1p500 {
					lp += c * (math.Log(prod) + corr)
					prod, corr, c = 1, 0, ck
				}
				s := u - 1 // TwoSum(1, t): δ exactly, whichever of 1 and t is larger
				delta := (1 - (u - s)) + (t - s)
				prod *= u
				corr += delta * (q * w)
			}
			ws[j] = nu1s[j] * r * w
		}
		if grad != nil {
			addXtw(xs, ws, grad)
		}
	}
	return lp + c*(math.Log(prod)+corr)
}

func (g *vecGaussian) value(z []float64) float64 {
	var lp float64
	for i, y := range g.y {
		r := y - z[i]
		lp -= 0.5 * r * (r * g.invS2)
	}
	return lp
}

func (g *vecGaussian) valueGrad(z, grad []float64) float64 {
	var lp float64
	for i, y := range g.y {
		r := y - z[i]
		w := r * g.invS2
		lp -= 0.5 * r * w
		grad[i] += w
	}
	return lp
}
