package flows

import (
	"math"
	"math/rand/v2"
	"slices"
)

// made is a masked autoencoder for distribution estimation (Germain et al.
// 2015): a tanh MLP whose weight masks make output block p of coordinate i
// depend only on the inputs of lower autoregressive degree than i. Output o
// = p·d + i is parameter p of coordinate i.
//
// Weights are stored densely with the masked entries held at exactly zero
// and never trained. Hidden units are sorted by degree, which makes every
// row's allowed columns one contiguous range [lo, hi) (a prefix, or a
// suffix for the reversed order's input layer), so the loops skip the
// masked half of each matrix without index gathers.
type made struct {
	d, nPer int
	deg     []int // autoregressive degree (1..d) of each coordinate
	lin     []linear
}

// linear is one dense layer y = W x + b; w is out×in row-major.
type linear struct {
	in, out    int
	w, b       []float64
	gw, gb     []float64
	mask       []bool // allowed entries of w
	lo, hi     []int  // per row: the allowed columns are [lo, hi)
	zeroOutput bool   // initialise at zero (the final layer)
}

// setRanges derives each row's column range from the mask. A row whose
// allowed set is not contiguous keeps the full range: the zero weights
// then keep it correct, only slower.
func (l *linear) setRanges() {
	l.lo, l.hi = make([]int, l.out), make([]int, l.out)
	for j := range l.out {
		row := l.mask[j*l.in : (j+1)*l.in]
		lo, hi := l.in, 0
		for i, ok := range row {
			if ok {
				lo, hi = min(lo, i), max(hi, i+1)
			}
		}
		if lo >= hi {
			lo, hi = 0, 0
		}
		for i := lo; i < hi; i++ {
			if !row[i] {
				lo, hi = 0, l.in
				break
			}
		}
		l.lo[j], l.hi[j] = lo, hi
	}
}

func (l *linear) size() int { return l.in*l.out + l.out }

func (l *linear) bind(p, g []float64) {
	n := l.in * l.out
	l.w, l.b = p[:n], p[n:n+l.out]
	l.gw, l.gb = g[:n], g[n:n+l.out]
}

func (l *linear) forward(x, y []float64) {
	for j := range l.out {
		lo, hi := l.lo[j], l.hi[j]
		row := l.w[j*l.in+lo : j*l.in+hi]
		s := l.b[j]
		for i, xi := range x[lo:hi] {
			s += row[i] * xi
		}
		y[j] = s
	}
}

// backward sets gx = Wᵀ gy (when gx is non-nil) and, when params is true,
// adds the weight and bias gradients.
func (l *linear) backward(x, gy, gx []float64, params bool) {
	if gx != nil {
		clear(gx[:l.in])
	}
	for j, g := range gy[:l.out] {
		if g == 0 {
			continue
		}
		lo, hi := l.lo[j], l.hi[j]
		if params {
			l.gb[j] += g
		}
		if lo == hi {
			continue
		}
		row := l.w[j*l.in+lo : j*l.in+hi]
		if gx != nil {
			gxr := gx[lo:hi]
			for i, w := range row {
				gxr[i] += g * w
			}
		}
		if params {
			grow := l.gw[j*l.in+lo : j*l.in+hi]
			for i, xi := range x[lo:hi] {
				grow[i] += g * xi
			}
		}
	}
}

// newMADE builds the masks for coordinates with the given degrees, depth
// hidden tanh layers of width h and nPer outputs per coordinate.
func newMADE(deg []int, h, depth, nPer int) *made {
	d := len(deg)
	m := &made{d: d, nPer: nPer, deg: deg}
	// Hidden degrees cycle through 1..d−1 (Germain et al.'s deterministic
	// choice), so every conditioning set is represented when h ≥ d−1.
	hdeg := make([]int, h)
	span := max(d-1, 1)
	for j := range hdeg {
		hdeg[j] = j%span + 1
	}
	slices.Sort(hdeg)
	prev := deg
	for range depth {
		l := linear{in: len(prev), out: h, mask: make([]bool, h*len(prev))}
		for j := range h {
			for i := range prev {
				l.mask[j*len(prev)+i] = hdeg[j] >= prev[i]
			}
		}
		l.setRanges()
		m.lin = append(m.lin, l)
		prev = hdeg
	}
	out := linear{in: len(prev), out: nPer * d, mask: make([]bool, nPer*d*len(prev)), zeroOutput: true}
	for p := range nPer {
		for i := range d {
			o := p*d + i
			for j := range prev {
				// Strict inequality: output i never sees input i. With no
				// hidden layer the previous degrees are the input ones.
				out.mask[o*len(prev)+j] = deg[i] > prev[j]
			}
		}
	}
	out.setRanges()
	m.lin = append(m.lin, out)
	return m
}

