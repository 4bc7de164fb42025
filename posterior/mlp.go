package posterior

import (
	"math"
	"math/rand/v2"

	"github.com/afin-bench/afin/internal/optim"
)

// mlp is C2ST's classifier: d → h → h → 1 with ReLU hidden layers and a
// logistic output, trained by Adam (Kingma & Ba 2015) on the mean
// logistic loss plus an L2 penalty, in minibatches. The settings are
// scikit-learn's MLPClassifier defaults, which sbibm's C2ST uses: learning
// rate 1e-3, β = (0.9, 0.999), ε = 1e-8, α = 1e-4, batch min(200, n),
// Glorot-uniform initialisation.
type mlp struct {
	d, h int
	// params holds W1 (h×d), b1 (h), W2 (h×h), b2 (h), w3 (h), b3 (1),
	// in that order, so Adam runs over one flat vector.
	params []float64
	grad   []float64
	opt    *optim.Adam[float64]
	// scratch activations of one sample
	a1, a2, d1, d2 []float64
}

const (
	mlpLR      = 1e-3
	mlpAlpha   = 1e-4
	mlpBatch   = 200
	mlpTol     = 1e-4
	mlpPatient = 10
)

func newMLP(d, h int, rng *rand.Rand) *mlp {
	n := h*d + h + h*h + h + h + 1
	m := &mlp{d: d, h: h, params: make([]float64, n), grad: make([]float64, n),
		opt: optim.New[float64](n, optim.Settings{LR: mlpLR}),
		a1:  make([]float64, h), a2: make([]float64, h), d1: make([]float64, h), d2: make([]float64, h)}
	w1, _, w2, _, w3, _ := m.split(m.params)
	glorot(rng, w1, d, h)
	glorot(rng, w2, h, h)
	glorot(rng, w3, h, 1)
	return m
}

// glorot fills w with U(−b, b), b = √(6/(fan_in+fan_out)) (Glorot &
// Bengio 2010); biases stay zero.
func glorot(rng *rand.Rand, w []float64, in, out int) {
	b := math.Sqrt(6 / float64(in+out))
	for i := range w {
		w[i] = (2*rng.Float64() - 1) * b
	}
}

// split views a flat parameter (or gradient) vector as its layers.
func (m *mlp) split(p []float64) (w1, b1, w2, b2, w3 []float64, b3 *float64) {
	d, h := m.d, m.h
	o := 0
	take := func(k int) []float64 { s := p[o : o+k]; o += k; return s }
	w1, b1, w2, b2, w3 = take(h*d), take(h), take(h*h), take(h), take(h)
	return w1, b1, w2, b2, w3, &p[o]
}

// logit is the network's output before the sigmoid, leaving the hidden
// activations in m.a1 and m.a2.
func (m *mlp) logit(x []float64) float64 {
	w1, b1, w2, b2, w3, b3 := m.split(m.params)
	for i := range m.h {
		s := b1[i]
		for j, xj := range x {
			s += w1[i*m.d+j] * xj
		}
		m.a1[i] = max(s, 0)
	}
	out := *b3
	for i := range m.h {
		s := b2[i]
		row := w2[i*m.h : (i+1)*m.h]
		for j, a := range m.a1 {
			s += row[j] * a
		}
		m.a2[i] = max(s, 0)
		out += w3[i] * m.a2[i]
	}
	return out
}

// backward adds the gradient of the logistic loss at x (label y, output
// logit f) to m.grad, scaled by c.
func (m *mlp) backward(x []float64, y, f, c float64) {
	g := c * (sigmoid(f) - y) // d loss / d logit
	_, _, w2, _, w3, _ := m.split(m.params)
	gw1, gb1, gw2, gb2, gw3, gb3 := m.split(m.grad)
	*gb3 += g
	for i := range m.h {
		gw3[i] += g * m.a2[i]
		m.d2[i] = 0
		if m.a2[i] > 0 {
			m.d2[i] = g * w3[i]
		}
		m.d1[i] = 0
	}
	for i := range m.h {
		di := m.d2[i]
		if di == 0 {
			continue
		}
		gb2[i] += di
		row, grow := w2[i*m.h:(i+1)*m.h], gw2[i*m.h:(i+1)*m.h]
		for j, a := range m.a1 {
			grow[j] += di * a
			m.d1[j] += di * row[j]
		}
	}
	for i := range m.h {
		if m.a1[i] <= 0 || m.d1[i] == 0 {
			continue
		}
		gb1[i] += m.d1[i]
		grow := gw1[i*m.d : (i+1)*m.d]
		for j, xj := range x {
			grow[j] += m.d1[i] * xj
		}
	}
}

func sigmoid(f float64) float64 { return 1 / (1 + math.Exp(-f)) }

// logLoss is −log p(y | f), computed stably.
func logLoss(y, f float64) float64 {
	if y == 1 {
		f = -f
	}
	// log(1+e^f)
	if f > 0 {
		return f + math.Log1p(math.Exp(-f))
	}
	return math.Log1p(math.Exp(f))
}

// fit trains on the rows idx of x (labels y) for at most epochs passes,
// stopping when the epoch loss stalls.
func (m *mlp) fit(x, y []float64, idx []int, epochs int, rng *rand.Rand) {
	order := append([]int(nil), idx...)
	best, stall := math.Inf(1), 0
	for range epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		loss := 0.0
		for lo := 0; lo < len(order); lo += mlpBatch {
			batch := order[lo:min(lo+mlpBatch, len(order))]
			loss += m.step(x, y, batch) * float64(len(batch))
		}
		loss /= float64(len(order))
		if loss > best-mlpTol {
			if stall++; stall >= mlpPatient {
				return
			}
		} else {
			stall = 0
		}
		best = min(best, loss)
	}
}

// step is one Adam update on a minibatch; it returns the batch's mean
// data loss.
func (m *mlp) step(x, y []float64, batch []int) float64 {
	clear(m.grad)
	c := 1 / float64(len(batch))
	loss := 0.0
	for _, i := range batch {
		xi := x[i*m.d : (i+1)*m.d]
		f := m.logit(xi)
		loss += logLoss(y[i], f)
		m.backward(xi, y[i], f, c)
	}
	for k, p := range m.params {
		m.grad[k] += mlpAlpha * c * p // scikit-learn scales α by 1/batch
	}
	m.opt.Step(m.params, m.grad)
	return loss * c
}

// correct counts the rows idx the network classifies right (p ≥ ½ → 1).
func (m *mlp) correct(x, y []float64, idx []int) int {
	n := 0
	for _, i := range idx {
		pred := 0.0
		if m.logit(x[i*m.d:(i+1)*m.d]) >= 0 {
			pred = 1
		}
		if pred == y[i] {
			n++
		}
	}
	return n
}
