package flows

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/progress"
)

// Options configures Fit. Zero values take the defaults noted.
type Options struct {
	Arch Arch
	// Budgets is the step ladder; the last entry is the run length. nil
	// means vi.DefaultBudgets (1k, 5k, 10k).
	Budgets []int
	// LRs are the learning rates tried; nil means the paper's grid
	// vi.LRGrid(7, 1e-6, 1e-2). One entry is a single run.
	LRs []float64
	// MCSamples is the number of reparameterised draws per step, in
	// antithetic pairs (u, −u) as FRVI; 0 means 4.
	MCSamples int
	// AvgFrac is vi.LoopConfig.AvgFrac (trailing Polyak averaging).
	AvgFrac float64
	// Selection picks the rate per budget; "" means vi.SelectELBO. With
	// vi.SelectOracle, Score must be given.
	Selection vi.Selection
	Score     vi.ScoreFunc
	// ScoreDraws is the number of draws of the ELBO used for selection;
	// 0 means 512.
	ScoreDraws int
	Seed       uint64
	// Progress, when a terminal, shows a bar over all steps of the sweep.
	Progress io.Writer
}

// Snapshot is the flow at one (learning rate, budget) of a sweep; it is a
// vi.Approx (Dim, Rand), so the sweep, SNIS and metrics can use it.
type Snapshot struct {
	*Flow
	LR    float64
	Steps int
	// Seconds is the optimisation wall-clock of this learning rate's run
	// up to this budget.
	Seconds float64
}

// Dim is the latent dimension (vi.Approx).
func (f *Flow) Dim() int { return f.D }

// Rand is Sample (vi.Approx).
func (f *Flow) Rand(rng *rand.Rand, z []float64) float64 { return f.Sample(rng, z) }

// Result is the outcome of Fit: the chosen snapshot per budget and the
// whole sweep.
type Result struct {
	Kind    Kind
	Arch    Arch
	Budgets []int
	Best    []*Snapshot // [budget]
	Sweep   *vi.SweepResult
	// Seconds is the wall-clock of the whole sweep, selection included.
	Seconds float64
}

// Final is the chosen snapshot at the largest budget.
func (r *Result) Final() *Snapshot { return r.Best[len(r.Best)-1] }

func (o Options) withDefaults() Options {
	if o.Budgets == nil {
		o.Budgets = slices.Clone(vi.DefaultBudgets)
	}
	if o.LRs == nil {
		o.LRs = vi.LRGrid(7, 1e-6, 1e-2)
	}
	if o.MCSamples == 0 {
		o.MCSamples = 4
	}
	if o.Selection == "" {
		o.Selection = vi.SelectELBO
	}
	if o.ScoreDraws == 0 {
		o.ScoreDraws = 512
	}
	return o
}

func (o Options) check() error {
	if err := o.Arch.Check(); err != nil {
		return err
	}
	for i, b := range o.Budgets {
		if b < 1 || (i > 0 && b <= o.Budgets[i-1]) {
			return fmt.Errorf("budgets: must be positive and strictly increasing, got %v", o.Budgets)
		}
	}
	if len(o.LRs) == 0 {
		return errors.New("learning rates: none given")
	}
	for _, lr := range o.LRs {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return fmt.Errorf("learning rate: must be positive and finite, got %g", lr)
		}
	}
	if o.MCSamples < 1 {
		return fmt.Errorf("MC samples: must be ≥ 1, got %d", o.MCSamples)
	}
	if o.ScoreDraws < 1 {
		return fmt.Errorf("score draws: must be ≥ 1, got %d", o.ScoreDraws)
	}
	if _, err := vi.ParseSelection(string(o.Selection)); err != nil {
		return err
	}
	if o.Selection == vi.SelectOracle && o.Score == nil {
		return errors.New("oracle selection needs a Score function")
	}
	return nil
}

