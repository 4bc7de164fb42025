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
	"github.com/afin-bench/afin/internal/streams"
)

// Options configures Fit. Zero values take the defaults noted.
type Options struct {
	Arch Arch
	// Protocol is vi.ProtocolPractitioner ("": the flow works in the
	// coordinates of the Laplace approximation, whose Gaussian is its
	// final affine layer's start) or vi.ProtocolPaper (the affine layer at
	// the prior's Gaussian moments, in z's own units).
	Protocol vi.Protocol
	// Budgets is the step ladder; the last entry is the run length. nil
	// means vi.DefaultBudgets (1k, 5k, 10k).
	Budgets []int
	// LRs are the learning rates tried; nil means the protocol's grid
	// (Protocol.DefaultLRs). One entry is a single run.
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
	// Protocol and Start say how the fits were set up (see
	// vi.Protocol.Start for the labels).
	Protocol vi.Protocol
	Start    string
	// Convergence is the verdict on each chosen snapshot, per budget.
	Convergence []vi.Convergence
	// Seconds is the wall-clock of the whole sweep, selection included
	// (the Laplace approximation too; the convergence checks not).
	Seconds float64
	// StartSeconds is the wall-clock of building the protocol's start
	// (the Laplace approximation; 0 for the paper's prior start), shared
	// by every rate. A snapshot's Seconds leave it out.
	StartSeconds float64
	// CheckSeconds is the wall-clock of the convergence checks.
	CheckSeconds float64
}

// FinalConvergence is the verdict on Final.
func (r *Result) FinalConvergence() vi.Convergence { return r.Convergence[len(r.Convergence)-1] }

// Final is the chosen snapshot at the largest budget.
func (r *Result) Final() *Snapshot { return r.Best[len(r.Best)-1] }

