package vi

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSweepBoundedSameChoice: with a lower bound on the score, the sweep
// chooses per budget exactly the rate the exhaustive sweep chooses (the
// lowest score, the first rate among equal ones), and scores no more fits
// than it; with bounds that separate the rates it scores fewer. Random
// scores with ties, NaN scores, NaN bounds, bounds equal to the best
// score and a diverged rate are among the cases.
func TestSweepBoundedSameChoice(t *testing.T) {
	lrs := LRGrid(7, 1e-6, 1e-2)
	budgets := []int{10, 20, 40}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 39))
		scores := make([][]float64, len(lrs))
		bounds := make([][]float64, len(lrs))
		for i := range lrs {
			for range budgets {
				s := float64(rng.IntN(6)) // few values: ties are common
				switch rng.IntN(10) {
				case 0:
					s = math.NaN()
				case 1:
					s = math.Inf(1)
				}
				b := math.NaN()
				switch r := rng.IntN(4); {
				case r == 0:
				case r == 1 || math.IsNaN(s):
					b = s - rng.Float64()*3 // NaN stays NaN
				case r == 2:
					b = s // tight
				default:
					b = s - 1e-9
				}
				scores[i], bounds[i] = append(scores[i], s), append(bounds[i], b)
			}
		}
		diverged := rng.IntN(len(lrs) + 3) // ≥ len(lrs): none
		fit := func(_ context.Context, lr float64) ([]Approx, error) {
			i := indexOf(lrs, lr)
			var out []Approx
			for k := range budgets {
				if i == diverged && k == 1 {
					return out, ErrDiverged
				}
				out = append(out, &Gaussian{Mean: []float64{float64(i), float64(k)}, L: []float64{1, 0, 0, 1}})
			}
			return out, nil
		}
		at := func(q Approx, table [][]float64) float64 {
			m := q.(*Gaussian).Mean
			return table[int(m[0])][int(m[1])]
		}
		calls := 0
		score := func(_ context.Context, _ int, q Approx) (float64, error) {
			calls++
			return at(q, scores), nil
		}
		bound := func(_ context.Context, _ int, q Approx) (float64, error) { return at(q, bounds), nil }
		full, errFull := Sweep(context.Background(), lrs, budgets, fit, SelectOracle, score)
		fullCalls := calls
		calls = 0
		got, err := SweepBounded(context.Background(), lrs, budgets, fit, SelectOracle, score, bound)
		if (err == nil) != (errFull == nil) {
			t.Fatalf("seed %d: bounded error %v, exhaustive %v", seed, err, errFull)
		}
		if err != nil {
			continue
		}
		if calls > fullCalls {
			t.Errorf("seed %d: %d scores bounded, %d exhaustive", seed, calls, fullCalls)
		}
		for k := range budgets {
			a, b := got.Best[k], full.Best[k]
			if a.LR != b.LR || a.Score != b.Score && !(math.IsNaN(a.Score) && math.IsNaN(b.Score)) {
				t.Errorf("seed %d, budget %d: bounded chose lr %g (score %g), exhaustive lr %g (score %g)", seed, budgets[k], a.LR, a.Score, b.LR, b.Score)
			}
		}
		for i := range lrs {
			for k := range budgets {
				if c := got.Runs[i][k]; c.Pruned && !(c.Bound > got.Best[k].Score) {
					t.Errorf("seed %d: lr %g pruned at bound %g, chosen score %g", seed, c.LR, c.Bound, got.Best[k].Score)
				}
			}
		}
	}

	// Bounds that separate the rates: only the winner and the rates whose
	// bound is below its score are scored.
	fit := func(_ context.Context, lr float64) ([]Approx, error) {
		return []Approx{&Gaussian{Mean: []float64{lr}, L: []float64{1}}}, nil
	}
	calls := 0
	score := func(_ context.Context, _ int, q Approx) (float64, error) {
		calls++
		return math.Abs(math.Log10(q.(*Gaussian).Mean[0]) + 4), nil // best at 1e-4
	}
	bound := func(_ context.Context, _ int, q Approx) (float64, error) {
		return 0.9 * math.Abs(math.Log10(q.(*Gaussian).Mean[0])+4), nil
	}
	res, err := SweepBounded(context.Background(), lrs, []int{1}, fit, SelectOracle, score, bound)
	if err != nil {
		t.Fatal(err)
	}
	if res.Best[0].LR != lrs[3] || calls != 1 {
		t.Errorf("chose %g with %d scores, want %g with 1", res.Best[0].LR, calls, lrs[3])
	}
}
