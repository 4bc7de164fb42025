package flows

import (
	"math"
	"math/rand/v2"
)

// transform is one invertible layer y = T(u) of a flow, written in the
// sampling direction (base → target). Every method is exact; backward is
// the hand-written reverse-mode derivative of forward.
type transform interface {
	size() int
	bind(p, g []float64)
	freeMask(dst []float64)
	init(rng *rand.Rand)
	newCache() any
	// forward writes y = T(u) and returns log|det ∂y/∂u|, keeping in c
	// what backward needs.
	forward(c any, u, y []float64) float64
	// backward, given ∂L/∂y = gy and ∂L/∂logdet = gld for the evaluation
	// in c, adds the parameter gradients and writes ∂L/∂u into gu.
	backward(c any, gy []float64, gld float64, gu []float64)
	// inverse writes u = T⁻¹(y) and returns log|det ∂y/∂u| at that u.
	inverse(c any, y, u []float64) float64
}

// degrees returns the autoregressive order of layer l: natural order on
// even layers, reversed on odd ones. Alternating the MADE degrees is the
// same as putting a reversal permutation between layers, without copying.
func degrees(d, l int) []int {
	deg := make([]int, d)
	for i := range deg {
		if l%2 == 0 {
			deg[i] = i + 1
		} else {
			deg[i] = d - i
		}
	}
	return deg
}

// byDegree returns the coordinates sorted by degree.
func byDegree(deg []int) []int {
	order := make([]int, len(deg))
	for i, k := range deg {
		order[k-1] = i
	}
	return order
}

// boundedLogScale maps a raw conditioner output to a log-scale in
// (−c, c) smoothly (c·tanh(r/c)), which keeps exp(α) finite at the large
// learning rates of the sweep while being the identity near zero.
func boundedLogScale(r, c float64) (a, da float64) {
	t := math.Tanh(r / c)
	return c * t, 1 - t*t
}

// ---------------------------------------------------------------------------
// IAF: y_i = u_i·exp(α_i(u_<i)) + μ_i(u_<i). Sampling and the log density of
// the flow's own samples take one conditioner pass; evaluating an arbitrary
// point needs d sequential passes (inverse).

type iafLayer struct {
	d        int
	maxScale float64
	net      *made
	order    []int
}

type affineCache struct {
	mc      *madeCache
	u, y, a []float64 // input, output, bounded log-scales
	da      []float64 // ∂α/∂raw
	gout    []float64
	v, gtmp []float64 // MAF backward work
}

func newAffineCache(net *made) *affineCache {
	d := net.d
	return &affineCache{
		mc: net.newCache(), u: make([]float64, d), y: make([]float64, d),
		a: make([]float64, d), da: make([]float64, d), gout: make([]float64, 2*d),
		v: make([]float64, d), gtmp: make([]float64, d),
	}
}

func newIAF(d, l, hidden, depth int, maxScale float64) *iafLayer {
	deg := degrees(d, l)
	return &iafLayer{d: d, maxScale: maxScale, net: newMADE(deg, hidden, depth, 2), order: byDegree(deg)}
}

func (t *iafLayer) size() int              { return t.net.size() }
func (t *iafLayer) bind(p, g []float64)    { t.net.bind(p, g) }
func (t *iafLayer) freeMask(dst []float64) { t.net.freeMask(dst) }
func (t *iafLayer) init(rng *rand.Rand)    { t.net.init(rng, func(int) float64 { return 0 }) }
func (t *iafLayer) newCache() any          { return newAffineCache(t.net) }

func (t *iafLayer) forward(cc any, u, y []float64) float64 {
	c := cc.(*affineCache)
	d := t.d
	out := t.net.forward(u, c.mc)
	copy(c.u, u)
	var ld float64
	for i := range d {
		c.a[i], c.da[i] = boundedLogScale(out[d+i], t.maxScale)
		y[i] = u[i]*math.Exp(c.a[i]) + out[i]
		ld += c.a[i]
	}
	return ld
}

func (t *iafLayer) backward(cc any, gy []float64, gld float64, gu []float64) {
	c := cc.(*affineCache)
	d := t.d
	for i := range d {
		e := math.Exp(c.a[i])
		c.gout[i] = gy[i]
		c.gout[d+i] = (gy[i]*c.u[i]*e + gld) * c.da[i]
	}
	t.net.backward(c.mc, c.gout, gu, true)
	for i := range d {
		gu[i] += gy[i] * math.Exp(c.a[i])
	}
}

func (t *iafLayer) inverse(cc any, y, u []float64) float64 {
	c := cc.(*affineCache)
	d := t.d
	clear(u[:d])
	var ld float64
	// Coordinate of degree k only needs u of degree < k, already solved.
	for _, i := range t.order {
		out := t.net.forward(u, c.mc)
		a, _ := boundedLogScale(out[d+i], t.maxScale)
		u[i] = (y[i] - out[i]) * math.Exp(-a)
		ld += a
	}
	return ld
}

