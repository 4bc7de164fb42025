package factor

import (
	"fmt"
	"math"

	"github.com/afin-bench/afin/internal/f64vec"
)

// batch is Packed's second layout, for LogDensities: the logistic and
// Student-t sites with their design stored transposed and padded to a
// multiple of four sites (f64vec's lanes), so that one point's linear
// predictors and per-site sums run four sites per instruction, and the
// priors in the forms those kernels take. The padding sites have x = 0
// and y = 0, and zero trials or a zero residual: they add exactly
// nothing.
type batch struct {
	lin   *linBatch   // nil without lin_gaussian sites
	logit *logitBatch // nil without logistic sites of at most maxPowTrials trials
	big   logitRows   // logistic sites with more trials: LogDensity's scalar code
	stud  []studBatch // one per distinct ν, in order of first appearance
	maxNP int         // the most padded sites of any block: the eta scratch
	prior priorBatch
}

type logitBatch struct {
	m, np    int // sites, and sites padded to a multiple of four
	xt, y, n []float64
	ni       []int64
	bits     int // bit length of the largest trial count; 0 when all are 1
}

type linBatch struct {
	np           int
	xt, y, invS2 []float64
}

type studBatch struct {
	np          int
	xt, y, invQ []float64
	c           float64 // −(ν+1)/2
}

// priorBatch is the prior in batched form. Exactly one of the forms is
// set, unless the prior is diag_gaussian (Packed's pLoc) or of a type
// this file does not know (evaluated as LogDensity does).
type priorBatch struct {
	laplaceLoc, laplaceInv []float64 // diag_laplace: μ and 1/b
	stud                   *studBatch
	// fullrank_gaussian: μ and the transposed precision (the precision
	// is only symmetric to 1e-9, and quadForm multiplies by its rows).
	frLoc, frPrecT []float64
}

// pad4 rounds n up to a multiple of four.
func pad4(n int) int { return (n + 3) &^ 3 }

// transpose returns the m×d row-major rows as a d×np matrix (row i holds
// coordinate i of every site), zero beyond site m.
func transpose(x []float64, m, d, np int) []float64 {
	xt := make([]float64, d*np)
	for j := range m {
		for i := range d {
			xt[i*np+j] = x[j*d+i]
		}
	}
	return xt
}

// padded returns v's m values followed by fill up to np entries.
func padded(v []float64, np int, fill float64) []float64 {
	out := make([]float64, np)
	n := copy(out, v)
	for j := n; j < np; j++ {
		out[j] = fill
	}
	return out
}

func (p *Packed) buildBatch() {
	b := &p.batch
	if m := len(p.lin.y); m > 0 {
		np := pad4(m)
		b.lin = &linBatch{np: np, xt: transpose(p.lin.x, m, p.d, np), y: padded(p.lin.y, np, 0), invS2: padded(p.lin.invS2, np, 0)}
		b.maxNP = max(b.maxNP, np)
	}
	b.buildLogit(&p.logit, p.d)
	b.buildStud(&p.stud, p.d)
	b.buildPrior(p.prior, p.d)
	np := b.maxNP
	p.scratch.New = func() any { return &batchScratch{eta: make([]float64, np)} }
}

func (b *batch) buildLogit(l *logitRows, d int) {
	var small logitRows
	for j, ni := range l.ni {
		dst := &small
		if ni > maxPowTrials {
			dst = &b.big
		}
		dst.x = append(dst.x, l.x[j*d:(j+1)*d]...)
		dst.y = append(dst.y, l.y[j])
		dst.n = append(dst.n, l.n[j])
		dst.ni = append(dst.ni, ni)
	}
	m := len(small.y)
	if m == 0 {
		return
	}
	np := pad4(m)
	lb := &logitBatch{m: m, np: np, xt: transpose(small.x, m, d, np), y: padded(small.y, np, 0), n: padded(small.n, np, 0), ni: make([]int64, np)}
	top := 0
	for j, ni := range small.ni {
		lb.ni[j] = int64(ni)
		top = max(top, ni)
	}
	if top > 1 {
		for top>>lb.bits > 0 {
			lb.bits++
		}
	}
	b.logit = lb
	b.maxNP = max(b.maxNP, np)
}

