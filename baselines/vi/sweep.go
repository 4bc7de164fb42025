package vi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/afin-bench/afin/internal/errsum"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
)

// Approx is a fitted variational distribution (posterior.Approx).
type Approx = posterior.Approx

// Draw takes n draws from q with their log q values (posterior.DrawsOf).
func Draw(q Approx, rng *rand.Rand, n int) (*posterior.Draws, []float64) {
	return posterior.DrawsOf(q, rng, n)
}

// Density is an unnormalised log density, e.g. *factor.Task.
type Density = posterior.Density

// ELBO is the Monte Carlo estimate E_q[log p̃(z) − log q(z)] from n draws.
// Non-finite terms make it −Inf, so a broken fit is never selected.
func ELBO(target Density, q Approx, rng *rand.Rand, n int) float64 {
	v, _ := ELBOContext(context.Background(), target, q, rng, n)
	return v
}

// ELBOContext is ELBO that looks at ctx every posterior.LookEvery(d)
// draws (at d = 4096 a draw and its density cost ~10⁷ flops: every draw)
// and returns its error.
func ELBOContext(ctx context.Context, target Density, q Approx, rng *rand.Rand, n int) (float64, error) {
	d := q.Dim()
	z := make([]float64, d)
	var sum float64
	every := posterior.LookEvery(d)
	for s := 0; s < n; s++ {
		if s%every == 0 {
			if err := ctx.Err(); err != nil {
				return math.NaN(), err
			}
		}
		lq := q.Rand(rng, z)
		v := target.LogDensity(z) - lq
		if !finite(v) {
			return math.Inf(-1), nil
		}
		sum += v
	}
	return sum / float64(n), nil
}

// LRGrid returns n learning rates log-spaced from lo to hi inclusive; the
// paper's protocol is LRGrid(7, 1e-6, 1e-2).
func LRGrid(n int, lo, hi float64) []float64 {
	if n == 1 {
		return []float64{hi}
	}
	out := make([]float64, n)
	a, b := math.Log10(lo), math.Log10(hi)
	for i := range out {
		out[i] = math.Pow(10, a+(b-a)*float64(i)/float64(n-1))
	}
	return out
}

// Selection names how Sweep picks a learning rate per budget.
type Selection string

const (
	// SelectELBO keeps the rate with the highest ELBO estimate: usable
	// without any reference, the honest default.
	SelectELBO Selection = "elbo"
	// SelectOracle keeps the rate closest to a reference posterior (SW2),
	// as the paper reports its best results; it needs ground truth.
	SelectOracle Selection = "oracle"
)

// ParseSelection validates a selection name.
func ParseSelection(s string) (Selection, error) {
	switch Selection(s) {
	case SelectELBO, SelectOracle:
		return Selection(s), nil
	}
	return "", fmt.Errorf("unknown learning-rate selection %q (valid: elbo, oracle)", s)
}

// FitFunc fits one learning rate and returns one Approx per budget (in
// the budgets' order; a nil entry, or a short slice together with an
// error wrapping ErrDiverged, marks budgets the run did not reach).
type FitFunc func(ctx context.Context, lr float64) ([]Approx, error)

// ScoreFunc scores a snapshot: lower is better (−ELBO for SelectELBO,
// SW2 to a reference for SelectOracle). It returns ctx's error when ctx
// ends first.
type ScoreFunc func(ctx context.Context, budget int, q Approx) (float64, error)

// BoundFunc gives a lower bound on a ScoreFunc's score of a snapshot that
// costs far less than the score (SW2's bound from the moments of q's
// draws, posterior.SW2LowerBound). NaN bounds nothing.
type BoundFunc func(ctx context.Context, budget int, q Approx) (float64, error)

// Candidate is one (learning rate, budget) snapshot with its score.
type Candidate struct {
	LR     float64
	Budget int
	Q      Approx // nil when the run diverged before this budget
	Score  float64
	// Pruned: the snapshot was left unscored because its Bound exceeds
	// the chosen candidate's score, so it could not have been chosen;
	// Score is then its Bound, a lower bound on its score.
	Pruned bool
	Bound  float64 // the lower bound when a BoundFunc was given, else NaN
}

// SweepResult holds every candidate and the chosen one per budget.
type SweepResult struct {
	Selection Selection
	Budgets   []int
	Runs      [][]Candidate // [lr][budget]
	Best      []Candidate   // [budget]; Q nil when every rate failed
	Failures  []error       // one per diverged learning rate (nil otherwise)
}