// ---------------------------------------------------------------------------
// MAF: the density direction is parallel, u_i = (y_i − μ_i(y_<i))·exp(−α_i(y_<i)),
// so sampling y = T(u) solves y_i = u_i·exp(α_i(y_<i)) + μ_i(y_<i) in degree
// order, one conditioner pass per coordinate.
//
// The reparameterised gradient goes through that fixed point by implicit
// differentiation rather than by unrolling the d passes: with h(y) =
// μ(y) + u⊙exp(α(y)), the cotangent on y is v = (I − ∂h/∂y)⁻ᵀ(gy + gld·∂Σα/∂y).
// ∂h/∂y is strictly triangular (nilpotent), so the Neumann iteration
// v ← gy + VJP(v) is exact after d conditioner backward passes, all at the
// one final evaluation point.

type mafLayer struct{ iafLayer }

func newMAF(d, l, hidden, depth int, maxScale float64) *mafLayer {
	return &mafLayer{*newIAF(d, l, hidden, depth, maxScale)}
}

func (t *mafLayer) forward(cc any, u, y []float64) float64 {
	c := cc.(*affineCache)
	d := t.d
	copy(c.u, u)
	clear(c.y)
	// Pass k needs only coordinate i's two outputs, so the output layer
	// is evaluated row by row; the hidden layers cannot be skipped.
	for _, i := range t.order {
		t.net.hidden(c.y, c.mc)
		a, _ := boundedLogScale(t.net.outputRow(c.mc, d+i), t.maxScale)
		c.y[i] = u[i]*math.Exp(a) + t.net.outputRow(c.mc, i)
	}
	// The last pass saw every coordinate but the final one, which no
	// hidden unit depends on, so c.mc holds the hidden state at y; one full
	// output layer gives every μ and α there for backward.
	last := len(t.net.lin) - 1
	out := c.mc.out
	t.net.lin[last].forward(c.mc.acts[last], out)
	var ld float64
	for i := range d {
		c.a[i], c.da[i] = boundedLogScale(out[d+i], t.maxScale)
		ld += c.a[i]
	}
	copy(y, c.y)
	return ld
}

func (t *mafLayer) backward(cc any, gy []float64, gld float64, gu []float64) {
	c := cc.(*affineCache)
	d := t.d
	copy(c.v, gy[:d])
	fill := func() {
		for i := range d {
			c.gout[i] = c.v[i]
			c.gout[d+i] = (c.v[i]*c.u[i]*math.Exp(c.a[i]) + gld) * c.da[i]
		}
	}
	// In degree order the VJP is strictly upper triangular: after k
	// iterations the coordinates of degree ≥ d−k are exact, so d−1
	// iterations finish the series.
	for range d - 1 {
		fill()
		t.net.backward(c.mc, c.gout, c.gtmp, false)
		for i := range d {
			c.v[i] = gy[i] + c.gtmp[i]
		}
	}
	fill()
	t.net.backward(c.mc, c.gout, nil, true)
	for i := range d {
		gu[i] = c.v[i] * math.Exp(c.a[i])
	}
}

func (t *mafLayer) inverse(cc any, y, u []float64) float64 {
	c := cc.(*affineCache)
	d := t.d
	out := t.net.forward(y, c.mc)
	var ld float64
	for i := range d {
		a, _ := boundedLogScale(out[d+i], t.maxScale)
		u[i] = (y[i] - out[i]) * math.Exp(-a)
		ld += a
	}
	return ld
}

// ---------------------------------------------------------------------------
// NSF: y_i = RQS(u_i; θ_i(u_<i)), an autoregressive rational-quadratic
// spline in the IAF direction, so sampling and log q of samples are one
// pass, as the ELBO needs.

type nsfLayer struct {
	d   int
	sp  spline
	net *made
	ord []int
}

type nsfCache struct {
	mc         *madeCache
	st         []knotState
	raw, graw  []float64 // per-coordinate spline parameters, contiguous
	gout, work []float64
	direct     []float64
}

func newNSF(d, l, hidden, depth, bins int, bound float64) *nsfLayer {
	sp := spline{K: bins, B: bound}
	deg := degrees(d, l)
	return &nsfLayer{d: d, sp: sp, net: newMADE(deg, hidden, depth, sp.nRaw()), ord: byDegree(deg)}
}

func (t *nsfLayer) size() int              { return t.net.size() }
func (t *nsfLayer) bind(p, g []float64)    { t.net.bind(p, g) }
func (t *nsfLayer) freeMask(dst []float64) { t.net.freeMask(dst) }

func (t *nsfLayer) init(rng *rand.Rand) {
	dr := identityDerivRaw()
	t.net.init(rng, func(o int) float64 {
		if o/t.d >= 2*t.sp.K {
			return dr
		}
		return 0
	})
}

func (t *nsfLayer) newCache() any {
	nr := t.sp.nRaw()
	c := &nsfCache{
		mc:     t.net.newCache(),
		st:     make([]knotState, t.d),
		raw:    make([]float64, t.d*nr),
		graw:   make([]float64, t.d*nr),
		gout:   make([]float64, t.d*nr),
		work:   make([]float64, 3*t.sp.K+2),
		direct: make([]float64, t.d),
	}
	for i := range c.st {
		c.st[i] = newKnotState(t.sp.K)
	}
	return c
}

