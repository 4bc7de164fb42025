package flows

import (
	"math"

	"github.com/afin-bench/afin/factor"
)

// Monotone rational-quadratic spline with linear (identity) tails, after
// Durkan et al. 2019, "Neural Spline Flows", Section 3.1 and Appendix A.
//
// On [-B, B] the map is made of K rational-quadratic segments whose knots
// (x_k, y_k) and knot derivatives δ_k are set by 3K−1 unconstrained numbers:
// K bin widths and K bin heights (softmax, floored at a minimum share) and
// K−1 interior derivatives (softplus, floored). The boundary derivatives are
// 1, so the spline joins the identity tails with matching slope and the
// whole map is C¹. Everything below works on one coordinate at a time.

const (
	minBinWidth  = 1e-3
	minBinHeight = 1e-3
	minKnotDeriv = 1e-3
)

// spline holds the shape shared by all coordinates of one NSF layer.
type spline struct {
	K int     // number of bins
	B float64 // the spline acts on [-B, B]; identity outside
}

// nRaw is the number of unconstrained parameters per coordinate.
func (s spline) nRaw() int { return 3*s.K - 1 }

// identityDerivRaw is the unconstrained derivative value that gives δ = 1,
// so that zero widths/heights (uniform bins) and this value make the spline
// the identity: the zero-output MADE initialisation then starts at the base.
func identityDerivRaw() float64 {
	return math.Log(math.Expm1(1 - minKnotDeriv))
}

// knotState is what one coordinate's spline evaluation keeps for its
// backward pass. Bin is −1 when the input fell in a linear tail.
type knotState struct {
	bin    int
	x      float64   // the input (forward direction)
	pw, ph []float64 // softmax shares of widths and heights (K each)
	xs, ys []float64 // knots (K+1 each)
	delta  []float64 // knot derivatives (K+1); only the current bin's two are set
}

func newKnotState(k int) knotState {
	buf := make([]float64, 2*k+3*(k+1))
	return knotState{
		pw:    buf[0:k],
		ph:    buf[k : 2*k],
		xs:    buf[2*k : 3*k+1],
		ys:    buf[3*k+1 : 4*k+2],
		delta: buf[4*k+2 : 5*k+3],
	}
}

// softmaxShares writes minShare + (1 − K·minShare)·softmax(raw) into p.
func softmaxShares(raw, p []float64, minShare float64) {
	mx := raw[0]
	for _, r := range raw[1:] {
		mx = math.Max(mx, r)
	}
	var sum float64
	for i, r := range raw {
		p[i] = math.Exp(r - mx)
		sum += p[i]
	}
	scale := 1 - float64(len(raw))*minShare
	for i := range p {
		p[i] = minShare + scale*p[i]/sum
	}
}

// knots fills the knot positions from the bin shares. The end knots are
// pinned at ±B exactly (not the rounded cumulative sum) so that forward and
// inverse agree on the spline's support to the last bit.
func knots(p, xs []float64, b float64) {
	k := len(p)
	xs[0] = -b
	var cum float64
	for j := 1; j < k; j++ {
		cum += p[j-1]
		xs[j] = -b + 2*b*cum
	}
	xs[k] = b
}

// setup turns the raw parameters into knots in st; derivs adds the
// knot derivatives once the bin is known.
func (s spline) setup(raw []float64, st *knotState) {
	k := s.K
	softmaxShares(raw[:k], st.pw, minBinWidth)
	softmaxShares(raw[k:2*k], st.ph, minBinHeight)
	knots(st.pw, st.xs, s.B)
	knots(st.ph, st.ys, s.B)
	st.delta[0], st.delta[k] = 1, 1
}

// derivs fills the two knot derivatives bin b uses; the others are never
// read, and softplus is the costliest part of setup.
func (s spline) derivs(raw []float64, st *knotState, b int) {
	k := s.K
	for _, j := range [2]int{b, b + 1} {
		if j >= 1 && j <= k-1 {
			st.delta[j] = minKnotDeriv + factor.Softplus(raw[2*k+j-1])
		}
	}
}

// findBin returns the k with knots[k] ≤ v < knots[k+1], or −1 outside.
func findBin(knots []float64, v float64) int {
	k := len(knots) - 1
	if !(v >= knots[0] && v < knots[k]) {
		return -1
	}
	for j := 1; j < k; j++ {
		if v < knots[j] {
			return j - 1
		}
	}
	return k - 1
}

// forward maps x to y and returns log dy/dx, keeping in st what backward
// needs.
func (s spline) forward(x float64, raw []float64, st *knotState) (y, logDeriv float64) {
	s.setup(raw, st)
	st.x = x
	st.bin = findBin(st.xs, x)
	if st.bin < 0 {
		return x, 0
	}
	s.derivs(raw, st, st.bin)
	y, logDeriv, _ = s.segment(st, nil)
	return y, logDeriv
}

// segGrad is the gradient of a segment's (y, log dy/dx) outputs, already
// contracted with their cotangents, with respect to the segment inputs.
type segGrad struct {
	x, xk, wk, yk, hk, dk, dk1 float64
}