// Fit maximises the ELBO of a kind-flow for task at every learning rate of
// opt.LRs with vi.Optimize (Adam, budget-ladder snapshots) and picks a rate
// per budget with vi.Sweep. Every run starts from the same point: the
// autoregressive transforms at identity and the final affine layer at the
// prior's Gaussian moments, exactly FRVI's starting distribution.
func Fit(ctx context.Context, task *factor.Task, kind Kind, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	if err := opt.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	start := time.Now()
	d := task.D
	tmpl, err := New(d, kind, opt.Arch, rand.New(rand.NewPCG(opt.Seed, 0x3ade)))
	if err != nil {
		return nil, err
	}
	if err := tmpl.initAtPrior(task.Prior); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	// Adam sees only the free entries: the masked MADE weights are ~45% of
	// the dense vector and would only cost optimiser time at zero.
	free := tmpl.freeIndex()
	theta0 := make([]float64, len(free))
	for k, i := range free {
		theta0[k] = tmpl.Params()[i]
	}
	last := opt.Budgets[len(opt.Budgets)-1]
	bar := progress.New(opt.Progress, string(kind), len(opt.LRs)*last)
	defer bar.Finish()

	target := task.Packed() // the same density, evaluated faster; shared read-only
	fit := func(ctx context.Context, lr float64) ([]vi.Approx, error) {
		f, err := New(d, kind, opt.Arch, rand.New(rand.NewPCG(0, 0)))
		if err != nil {
			return nil, err
		}
		params := slices.Clone(theta0)
		fp := f.Params()
		// Common random numbers: every rate sees the same base draws.
		rng := rand.New(rand.NewPCG(opt.Seed, 0xf10e))
		S := opt.MCSamples
		us := make([]float64, S*d)
		ticked := 0 // steps shown on the bar
		grad := func(step int, p, g []float64) (float64, error) {
			for s := 0; s < S; s++ {
				row := us[s*d : (s+1)*d]
				for i := range row {
					if s%2 == 0 {
						row[i] = rng.NormFloat64()
					} else {
						row[i] = -us[(s-1)*d+i]
					}
				}
			}
			for k, i := range free {
				fp[i] = p[k]
			}
			elbo, _ := f.ELBOGrad(target, us) // a non-finite value is caught by vi.Optimize
			fg := f.Grad()
			for k, i := range free {
				g[k] = -fg[i]
			}
			if step%256 == 255 {
				bar.Add(256)
				ticked += 256
			}
			return -elbo, nil
		}
		var out []vi.Approx
		t0 := time.Now()
		snap := func(budget int, p []float64) error {
			secs := time.Since(t0).Seconds()
			s, err := New(d, kind, opt.Arch, rand.New(rand.NewPCG(0, 0)))
			if err != nil {
				return err
			}
			sp := s.Params()
			for k, i := range free {
				sp[i] = p[k]
			}
			out = append(out, &Snapshot{Flow: s, LR: lr, Steps: budget, Seconds: secs})
			return nil
		}
		err = vi.Optimize(ctx, params, vi.LoopConfig{LR: lr, Budgets: opt.Budgets, AvgFrac: opt.AvgFrac}, grad, snap)
		// The run is over (finished, or stopped early): its steps past the
		// last multiple of 256, or never taken, complete its share.
		bar.Add(last - ticked)
		// Fit names the kind once, around the sweep's error.
		return out, err
	}
	score := opt.Score
	if score == nil {
		score = vi.NegELBOScore(task, opt.ScoreDraws, opt.Seed)
	}
	sw, err := vi.Sweep(ctx, opt.LRs, opt.Budgets, fit, opt.Selection, score)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	res := &Result{Kind: kind, Arch: tmpl.Arch, Budgets: opt.Budgets, Sweep: sw}
	for _, c := range sw.Best {
		res.Best = append(res.Best, c.Q.(*Snapshot))
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// initAtPrior sets the final affine layer to vi.PriorGaussian(prior), so
// the flow starts at the same q as FRVI.
func (f *Flow) initAtPrior(prior factor.Prior) error {
	g, err := vi.PriorGaussian(prior)
	if err != nil {
		return err
	}
	aff := f.ts[len(f.ts)-1].(*lowerAffine)
	d := f.D
	copy(aff.m, g.Mean)
	for i := range d {
		copy(aff.row(aff.off, i), g.L[i*d:i*d+i])
		aff.s[i] = math.Log(g.L[i*d+i])
	}
	return nil
}
