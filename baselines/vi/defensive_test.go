package vi

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/posterior"
)

// logisticTarget is a product of standard logistic densities: tails like
// e^{−|z|}, heavier than any Gaussian's, with sd π/√3 per coordinate.
type logisticTarget struct{}

func (logisticTarget) LogDensity(z []float64) float64 {
	var s float64
	for _, v := range z {
		a := math.Abs(v)
		s += -a - 2*math.Log1p(math.Exp(-a))
	}
	return s
}

// A moment-matched Gaussian of a logistic posterior is accurate to a few
// hundredths of an sd in mean and sd, but its plain importance weights
// p̃/q grow like e^{z²/2σ²−|z|}: their k̂ exceeds 0.7. The convergence
// check must weight it against the defensive mixture, whose weights are
// bounded. Before Gaussian had a LogQ the check understood (it asserted a
// LogProb method), every FRVI fit got the plain k̂ and such fits were
// flagged as not converged.
func TestImportanceCheckIsDefensiveForGaussian(t *testing.T) {
	const d = 3
	sd := math.Pi / math.Sqrt(3)
	l := make([]float64, d*d)
	for i := range d {
		l[i*d+i] = sd
	}
	q := &posterior.Gaussian{Mean: make([]float64, d), L: l}
	plain := plainParetoK(q, 7)
	var c Convergence
	reasons := importanceCheck(context.Background(), logisticTarget{}, q, 7, &c)
	t.Logf("plain k̂ %.3f, defensive k̂ %.3f over %d draws, reasons %q", plain, c.ParetoK, c.DefensiveDraws, reasons)
	if !(plain > 0.7) {
		t.Fatalf("plain k̂ %.3f ≤ 0.7: the test task no longer shows the light-tail problem", plain)
	}
	if c.DefensiveDraws != checkDraws {
		t.Errorf("the defensive mixture measured %d draws, want %d (q's and the Student-t's)", c.DefensiveDraws, checkDraws)
	}
	if !(c.ParetoK < 0.7) {
		t.Errorf("defensive k̂ %.3f ≥ 0.7 for an accurate Gaussian fit", c.ParetoK)
	}
}

// plainParetoK is k̂ of q's own weights p̃/q, what the check saw before.
func plainParetoK(q Approx, seed uint64) float64 {
	dq, lq := Draw(q, rand.New(rand.NewPCG(seed, 1)), checkDraws/2)
	lw := make([]float64, len(lq))
	for s := range lw {
		lw[s] = logisticTarget{}.LogDensity(dq.Row(s)) - lq[s]
	}
	return posterior.ParetoK(lw)
}