// segment evaluates the rational-quadratic segment st.bin at st.x. With
// cot non-nil (cot[0] = ∂L/∂y, cot[1] = ∂L/∂logDeriv) it also returns the
// gradient of L with respect to the segment's inputs.
func (s spline) segment(st *knotState, cot *[2]float64) (y, logDeriv float64, g segGrad) {
	k := st.bin
	xk, wk := st.xs[k], st.xs[k+1]-st.xs[k]
	yk, hk := st.ys[k], st.ys[k+1]-st.ys[k]
	dk, dk1 := st.delta[k], st.delta[k+1]
	xi := (st.x - xk) / wk
	sl := hk / wk
	t := xi * (1 - xi)
	c1 := dk1 + dk - 2*sl
	num := hk * (sl*xi*xi + dk*t)
	den := sl + c1*t
	y = yk + num/den
	a := dk1*xi*xi + 2*sl*t + dk*(1-xi)*(1-xi)
	logDeriv = 2*math.Log(sl) + math.Log(a) - 2*math.Log(den)
	if cot == nil {
		return y, logDeriv, g
	}
	gy, gl := cot[0], cot[1]
	tx := 1 - 2*xi
	numXi := hk * (2*sl*xi + dk*tx)
	numS := hk * xi * xi
	numH := sl*xi*xi + dk*t
	numDk := hk * t
	denXi := c1 * tx
	denS := 1 - 2*t
	aXi := 2*dk1*xi + 2*sl*tx - 2*dk*(1-xi)
	aS := 2 * t
	aDk := (1 - xi) * (1 - xi)
	aDk1 := xi * xi
	r := num / den
	gXi := gy*(numXi-r*denXi)/den + gl*(aXi/a-2*denXi/den)
	gS := gy*(numS-r*denS)/den + gl*(2/sl+aS/a-2*denS/den)
	g.dk = gy*(numDk-r*t)/den + gl*(aDk/a-2*t/den)
	g.dk1 = gy*(-r*t)/den + gl*(aDk1/a-2*t/den)
	g.hk = gy*numH/den + gS/wk
	g.yk = gy
	g.x = gXi / wk
	g.xk = -gXi / wk
	g.wk = -gXi*xi/wk - gS*sl/wk
	return y, logDeriv, g
}

// backward returns ∂L/∂x and adds ∂L/∂raw into graw, given ∂L/∂y = gy and
// ∂L/∂logDeriv = gl for the evaluation recorded in st. work must have
// length ≥ 2(K+1) + K.
func (s spline) backward(st *knotState, raw []float64, gy, gl float64, graw, work []float64) float64 {
	if st.bin < 0 {
		return gy
	}
	k := s.K
	cot := [2]float64{gy, gl}
	_, _, g := s.segment(st, &cot)
	b := st.bin
	gxs := work[:k+1]
	gys := work[k+1 : 2*k+2]
	gsh := work[2*k+2 : 3*k+2]
	clear(gxs)
	clear(gys)
	gxs[b] += g.xk - g.wk
	gxs[b+1] += g.wk
	gys[b] += g.yk - g.hk
	gys[b+1] += g.hk
	s.knotsBackward(st.pw, gxs, graw[:k], minBinWidth, gsh)
	s.knotsBackward(st.ph, gys, graw[k:2*k], minBinHeight, gsh)
	// Only the two derivatives of the bin are used; the end ones are fixed.
	if b >= 1 {
		graw[2*k+b-1] += g.dk * factor.Sigmoid(raw[2*k+b-1])
	}
	if b+1 <= k-1 {
		graw[2*k+b] += g.dk1 * factor.Sigmoid(raw[2*k+b])
	}
	return g.x
}

// knotsBackward pushes the knot gradient gk (K+1, end knots fixed) back
// through the cumulative sum and the floored softmax into graw.
func (s spline) knotsBackward(p, gk, graw []float64, minShare float64, gsh []float64) {
	k := len(p)
	// knot j (1 ≤ j ≤ K−1) = −B + 2B·Σ_{i<j} p_i.
	var acc float64
	for i := k - 1; i >= 0; i-- {
		gsh[i] = 2 * s.B * acc
		if i >= 1 {
			acc += gk[i]
		}
	}
	// p = m + (1 − K m)·softmax(raw); ∂softmax: σ_i(g_i − Σσ_j g_j).
	scale := 1 - float64(k)*minShare
	var dot float64
	for i := range k {
		sig := (p[i] - minShare) / scale
		dot += sig * gsh[i]
	}
	for i := range k {
		sig := (p[i] - minShare) / scale
		graw[i] += scale * sig * (gsh[i] - dot)
	}
}

// inverse maps y back to x and returns log dy/dx at that x.
func (s spline) inverse(y float64, raw []float64, st *knotState) (x, logDeriv float64) {
	s.setup(raw, st)
	b := findBin(st.ys, y)
	if b < 0 {
		st.bin, st.x = -1, y
		return y, 0
	}
	s.derivs(raw, st, b)
	xk, wk := st.xs[b], st.xs[b+1]-st.xs[b]
	yk, hk := st.ys[b], st.ys[b+1]-st.ys[b]
	dk, dk1 := st.delta[b], st.delta[b+1]
	sl := hk / wk
	dy := y - yk
	c1 := dk1 + dk - 2*sl
	// Solve a ξ² + b ξ + c = 0 for the root in [0, 1] (paper's eqs. 6–8),
	// written in the cancellation-free form 2c / (−b − √(b²−4ac)).
	qa := hk*(sl-dk) + dy*c1
	qb := hk*dk - dy*c1
	qc := -sl * dy
	disc := math.Max(qb*qb-4*qa*qc, 0)
	xi := 2 * qc / (-qb - math.Sqrt(disc))
	xi = math.Min(math.Max(xi, 0), 1)
	x = xk + xi*wk
	st.bin, st.x = b, x
	_, logDeriv, _ = s.segment(st, nil)
	return x, logDeriv
}
