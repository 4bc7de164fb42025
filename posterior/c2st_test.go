package posterior

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestMLPGradient checks the hand-written backward pass against central
// finite differences of the logistic loss.
func TestMLPGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := newMLP(3, 5, rng)
	for i := range m.params {
		m.params[i] += 0.1 * rng.NormFloat64() // biases off zero too
	}
	x := []float64{0.3, -1.2, 0.7}
	for _, y := range []float64{0, 1} {
		clear(m.grad)
		m.backward(x, y, m.logit(x), 1)
		for k := range m.params {
			p := m.params[k]
			const h = 1e-6
			m.params[k] = p + h
			up := logLoss(y, m.logit(x))
			m.params[k] = p - h
			down := logLoss(y, m.logit(x))
			m.params[k] = p
			fd := (up - down) / (2 * h)
			if math.Abs(fd-m.grad[k]) > 1e-6*(1+math.Abs(fd)) {
				t.Fatalf("y=%v param %d: backward %v, finite difference %v", y, k, m.grad[k], fd)
			}
		}
	}
}

// TestC2STClosedForm compares C2ST's accuracy on N(0, I) against
// N(δe₁, I) with the Bayes-optimal accuracy Φ(δ/2): a trained classifier
// cannot beat it and should come close with 2,000 draws per side. The
// tolerance is 3 binomial standard errors above, 3 plus 0.02 (the
// classifier's estimation loss) below.
func TestC2STClosedForm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains 5 classifiers per case")
	}
	for _, tc := range []struct {
		d     int
		delta float64
	}{{2, 0}, {2, 0.5}, {2, 1}, {2, 2}, {4, 1}} {
		rng := rand.New(rand.NewPCG(uint64(tc.d), uint64(tc.delta*100)))
		mu := make([]float64, tc.d)
		a := newGaussian(mu, identity(tc.d)).sample(rng, 2000)
		mu2 := append([]float64(nil), mu...)
		mu2[0] = tc.delta
		b := newGaussian(mu2, identity(tc.d)).sample(rng, 2000)
		res, err := C2ST(b, a, C2STOptions{Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		want := distuv.UnitNormal.CDF(tc.delta / 2)
		se := math.Sqrt(want * (1 - want) / 4000)
		t.Logf("d=%d δ=%.1f: accuracy %.4f, closed form %.4f (se %.4f)", tc.d, tc.delta, res.Accuracy, want, se)
		if res.Accuracy > want+3*se || res.Accuracy < want-3*se-0.02 {
			t.Errorf("d=%d δ=%v: accuracy %.4f, want %.4f (se %.4f)", tc.d, tc.delta, res.Accuracy, want, se)
		}
	}
}

func identity(d int) []float64 {
	c := make([]float64, d*d)
	for i := range d {
		c[i*d+i] = 1
	}
	return c
}

// TestC2STIdentical: two samples of one distribution read 0.5 within
// noise, weighted or not, quickly (small sets, few epochs).
func TestC2STIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	g := newGaussian([]float64{1, -1}, []float64{2, 0.5, 0.5, 1})
	a, b := g.sample(rng, 400), g.sample(rng, 400)
	wb := &Draws{D: 2, Z: b.Z, W: make([]float64, 400)}
	for i := range wb.W {
		wb.W[i] = 1.0 / 400
	}
	for _, tc := range []struct {
		name string
		q    *Draws
	}{{"unweighted", b}, {"weighted", wb}} {
		res, err := C2ST(tc.q, a, C2STOptions{MaxDraws: 400, Epochs: 30, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Accuracy-0.5) > 4*0.5/math.Sqrt(800) {
			t.Errorf("%s: accuracy %.3f on identical distributions", tc.name, res.Accuracy)
		}
		if res.N != 400 || len(res.Folds) != 5 {
			t.Errorf("%s: n=%d folds=%d", tc.name, res.N, len(res.Folds))
		}
	}
}

func TestC2STBadInput(t *testing.T) {
	a := &Draws{D: 2, Z: make([]float64, 40)}
	for _, tc := range []struct {
		name string
		q    *Draws
	}{
		{"dimension", &Draws{D: 3, Z: make([]float64, 60)}},
		{"too few", &Draws{D: 2, Z: make([]float64, 6)}},
		{"constant reference", &Draws{D: 2, Z: make([]float64, 40)}},
	} {
		if _, err := C2ST(tc.q, a, C2STOptions{}); !errors.Is(err, ErrC2STInput) {
			t.Errorf("%s: err %v, want ErrC2STInput", tc.name, err)
		}
	}
}

// TestC2STRepeatedRows: a set that repeats rows (here 2,000 resampled from
// 300 draws, as SNIS resampling or IMH rejections produce) of the same
// distribution as the reference still reads 0.5: copies of one draw share
// a fold, so the classifier cannot recognise memorised points.
func TestC2STRepeatedRows(t *testing.T) {
	// Four replications: repeated rows make one C2ST noisier (fewer
	// distinct points), not biased; their mean must sit at 0.5.
	mean := 0.0
	for s := range uint64(4) {
		rng := rand.New(rand.NewPCG(11+s, 12))
		g := newGaussian([]float64{0, 0}, identity(2))
		lumpy := g.sample(rng, 300).Resample(rng, 1000)
		ref := g.sample(rng, 1000)
		res, err := C2ST(lumpy, ref, C2STOptions{Seed: 2 + s, Epochs: 40})
		if err != nil {
			t.Fatal(err)
		}
		mean += res.Accuracy / 4
	}
	t.Logf("mean accuracy %.3f", mean)
	if math.Abs(mean-0.5) > 0.04 {
		t.Errorf("mean accuracy %.3f on repeated rows of the reference distribution", mean)
	}
}