func (b *batch) buildStud(s *studentRows, d int) {
	group := map[float64]int{}
	var xs [][]float64
	for j, c := range s.negHalfNu1 {
		g, ok := group[c]
		if !ok {
			g = len(b.stud)
			group[c] = g
			b.stud = append(b.stud, studBatch{c: c})
			xs = append(xs, nil)
		}
		xs[g] = append(xs[g], s.x[j*d:(j+1)*d]...)
		b.stud[g].y = append(b.stud[g].y, s.y[j])
		b.stud[g].invQ = append(b.stud[g].invQ, s.invQ[j])
	}
	for g := range b.stud {
		sb := &b.stud[g]
		m := len(sb.y)
		sb.np = pad4(m)
		sb.xt = transpose(xs[g], m, d, sb.np)
		sb.y, sb.invQ = padded(sb.y, sb.np, 0), padded(sb.invQ, sb.np, 1)
		b.maxNP = max(b.maxNP, sb.np)
	}
}

func (b *batch) buildPrior(prior Prior, d int) {
	switch pr := prior.(type) {
	case *DiagLaplace:
		b.prior.laplaceLoc = append([]float64(nil), pr.Loc...)
		b.prior.laplaceInv = make([]float64, d)
		for i, s := range pr.Scale {
			b.prior.laplaceInv[i] = 1 / s
		}
	case *DiagStudentT:
		np := pad4(d)
		sb := &studBatch{np: np, y: padded(pr.Loc, np, 0), invQ: make([]float64, np), c: -0.5 * (pr.DF + 1)}
		for i := range sb.invQ {
			sb.invQ[i] = 1
			if i < d {
				sb.invQ[i] = 1 / (pr.DF * pr.Scale[i] * pr.Scale[i])
			}
		}
		b.prior.stud = sb
		b.maxNP = max(b.maxNP, np)
	case *FullRankGaussian:
		b.prior.frLoc = append([]float64(nil), pr.Loc...)
		b.prior.frPrecT = transpose(pr.Precision, d, d, d)
		b.maxNP = max(b.maxNP, 2*d) // z − μ and Λ(z − μ)
	}
}

// batchScratch is one evaluation's working memory: the linear predictors
// of a block, overwritten in place by the sites' gradient weights, and
// the kernels' lanes (kept off the stack: the kernels are reached through
// function values, so the compiler cannot see that the lanes do not
// escape). Packed keeps them in a sync.Pool, one per goroutine in use, so
// that the evaluations of concurrent NUTS chains and VI runs sharing a
// Packed neither allocate nor share memory.
type batchScratch struct {
	eta []float64
	acc f64vec.Acc
}

// LogDensity is the unnormalised log posterior log p̃(z), as
// Task.LogDensity. It is LogDensities' value at z and LogDensityGrad's,
// bit for bit: on f64vec's kernels where they are fast (f64vec.Fast), by
// the row-major scalar code elsewhere and wherever the batched value or
// z is not finite, so that a NaN or infinite outcome is the scalar
// code's.
func (p *Packed) LogDensity(z []float64) float64 {
	z = z[:p.d]
	if !f64vec.Fast() {
		return p.scalarValue(z)
	}
	sc := p.scratch.Get().(*batchScratch)
	v := p.batchEval(z, nil, sc)
	p.scratch.Put(sc)
	if !finiteAll(v, z) {
		return p.scalarValue(z)
	}
	return v
}

// LogDensityGrad returns log p̃(z) and overwrites grad with its gradient,
// as Task.LogDensityGrad. The value is LogDensity's, bit for bit (NUTS's
// Hamiltonian and the SNIS weights of the same point agree); the batched
// gradient differs from the scalar code's by a few ulps per site term
// (the sites' exp(−|η|) from f64vec's polynomial, σ by one division, the
// sums in another order). Where the value or z is not finite, both come
// from the scalar code; where only the gradient is not, the gradient
// does.
func (p *Packed) LogDensityGrad(z, grad []float64) float64 {
	z, grad = z[:p.d], grad[:p.d]
	if !f64vec.Fast() {
		return p.scalarValueGrad(z, grad)
	}
	sc := p.scratch.Get().(*batchScratch)
	v := p.batchEval(z, grad, sc)
	p.scratch.Put(sc)
	if !finiteAll(v, z) {
		return p.scalarValueGrad(z, grad)
	}
	if !finiteAll(0, grad) {
		p.scalarValueGrad(z, grad)
	}
	return v
}

