package nuts

import (
	"context"
	"math"
	"math/rand/v2"
)

// Target is a differentiable unnormalised log density. LogDensityGrad
// returns log p̃(z) and overwrites grad with its gradient; it must not
// retain z or grad. *factor.Task satisfies it.
type Target interface {
	LogDensityGrad(z, grad []float64) float64
}

// point is a phase-space point with its cached log density and gradient.
type point struct {
	q, p, g []float64
	logp    float64
}

func newPoint(d int) point {
	return point{q: make([]float64, d), p: make([]float64, d), g: make([]float64, d)}
}

func (a *point) copyFrom(b *point) {
	copy(a.q, b.q)
	copy(a.p, b.p)
	copy(a.g, b.g)
	a.logp = b.logp
}

// level is the scratch space one recursion depth of the tree builder
// needs, allocated once per chain so that building trees allocates
// nothing.
type level struct {
	pInitEnd, vInitEnd, rhoInit    []float64
	pFinalBeg, vFinalBeg, rhoFinal []float64
	propFinal                      point
}

// chain is one Markov chain: its state, metric, step size and all
// scratch buffers.
type chain struct {
	d        int
	target   Target
	rng      *rand.Rand
	metric   *metric
	eps      float64
	maxDepth int
	maxDH    float64

	cur point // the integrator's moving point
	z   point // the chain's current state

	// transition scratch
	fwd, bck, sample, propose    point
	pFF, vFF, pFB, vFB           []float64
	pBF, vBF, pBB, vBB           []float64
	rho, rhoF, rhoB, rhoExt, tmp []float64
	levels                       []level

	// per-transition outputs
	nLeapfrog int
	sumMetro  float64
	divergent bool
	depth     int
	gradEvals int64

	// ctx is looked at every checkGrads gradient evaluations; err keeps
	// its error, which ends the trajectory being built (a tree of depth 10
	// is 1023 evaluations, far too many to wait for).
	ctx context.Context
	err error
}

// checkGrads is the number of gradient evaluations between two looks at
// the context: well under a millisecond on the paper's tasks.
const checkGrads = 64

func newChain(ctx context.Context, d int, target Target, rng *rand.Rand, m *metric, maxDepth int, maxDH float64) *chain {
	v := func() []float64 { return make([]float64, d) }
	c := &chain{
		ctx: ctx, d: d, target: target, rng: rng, metric: m, maxDepth: maxDepth, maxDH: maxDH,
		cur: newPoint(d), z: newPoint(d),
		fwd: newPoint(d), bck: newPoint(d), sample: newPoint(d), propose: newPoint(d),
		pFF: v(), vFF: v(), pFB: v(), vFB: v(), pBF: v(), vBF: v(), pBB: v(), vBB: v(),
		rho: v(), rhoF: v(), rhoB: v(), rhoExt: v(), tmp: v(),
	}
	c.levels = make([]level, maxDepth+1)
	for i := range c.levels {
		c.levels[i] = level{
			pInitEnd: v(), vInitEnd: v(), rhoInit: v(),
			pFinalBeg: v(), vFinalBeg: v(), rhoFinal: v(),
			propFinal: newPoint(d),
		}
	}
	return c
}

// setPosition moves the chain to q and evaluates the density there.
func (c *chain) setPosition(q []float64) {
	copy(c.z.q, q)
	c.z.logp = c.target.LogDensityGrad(c.z.q, c.z.g)
	c.gradEvals++
}

func (c *chain) hamiltonian(x *point) float64 {
	return -x.logp + c.metric.kinetic(x.p)
}

// leapfrog advances cur by one step of size eps (negative: backwards).
func (c *chain) leapfrog(eps float64) {
	x := &c.cur
	h := 0.5 * eps
	for i, g := range x.g {
		x.p[i] += h * g
	}
	c.metric.velocity(x.p, c.tmp)
	for i, v := range c.tmp {
		x.q[i] += eps * v
	}
	x.logp = c.target.LogDensityGrad(x.q, x.g)
	c.gradEvals++
	if c.gradEvals%checkGrads == 0 && c.err == nil {
		c.err = c.ctx.Err()
	}
	for i, g := range x.g {
		x.p[i] += h * g
	}
}

// uturnFree is the generalised no-U-turn criterion for a trajectory
// segment with summed momentum rho and end velocities vMinus, vPlus: the
// segment may keep growing while both ends still move along rho.
func uturnFree(vMinus, vPlus, rho []float64) bool {
	var a, b float64
	for i, r := range rho {
		a += vPlus[i] * r
		b += vMinus[i] * r
	}
	return a > 0 && b > 0
}

func logAddExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a > b {
		return a + math.Log1p(math.Exp(b-a))
	}
	return b + math.Log1p(math.Exp(a-b))
}