func (o Options) withDefaults() Options {
	if o.Protocol == "" {
		o.Protocol = vi.ProtocolPractitioner
	}
	if o.Budgets == nil {
		o.Budgets = slices.Clone(vi.DefaultBudgets)
	}
	if o.LRs == nil {
		o.LRs = o.Protocol.DefaultLRs()
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
	if _, err := vi.ParseProtocol(string(o.Protocol)); err != nil {
		return err
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
// opt.LRs with vi.Optimize (Adam, budget-ladder snapshots), picks a rate
// per budget with vi.Sweep and checks each chosen snapshot (vi.Assess).
// Every run starts from the same point: the autoregressive transforms at
// identity and the final affine layer at the protocol's Gaussian (the
// Laplace approximation, or the prior's moments), which is exactly FRVI's
// start under the same protocol.
func Fit(ctx context.Context, task *factor.Task, kind Kind, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	if err := opt.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	start := time.Now()
	init, label, err := opt.Protocol.Start(ctx, task)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	startSecs := time.Since(start).Seconds()
	r, err := newRunner(task, kind, opt, init)
	if err != nil {
		return nil, err
	}
	bar := progress.New(opt.Progress, string(kind), len(opt.LRs)*r.last)
	defer bar.Finish()
	r.bar = bar
	traces := make([]*vi.Trace, len(opt.LRs))
	fit := func(ctx context.Context, lr float64) ([]vi.Approx, error) {
		tr := vi.NewTrace(opt.Budgets, len(r.free))
		for i, v := range opt.LRs {
			if v == lr {
				traces[i] = tr
			}
		}
		return r.run(ctx, lr, tr)
	}
	score := opt.Score
	if score == nil {
		score = vi.NegELBOScore(task, opt.ScoreDraws, opt.Seed)
	}
	sw, err := vi.Sweep(ctx, opt.LRs, opt.Budgets, fit, opt.Selection, score)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	res := &Result{Kind: kind, Arch: r.arch, Budgets: opt.Budgets, Sweep: sw, Protocol: opt.Protocol, Start: label, StartSeconds: startSecs}
	for _, c := range sw.Best {
		res.Best = append(res.Best, c.Q.(*Snapshot))
	}
	res.Seconds = time.Since(start).Seconds()
	t0 := time.Now()
	if res.Convergence, err = vi.Assess(ctx, task, opt.LRs, sw, traces, opt.Seed); err != nil {
		return nil, fmt.Errorf("%s: convergence checks: %w", kind, err)
	}
	res.CheckSeconds = time.Since(t0).Seconds()
	return res, nil
}

// runner fits one kind-flow at one learning rate at a time, all rates from
// the same start.
type runner struct {
	d      int
	kind   Kind
	opt    Options
	arch   Arch
	target flowTarget
	init   *vi.Gaussian // the start's Gaussian when working in its coordinates
	free   []int        // indices of the parameters Adam sees
	theta0 []float64
	last   int
	bar    *progress.Bar
}

// flowTarget is the density a run differentiates: the task, or the task
// in the coordinates of the start (vi.Whitened, which is stateful, so each
// run gets its own).
type flowTarget func() Target

func newRunner(task *factor.Task, kind Kind, opt Options, init *vi.Gaussian) (*runner, error) {
	d := task.D
	tmpl, err := New(d, kind, opt.Arch, streams.New(opt.Seed, streams.FlowInit))
	if err != nil {
		return nil, err
	}
	packed := task.Packed() // the same density, evaluated faster; shared read-only
	r := &runner{d: d, kind: kind, opt: opt, arch: tmpl.Arch, init: init, last: opt.Budgets[len(opt.Budgets)-1]}
	if init != nil {
		// New's flow is N(0, I), the start in init's coordinates.
		r.target = func() Target { return vi.NewWhitened(packed, init) }
	} else {
		if err := tmpl.initAtPrior(task.Prior); err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		r.target = func() Target { return packed }
	}
	// Adam sees only the free entries: the masked MADE weights are ~45% of
	// the dense vector and would only cost optimiser time at zero.
	r.free = tmpl.freeIndex()
	r.theta0 = make([]float64, len(r.free))
	for k, i := range r.free {
		r.theta0[k] = tmpl.Params()[i]
	}
	return r, nil
}

// run fits one learning rate and returns its snapshot per budget reached.
func (r *runner) run(ctx context.Context, lr float64, tr *vi.Trace) ([]vi.Approx, error) {
	d, S := r.d, r.opt.MCSamples
	f, err := New(d, r.kind, r.opt.Arch, streams.New(0, streams.FlowScratch))
	if err != nil {
		return nil, err
	}
	target := r.target()
	params := slices.Clone(r.theta0)
	fp := f.Params()
	// Common random numbers: every rate sees the same base draws.
	rng := streams.New(r.opt.Seed, streams.FlowGradient)
	us := make([]float64, S*d)
	ticked := 0 // steps shown on the bar
	grad := func(step int, p, g []float64) (float64, error) {
		antithetic(rng, us, S, d)
		for k, i := range r.free {
			fp[i] = p[k]
		}
		elbo, _ := f.ELBOGrad(target, us) // a non-finite value is caught by vi.Optimize
		fg := f.Grad()
		for k, i := range r.free {
			g[k] = -fg[i]
		}
		if step%256 == 255 {
			r.bar.Add(256)
			ticked += 256
		}
		return -elbo, nil
	}
	var out []vi.Approx
	t0 := time.Now()
	snap := func(budget int, p []float64) error {
		s, err := r.snapshot(p)
		if err != nil {
			return err
		}
		out = append(out, &Snapshot{Flow: s, LR: lr, Steps: budget, Seconds: time.Since(t0).Seconds()})
		return nil
	}
	err = vi.Optimize(ctx, params, vi.LoopConfig{LR: lr, Budgets: r.opt.Budgets, AvgFrac: r.opt.AvgFrac, Trace: tr}, grad, snap)
	// The run is over (finished, or stopped early): its steps past the
	// last multiple of 256, or never taken, complete its share.
	r.bar.Add(r.last - ticked)
	// Fit names the kind once, around the sweep's error.
	return out, err
}

// snapshot builds the flow of free parameters p, in z's own coordinates.
func (r *runner) snapshot(p []float64) (*Flow, error) {
	s, err := New(r.d, r.kind, r.opt.Arch, streams.New(0, streams.FlowScratch))
	if err != nil {
		return nil, err
	}
	sp := s.Params()
	for k, i := range r.free {
		sp[i] = p[k]
	}
	if r.init != nil {
		s.foldGaussian(r.init)
	}
	return s, nil
}

// antithetic fills us (S×d) with standard normal rows in antithetic pairs
// (u, −u), which cancels the gradient noise linear in u at no extra cost.
func antithetic(rng *rand.Rand, us []float64, S, d int) {
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
}

// initAtPrior sets the final affine layer to vi.PriorGaussian(prior), so
// the flow starts at the same q as FRVI under the paper's protocol. The
// layer must be at identity (as New leaves it).
func (f *Flow) initAtPrior(prior factor.Prior) error {
	g, err := vi.PriorGaussian(prior)
	if err != nil {
		return err
	}
	f.foldGaussian(g)
	return nil
}

// foldGaussian composes the final affine layer y ↦ m + Ly with
// z = μ₀ + L₀y: m ← μ₀ + L₀m, L ← L₀L (lower triangular again, with
// log-diagonal s ← s + log L₀ᵢᵢ). A flow fitted in the coordinates of
// g = N(μ₀, L₀L₀ᵀ) becomes the same distribution written in z.
func (f *Flow) foldGaussian(g *vi.Gaussian) {
	aff := f.ts[len(f.ts)-1].(*lowerAffine)
	d := f.D
	l := make([]float64, d*d) // the layer's L, dense
	for i := range d {
		copy(l[i*d:i*d+i], aff.row(aff.off, i))
		l[i*d+i] = math.Exp(aff.s[i])
	}
	m := slices.Clone(aff.m)
	for i := range d {
		v := g.Mean[i]
		for k := 0; k <= i; k++ {
			v += g.L[i*d+k] * m[k]
		}
		aff.m[i] = v
		row := aff.row(aff.off, i)
		for j := range i {
			var s float64
			for k := j; k <= i; k++ {
				s += g.L[i*d+k] * l[k*d+j]
			}
			row[j] = s
		}
		aff.s[i] += math.Log(g.L[i*d+i])
	}
}