// LogDensities sets out[s] to log p̃ at row s of z, row-major with Dim()
// columns, for s < len(out): LogDensity's value at each row, bit for bit.
// It agrees with Task.LogDensity to rounding (the same bound, 1e-12 of
// the summed term sizes; the tests hold the batched and scalar paths to
// it): the logistic and Student-t sites and the diag_student_t and
// fullrank_gaussian priors go through f64vec's kernels, four sites per
// instruction on AVX2, with exp(−|η|) from the kernels' polynomial
// (within 2 ulps) and one log per block (the largest difference the
// tests have seen is 1.4e-15 of the term sizes). Each row's value
// depends on that row alone, never on the other rows of the call.
func (p *Packed) LogDensities(z, out []float64) error {
	if len(z) != len(out)*p.d {
		return fmt.Errorf("packed log densities: %d coordinates for %d rows of dimension %d", len(z), len(out), p.d)
	}
	if !f64vec.Fast() {
		for s := range out {
			out[s] = p.scalarValue(z[s*p.d : (s+1)*p.d])
		}
		return nil
	}
	sc := p.scratch.Get().(*batchScratch)
	defer p.scratch.Put(sc)
	for s := range out {
		zs := z[s*p.d : (s+1)*p.d]
		v := p.batchEval(zs, nil, sc)
		if !finiteAll(v, zs) {
			v = p.scalarValue(zs)
		}
		out[s] = v
	}
	return nil
}

// finiteAll reports whether v and every zᵢ are finite (x − x is NaN
// exactly when x is infinite or NaN).
func finiteAll(v float64, z []float64) bool {
	if v-v != 0 {
		return false
	}
	for _, x := range z {
		if x-x != 0 {
			return false
		}
	}
	return true
}

// batchEval is log p̃ at z by the batched layout, and its gradient
// written into grad unless grad is nil. The value's arithmetic does not
// depend on grad: the gradient kernels add the value kernels' sums bit
// for bit, and every other term is the same expression either way.
func (p *Packed) batchEval(z, grad []float64, sc *batchScratch) float64 {
	b := &p.batch
	lp := p.batchPrior(z, grad, sc)
	if b.lin != nil {
		lp += b.lin.eval(z, grad, sc)
	}
	if b.logit != nil {
		lp += b.logit.eval(z, grad, sc)
	}
	if len(b.big.y) > 0 {
		lp = b.big.eval(z, grad, lp)
	}
	for g := range b.stud {
		lp += b.stud[g].eval(z, grad, sc)
	}
	if grad == nil {
		for _, g := range p.vec {
			lp += g.value(z)
		}
		for _, f := range p.other {
			lp += logKernelOf(f, p.d, z)
		}
		return lp
	}
	for _, g := range p.vec {
		lp += g.valueGrad(z, grad)
	}
	for _, f := range p.other {
		lp += f.LogKernelGrad(z, grad)
	}
	return lp
}

// batchPrior is the prior's log kernel at z, its gradient written into
// grad (every entry) unless grad is nil.
func (p *Packed) batchPrior(z, grad []float64, sc *batchScratch) float64 {
	pr := &p.batch.prior
	switch {
	case p.pLoc != nil:
		var acc [4]float64 // four sums: no chain of d dependent adds
		for i, m := range p.pLoc {
			s := p.pInvScale[i]
			r := (z[i] - m) * s
			acc[i&3] -= 0.5 * r * r
			if grad != nil {
				grad[i] = -r * s
			}
		}
		return (acc[0] + acc[1]) + (acc[2] + acc[3])
	case pr.laplaceLoc != nil:
		var acc [4]float64
		for i, m := range pr.laplaceLoc {
			r := z[i] - m
			acc[i&3] -= math.Abs(r) * pr.laplaceInv[i]
			if grad != nil {
				grad[i] = laplaceSlope(r, pr.laplaceInv[i])
			}
		}
		return (acc[0] + acc[1]) + (acc[2] + acc[3])
	case pr.stud != nil:
		sb := pr.stud
		eta := sc.eta[:sb.np]
		copy(eta, z)
		clear(eta[len(z):])
		if grad == nil {
			return sb.sum(eta, &sc.acc)
		}
		lp := sb.sumGrad(eta, &sc.acc)
		for i := range grad {
			grad[i] = sb.nu1() * eta[i]
		}
		return lp
	case pr.frLoc != nil:
		return p.fullRankPrior(z, grad, sc)
	}
	if grad == nil {
		return logKernelOf(p.prior, p.d, z)
	}
	clear(grad)
	return p.prior.LogKernelGrad(z, grad)
}

// laplaceSlope is d/dr of −|r|·inv: its subgradient 0 at r = 0, as
// DiagLaplace.LogKernelGrad takes it.
func laplaceSlope(r, inv float64) float64 {
	switch {
	case r > 0:
		return -inv
	case r < 0:
		return inv
	}
	return 0
}