func add(dst, a, b []float64) {
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// transition performs one NUTS iteration from c.z and leaves the selected
// point in c.z. It returns the acceptance statistic (the mean Metropolis
// acceptance probability over all leapfrog states of the trajectory).
func (c *chain) transition() float64 {
	c.metric.sampleMomentum(c.rng, c.z.p)
	c.fwd.copyFrom(&c.z)
	c.bck.copyFrom(&c.z)
	c.sample.copyFrom(&c.z)
	c.propose.copyFrom(&c.z)

	p0 := c.z.p
	c.metric.velocity(p0, c.vFF)
	copy(c.pFF, p0)
	copy(c.pFB, p0)
	copy(c.vFB, c.vFF)
	copy(c.pBF, p0)
	copy(c.vBF, c.vFF)
	copy(c.pBB, p0)
	copy(c.vBB, c.vFF)
	copy(c.rho, p0)

	logSumW := 0.0 // the initial point has weight exp(H0 − H0) = 1
	h0 := c.hamiltonian(&c.z)
	c.nLeapfrog = 0
	c.sumMetro = 0
	c.divergent = false
	c.depth = 0

	for c.depth < c.maxDepth {
		clear(c.rhoF)
		clear(c.rhoB)
		logSumSub := math.Inf(-1)
		var valid bool
		if c.rng.Float64() > 0.5 {
			// Grow forwards from the forward end.
			// The old trajectory becomes the backward part; its forward
			// end is the old forward end.
			c.cur.copyFrom(&c.fwd)
			copy(c.rhoB, c.rho)
			copy(c.pBF, c.pFF)
			copy(c.vBF, c.vFF)
			valid = c.buildTree(c.depth, &c.propose, c.vFB, c.vFF, c.rhoF, c.pFB, c.pFF, h0, 1, &logSumSub)
			c.fwd.copyFrom(&c.cur)
		} else {
			c.cur.copyFrom(&c.bck)
			copy(c.rhoF, c.rho)
			copy(c.pFB, c.pBB)
			copy(c.vFB, c.vBB)
			valid = c.buildTree(c.depth, &c.propose, c.vBF, c.vBB, c.rhoB, c.pBF, c.pBB, h0, -1, &logSumSub)
			c.bck.copyFrom(&c.cur)
		}
		if !valid {
			break
		}
		c.depth++
		// Biased progressive sampling: favour the new subtree.
		if logSumSub > logSumW {
			c.sample.copyFrom(&c.propose)
		} else if c.rng.Float64() < math.Exp(logSumSub-logSumW) {
			c.sample.copyFrom(&c.propose)
		}
		logSumW = logAddExp(logSumW, logSumSub)

		add(c.rho, c.rhoB, c.rhoF)
		persist := uturnFree(c.vBB, c.vFF, c.rho)
		// Also check the merged trajectory's two halves extended by one
		// point of the other half, which catches U-turns that the end
		// points alone miss.
		add(c.rhoExt, c.rhoB, c.pFB)
		persist = persist && uturnFree(c.vBB, c.vFB, c.rhoExt)
		add(c.rhoExt, c.rhoF, c.pBF)
		persist = persist && uturnFree(c.vBF, c.vFF, c.rhoExt)
		if !persist {
			break
		}
	}
	c.z.copyFrom(&c.sample)
	if c.nLeapfrog == 0 {
		return 0
	}
	return c.sumMetro / float64(c.nLeapfrog)
}

// buildTree adds a subtree of 2^depth leapfrog steps in direction sign to
// the trajectory, starting from c.cur. It samples a point of the subtree
// into prop (multinomially, by weight exp(H0 − H)), adds the subtree's
// weight to *logSumW, its summed momentum to rho, and writes the first
// and last momenta (pBeg, pEnd) and velocities (vBeg, vEnd). It returns
// false when the subtree diverged or contains a U-turn.
func (c *chain) buildTree(depth int, prop *point, vBeg, vEnd, rho, pBeg, pEnd []float64, h0 float64, sign float64, logSumW *float64) bool {
	if c.err != nil {
		return false // cancelled: the caller returns c.err
	}
	if depth == 0 {
		c.leapfrog(sign * c.eps)
		c.nLeapfrog++
		h := c.hamiltonian(&c.cur)
		if math.IsNaN(h) {
			h = math.Inf(1)
		}
		if h-h0 > c.maxDH {
			c.divergent = true
		}
		*logSumW = logAddExp(*logSumW, h0-h)
		if h0-h > 0 {
			c.sumMetro++
		} else {
			c.sumMetro += math.Exp(h0 - h)
		}
		prop.copyFrom(&c.cur)
		c.metric.velocity(c.cur.p, vBeg)
		copy(vEnd, vBeg)
		for i, p := range c.cur.p {
			rho[i] += p
		}
		copy(pBeg, c.cur.p)
		copy(pEnd, c.cur.p)
		return !c.divergent
	}

	lv := &c.levels[depth]
	// First half.
	logSumInit := math.Inf(-1)
	clear(lv.rhoInit)
	if !c.buildTree(depth-1, prop, vBeg, lv.vInitEnd, lv.rhoInit, pBeg, lv.pInitEnd, h0, sign, &logSumInit) {
		return false
	}
	// Second half, with its own proposal.
	logSumFinal := math.Inf(-1)
	clear(lv.rhoFinal)
	if !c.buildTree(depth-1, &lv.propFinal, lv.vFinalBeg, vEnd, lv.rhoFinal, lv.pFinalBeg, pEnd, h0, sign, &logSumFinal) {
		return false
	}
	// Multinomial choice between the halves' proposals.
	logSumSub := logAddExp(logSumInit, logSumFinal)
	*logSumW = logAddExp(*logSumW, logSumSub)
	if logSumFinal > logSumSub {
		prop.copyFrom(&lv.propFinal)
	} else if c.rng.Float64() < math.Exp(logSumFinal-logSumSub) {
		prop.copyFrom(&lv.propFinal)
	}

	for i := range rho {
		rho[i] += lv.rhoInit[i] + lv.rhoFinal[i]
	}
	// c.tmp is free here: no leapfrog step runs until this check is done.
	ext := c.tmp
	add(ext, lv.rhoInit, lv.rhoFinal) // ρ of the whole subtree
	persist := uturnFree(vBeg, vEnd, ext)
	add(ext, lv.rhoInit, lv.pFinalBeg)
	persist = persist && uturnFree(vBeg, lv.vFinalBeg, ext)
	add(ext, lv.rhoFinal, lv.pInitEnd)
	persist = persist && uturnFree(lv.vInitEnd, vEnd, ext)
	return persist
}