func (m *made) size() int {
	n := 0
	for i := range m.lin {
		n += m.lin[i].size()
	}
	return n
}

func (m *made) bind(p, g []float64) {
	for i := range m.lin {
		n := m.lin[i].size()
		m.lin[i].bind(p[:n], g[:n])
		p, g = p[n:], g[n:]
	}
}

// freeMask writes 1 for trainable entries and 0 for masked ones.
func (m *made) freeMask(dst []float64) {
	for i := range m.lin {
		l := &m.lin[i]
		for k, ok := range l.mask {
			dst[k] = b2f(ok)
		}
		for k := range l.out {
			dst[l.in*l.out+k] = 1
		}
		dst = dst[l.size():]
	}
}

// init draws hidden weights N(0, 1/fan-in) over the allowed entries and
// zeroes the output layer, so the conditioner starts at its bias.
func (m *made) init(rng *rand.Rand, outBias func(o int) float64) {
	for i := range m.lin {
		l := &m.lin[i]
		clear(l.b)
		if l.zeroOutput {
			clear(l.w)
			for o := range l.out {
				l.b[o] = outBias(o)
			}
			continue
		}
		for j := range l.out {
			fan := 0
			for k := range l.in {
				if l.mask[j*l.in+k] {
					fan++
				}
			}
			sd := 1 / math.Sqrt(float64(max(fan, 1)))
			for k := range l.in {
				w := 0.0
				if l.mask[j*l.in+k] {
					w = sd * rng.NormFloat64()
				}
				l.w[j*l.in+k] = w
			}
		}
	}
}

// madeCache holds one evaluation's activations: acts[0] is the input,
// acts[l] the output of hidden layer l, out the conditioner output.
type madeCache struct {
	acts [][]float64
	out  []float64
	g    [2][]float64 // backward scratch, width max(h, d)
}

func (m *made) newCache() *madeCache {
	c := &madeCache{}
	w := m.d
	for i := range m.lin {
		c.acts = append(c.acts, make([]float64, m.lin[i].in))
		w = max(w, m.lin[i].in)
	}
	c.out = make([]float64, m.lin[len(m.lin)-1].out)
	c.g[0], c.g[1] = make([]float64, w), make([]float64, w)
	return c
}

func (m *made) forward(x []float64, c *madeCache) []float64 {
	m.hidden(x, c)
	last := len(m.lin) - 1
	m.lin[last].forward(c.acts[last], c.out)
	return c.out
}

// hidden runs the hidden layers only, leaving c.out stale.
func (m *made) hidden(x []float64, c *madeCache) {
	copy(c.acts[0], x)
	for i := range len(m.lin) - 1 {
		y := c.acts[i+1]
		m.lin[i].forward(c.acts[i], y)
		for k, v := range y {
			y[k] = math.Tanh(v)
		}
	}
}

// outputRow computes output o alone from the hidden activations in c.
func (m *made) outputRow(c *madeCache, o int) float64 {
	l := &m.lin[len(m.lin)-1]
	x := c.acts[len(m.lin)-1]
	lo, hi := l.lo[o], l.hi[o]
	s := l.b[o]
	for i, w := range l.w[o*l.in+lo : o*l.in+hi] {
		s += w * x[lo+i]
	}
	return s
}

// backward sets gx = (∂out/∂x)ᵀ gout for the evaluation in c and, when
// params is true, adds the parameter gradients. gout is not modified.
func (m *made) backward(c *madeCache, gout, gx []float64, params bool) {
	g := gout
	for i := len(m.lin) - 1; i >= 0; i-- {
		l := &m.lin[i]
		var gin []float64
		if i == 0 {
			gin = gx
		} else {
			gin = c.g[i%2][:l.in]
		}
		l.backward(c.acts[i], g, gin, params)
		if i > 0 {
			a := c.acts[i]
			for k := range gin {
				gin[k] *= 1 - a[k]*a[k]
			}
		}
		g = gin
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