// fullRankPrior is −½ rᵀΛr, r = z − μ, and −Λr into grad unless grad is
// nil.
func (p *Packed) fullRankPrior(z, grad []float64, sc *batchScratch) float64 {
	pr := &p.batch.prior
	r, g := sc.eta[:p.d], sc.eta[p.d:2*p.d]
	for i, m := range pr.frLoc {
		r[i] = z[i] - m
	}
	f64vec.MatVecT(pr.frPrecT, r, g)
	var lp float64
	for i, ri := range r {
		lp -= 0.5 * ri * g[i]
	}
	for i := range grad {
		grad[i] = -g[i]
	}
	return lp
}

// eval is −½Σ r²/σ² over the lin_gaussian sites, r = y − xᵀz, in four
// partial sums (the padding has r = 0 and weight 0), and Xᵀ(r/σ²) added
// into grad unless grad is nil.
func (b *linBatch) eval(z, grad []float64, sc *batchScratch) float64 {
	eta := sc.eta[:b.np]
	f64vec.MatVecT(b.xt, z, eta)
	var a0, a1, a2, a3 float64
	for j := 0; j+4 <= len(eta); j += 4 {
		e, y, w := eta[j:j+4:j+4], b.y[j:j+4:j+4], b.invS2[j:j+4:j+4]
		r0, r1, r2, r3 := y[0]-e[0], y[1]-e[1], y[2]-e[2], y[3]-e[3]
		w0, w1, w2, w3 := r0*w[0], r1*w[1], r2*w[2], r3*w[3]
		a0 -= 0.5 * r0 * w0
		a1 -= 0.5 * r1 * w1
		a2 -= 0.5 * r2 * w2
		a3 -= 0.5 * r3 * w3
		e[0], e[1], e[2], e[3] = w0, w1, w2, w3
	}
	if grad != nil {
		f64vec.AddMatVec(b.xt, eta, 1, grad)
	}
	return (a0 + a1) + (a2 + a3)
}

// eval is the logistic sites' Σ y·η − n·softplus(η), and Xᵀw added into
// grad unless grad is nil (w, each site's y − n·σ(η), overwrites η).
func (b *logitBatch) eval(z, grad []float64, sc *batchScratch) float64 {
	eta := sc.eta[:b.np]
	f64vec.MatVecT(b.xt, z, eta)
	a := &sc.acc
	a.Reset()
	sites := func(lo, hi, bits int) {
		var ni []int64
		if bits > 0 {
			ni = b.ni[lo:hi]
		}
		if grad == nil {
			f64vec.Logistic(eta[lo:hi], b.y[lo:hi], b.n[lo:hi], ni, bits, a)
		} else {
			f64vec.LogisticGrad(eta[lo:hi], b.y[lo:hi], b.n[lo:hi], ni, bits, a, eta[lo:hi])
		}
	}
	// The last, partial group of four goes through the kernels too, its
	// padding sites with zero trials (which needs the powering, bits ≥ 1)
	// rather than the portable tail code.
	full := b.np
	if b.bits == 0 {
		full = b.m &^ 3
	}
	sites(0, full, b.bits)
	if full < b.np {
		sites(full, b.np, 1)
	}
	if grad != nil {
		f64vec.AddMatVec(b.xt, eta, 1, grad)
	}
	return f64vec.Sum(&a.Lin) - (a.LogProd() + f64vec.Sum(&a.Corr))
}

// eval is the block's −(ν+1)/2 · Σ log1p((y−η)²/q), and its gradient
// added into grad unless grad is nil.
func (s *studBatch) eval(z, grad []float64, sc *batchScratch) float64 {
	eta := sc.eta[:s.np]
	f64vec.MatVecT(s.xt, z, eta)
	if grad == nil {
		return s.sum(eta, &sc.acc)
	}
	lp := s.sumGrad(eta, &sc.acc)
	f64vec.AddMatVec(s.xt, eta, s.nu1(), grad)
	return lp
}

// sum is −(ν+1)/2 · Σ log1p((y−η)²/q) over the block, given its η.
func (s *studBatch) sum(eta []float64, a *f64vec.Acc) float64 {
	a.Reset()
	f64vec.StudentT(eta, s.y, s.invQ, a)
	return s.c * (a.LogProd() + f64vec.Sum(&a.Corr))
}

// sumGrad is sum, bit for bit, with each site's r/(q + r²) written over
// its η: the gradient weight divided by ν+1.
func (s *studBatch) sumGrad(eta []float64, a *f64vec.Acc) float64 {
	a.Reset()
	f64vec.StudentTGrad(eta, s.y, s.invQ, a, eta)
	return s.c * (a.LogProd() + f64vec.Sum(&a.Corr))
}

// nu1 is ν+1 (c = −(ν+1)/2 times −2, exactly).
func (s *studBatch) nu1() float64 { return -2 * s.c }
