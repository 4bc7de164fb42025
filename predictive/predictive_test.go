package predictive

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// pairAUC counts pairs directly: positive above negative 1, tie 1/2.
func pairAUC(p, y []float64) float64 {
	var num, den float64
	for i := range p {
		for j := range p {
			if y[i] != 1 || y[j] != 0 {
				continue
			}
			den++
			switch {
			case p[i] > p[j]:
				num++
			case p[i] == p[j]:
				num += 0.5
			}
		}
	}
	return num / den
}

func TestAUCAgainstPairCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		n := 2 + rng.IntN(60)
		p, y := make([]float64, n), make([]float64, n)
		for i := range p {
			// Coarse scores so ties occur.
			p[i] = float64(rng.IntN(1+trial%7)) / 6
			y[i] = float64(rng.IntN(2))
		}
		y[0], y[1] = 0, 1
		if got, want := AUC(p, y), pairAUC(p, y); math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: AUC %g, pair count %g (p=%v y=%v)", trial, got, want, p, y)
		}
	}
	if !math.IsNaN(AUC([]float64{0.2, 0.4}, []float64{1, 1})) {
		t.Error("one class: AUC not NaN")
	}
	if got := AUC([]float64{0.1, 0.9, 0.4}, []float64{0, 1, 0}); got != 1 {
		t.Errorf("perfect ranking: %g", got)
	}
}

func TestNLLAndAccuracyByHand(t *testing.T) {
	p := []float64{0.8, 0.3, 0.5, 0}
	y := []float64{1, 1, 0, 0}
	// −(log .8 + log .3 + log .5 + log(1−1e-6))/4
	want := -(math.Log(0.8) + math.Log(0.3) + math.Log(0.5) + math.Log(1-1e-6)) / 4
	if got := NLL(p, y); math.Abs(got-want) > 1e-15 {
		t.Errorf("NLL %.17g, want %.17g", got, want)
	}
	if got := NLL([]float64{0}, []float64{1}); math.Abs(got-(-math.Log(1e-6))) > 1e-12 {
		t.Errorf("clamped NLL %g", got)
	}
	// Predicted labels 1, 0, 1 (p = 0.5 counts as 1), 0: right, wrong, wrong, right.
	if got := Accuracy(p, y); got != 0.5 {
		t.Errorf("accuracy %g, want 0.5", got)
	}
}

// TestProbabilitiesByHand: two draws in d = 2, weighted and not.
func TestProbabilitiesByHand(t *testing.T) {
	x := [][]float64{{1, 2}, {0, -1}}
	sig := func(t float64) float64 { return 1 / (1 + math.Exp(-t)) }
	d := &posterior.Draws{D: 2, Z: []float64{0.5, -1, 2, 0.25}}
	p, err := Probabilities(d, x)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{(sig(0.5-2) + sig(2+0.5)) / 2, (sig(1) + sig(-0.25)) / 2}
	for i := range want {
		if math.Abs(p[i]-want[i]) > 1e-15 {
			t.Errorf("unweighted p[%d] = %g, want %g", i, p[i], want[i])
		}
	}
	d.W = []float64{0.9, 0.1}
	p, _ = Probabilities(d, x)
	want = []float64{0.9*sig(-1.5) + 0.1*sig(2.5), 0.9*sig(1) + 0.1*sig(-0.25)}
	for i := range want {
		if math.Abs(p[i]-want[i]) > 1e-15 {
			t.Errorf("weighted p[%d] = %g, want %g", i, p[i], want[i])
		}
	}
	if r := ESSRatio(d); math.Abs(r-1/(0.81+0.01)/2) > 1e-15 {
		t.Errorf("ESS ratio %g", r)
	}
	if _, err := Probabilities(d, [][]float64{{1, 2, 3}}); err == nil {
		t.Error("wrong row width: no error")
	}
}

func TestSigmoidTails(t *testing.T) {
	for _, v := range []float64{-800, -40, -1, 0, 1, 40, 800} {
		want := 1 / (1 + math.Exp(-v))
		if v < 0 {
			want = math.Exp(v - math.Log1p(math.Exp(v)))
		}
		if got := factor.Sigmoid(v); math.Abs(got-want) > 1e-15*math.Max(want, 1e-300) && !(got == 0 && want == 0) {
			t.Errorf("sigmoid(%g) = %g, want %g", v, got, want)
		}
	}
}

func TestScoreRejectsBadLabels(t *testing.T) {
	d := &posterior.Draws{D: 1, Z: []float64{1}}
	if _, err := Score(d, [][]float64{{1}}, []float64{2}); err == nil {
		t.Error("label 2: no error")
	}
}