// gather copies coordinate i's spline parameters, strided in the
// conditioner output (o = p·d + i), into a contiguous slice.
func (t *nsfLayer) gather(out, raw []float64, i int) []float64 {
	nr := t.sp.nRaw()
	r := raw[i*nr : (i+1)*nr]
	for p := range nr {
		r[p] = out[p*t.d+i]
	}
	return r
}

func (t *nsfLayer) forward(cc any, u, y []float64) float64 {
	c := cc.(*nsfCache)
	out := t.net.forward(u, c.mc)
	var ld float64
	for i := range t.d {
		r := t.gather(out, c.raw, i)
		yi, l := t.sp.forward(u[i], r, &c.st[i])
		y[i] = yi
		ld += l
	}
	return ld
}

func (t *nsfLayer) backward(cc any, gy []float64, gld float64, gu []float64) {
	c := cc.(*nsfCache)
	nr := t.sp.nRaw()
	d := t.d
	clear(c.graw)
	direct := c.direct
	for i := range d {
		r := c.raw[i*nr : (i+1)*nr]
		direct[i] = t.sp.backward(&c.st[i], r, gy[i], gld, c.graw[i*nr:(i+1)*nr], c.work)
	}
	for i := range d {
		for p := range nr {
			c.gout[p*d+i] = c.graw[i*nr+p]
		}
	}
	t.net.backward(c.mc, c.gout, gu, true)
	for i := range d {
		gu[i] += direct[i]
	}
}

func (t *nsfLayer) inverse(cc any, y, u []float64) float64 {
	c := cc.(*nsfCache)
	clear(u[:t.d])
	var ld float64
	for _, i := range t.ord {
		out := t.net.forward(u, c.mc)
		r := t.gather(out, c.raw, i)
		x, l := t.sp.inverse(y[i], r, &c.st[i])
		u[i] = x
		ld += l
	}
	return ld
}

// ---------------------------------------------------------------------------
// Final affine layer z = m + L·y with L lower triangular, diag(L) = exp(s).
// It gives every family the full-rank Gaussian as a special case (all
// autoregressive layers at identity), so the flows start from FRVI's family
// and the MADE layers only have to learn the non-Gaussian part; it is also
// where the posterior's location and scale live, which keeps the splines'
// [−B, B] window on the bulk of the standardised posterior.

type lowerAffine struct {
	d            int
	m, s, off    []float64 // off: strict lower triangle, row-major by row
	gm, gs, goff []float64
}

type lowerCache struct{ y []float64 }

func (t *lowerAffine) size() int { return 2*t.d + t.d*(t.d-1)/2 }

func (t *lowerAffine) bind(p, g []float64) {
	d := t.d
	t.m, t.s, t.off = p[:d], p[d:2*d], p[2*d:t.size()]
	t.gm, t.gs, t.goff = g[:d], g[d:2*d], g[2*d:t.size()]
}

func (t *lowerAffine) freeMask(dst []float64) {
	for i := range t.size() {
		dst[i] = 1
	}
}

func (t *lowerAffine) init(*rand.Rand) {
	clear(t.m)
	clear(t.s)
	clear(t.off)
}

func (t *lowerAffine) newCache() any { return &lowerCache{y: make([]float64, t.d)} }

// row returns the strict-lower entries of row i (columns 0..i−1).
func (t *lowerAffine) row(v []float64, i int) []float64 {
	o := i * (i - 1) / 2
	return v[o : o+i]
}

func (t *lowerAffine) forward(cc any, u, y []float64) float64 {
	c := cc.(*lowerCache)
	copy(c.y, u)
	var ld float64
	for i := t.d - 1; i >= 0; i-- {
		v := t.m[i] + math.Exp(t.s[i])*u[i]
		for j, l := range t.row(t.off, i) {
			v += l * u[j]
		}
		y[i] = v
		ld += t.s[i]
	}
	return ld
}

func (t *lowerAffine) backward(cc any, gy []float64, gld float64, gu []float64) {
	c := cc.(*lowerCache)
	for i := range t.d {
		e := math.Exp(t.s[i])
		t.gm[i] += gy[i]
		t.gs[i] += gy[i]*e*c.y[i] + gld
		gu[i] = gy[i] * e
	}
	for i := range t.d {
		row, grow := t.row(t.off, i), t.row(t.goff, i)
		for j, l := range row {
			grow[j] += gy[i] * c.y[j]
			gu[j] += gy[i] * l
		}
	}
}

func (t *lowerAffine) inverse(_ any, y, u []float64) float64 {
	var ld float64
	for i := range t.d {
		v := y[i] - t.m[i]
		for j, l := range t.row(t.off, i) {
			v -= l * u[j]
		}
		u[i] = v * math.Exp(-t.s[i])
		ld += t.s[i]
	}
	return ld
}