// Sweep fits every learning rate, scores each budget's snapshot and picks
// the lowest score per budget (the first rate among equal scores).
// Diverged rates score +Inf and never win; Sweep fails only when a fit
// fails for another reason or when a budget has no usable candidate at
// all.
func Sweep(ctx context.Context, lrs []float64, budgets []int, fit FitFunc, sel Selection, score ScoreFunc) (*SweepResult, error) {
	return SweepBounded(ctx, lrs, budgets, fit, sel, score, nil)
}

// SweepBounded is Sweep that, given a bound, scores each budget's
// snapshots in the order of their bounds and leaves unscored (Pruned)
// those whose bound exceeds the best score found so far: they cannot
// win, so the choice is the one Sweep makes, at the cost of fewer scores.
func SweepBounded(ctx context.Context, lrs []float64, budgets []int, fit FitFunc, sel Selection, score ScoreFunc, bound BoundFunc) (*SweepResult, error) {
	if len(lrs) == 0 {
		return nil, fmt.Errorf("sweep: no learning rates")
	}
	res := &SweepResult{Selection: sel, Budgets: budgets, Runs: make([][]Candidate, len(lrs)), Failures: make([]error, len(lrs))}
	for i, lr := range lrs {
		qs, err := fit(ctx, lr)
		if err != nil {
			if !errors.Is(err, ErrDiverged) {
				return nil, fmt.Errorf("sweep: learning rate %g: %w", lr, err)
			}
			res.Failures[i] = err
		}
		row := make([]Candidate, len(budgets))
		for k, b := range budgets {
			row[k] = Candidate{LR: lr, Budget: b, Score: math.Inf(1), Bound: math.NaN()}
			if k < len(qs) && qs[k] != nil {
				row[k].Q = qs[k]
			}
		}
		res.Runs[i] = row
	}
	res.Best = make([]Candidate, len(budgets))
	for k := range budgets {
		best, err := chooseAt(ctx, res.Runs, k, score, bound)
		if err != nil {
			return nil, err
		}
		if best < 0 {
			return nil, fmt.Errorf("sweep: no learning rate produced a usable fit at %d steps (%v)", budgets[k], errsum.First(res.Failures, "rates"))
		}
		res.Best[k] = res.Runs[best][k]
	}
	return res, nil
}

// chooseAt scores the snapshots at budget index k of runs (every one, or
// with a bound those that could still win, lowest bound first) and
// returns the index of the lowest score, the first rate among equal
// ones (−1 when no rate reached the budget).
func chooseAt(ctx context.Context, runs [][]Candidate, k int, score ScoreFunc, bound BoundFunc) (int, error) {
	var order []int
	for i := range runs {
		c := &runs[i][k]
		if c.Q == nil {
			continue
		}
		if bound != nil {
			b, err := bound(ctx, c.Budget, c.Q)
			if err != nil {
				return 0, scoreErr(ctx, c, err)
			}
			c.Bound = b
		}
		order = append(order, i)
	}
	// A NaN bound sorts first (it bounds nothing); ties keep rate order.
	slices.SortStableFunc(order, func(a, b int) int {
		return cmpBound(runs[a][k].Bound, runs[b][k].Bound)
	})
	best := -1
	for _, i := range order {
		c := &runs[i][k]
		if best >= 0 && c.Bound > runs[best][k].Score {
			c.Pruned, c.Score = true, c.Bound
			continue
		}
		s, err := score(ctx, c.Budget, c.Q)
		if err != nil {
			return 0, scoreErr(ctx, c, err)
		}
		if !math.IsNaN(s) {
			c.Score = s
		}
		if best < 0 || c.Score < runs[best][k].Score || (c.Score == runs[best][k].Score && i < best) {
			best = i
		}
	}
	return best, nil
}

// cmpBound orders bounds ascending with NaN first.
func cmpBound(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return -1
	case math.IsNaN(b):
		return 1
	}
	return cmp.Compare(a, b)
}

// scoreErr is a scoring (or bounding) failure of c: ctx's error when it
// ended, else the failure with the rate and budget.
func scoreErr(ctx context.Context, c *Candidate, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("sweep: scoring learning rate %g at %d steps: %w", c.LR, c.Budget, err)
}

// NegELBOScore scores by −ELBO estimated from n draws, with a fixed seed
// so every candidate sees the same noise level.
func NegELBOScore(target Density, n int, seed uint64) ScoreFunc {
	return func(ctx context.Context, budget int, q Approx) (float64, error) {
		rng := streams.New(seed, streams.ELBO)
		v, err := ELBOContext(ctx, target, q, rng, n)
		return -v, err
	}
}
