package vi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/afin-bench/afin/factor"
)

// Protocol names how a VI baseline is set up and run.
type Protocol string

const (
	// ProtocolPractitioner is what a careful practitioner would run: start
	// at the Laplace approximation (the mode by BFGS with the analytic
	// gradient, the Hessian by differences of it), optimise in that
	// Gaussian's coordinates so every step is a fraction of the
	// posterior's own width, sweep PractitionerLRs, and check the chosen
	// fit (see Convergence). The default.
	ProtocolPractitioner Protocol = "practitioner"
	// ProtocolPaper is the paper's protocol (its Section 5 and App. D):
	// start at the prior's Gaussian moments in z's own units, sweep
	// PaperLRs over the fixed step ladder and keep the best rate per
	// budget. Kept to reproduce the paper's tables; the checks still run.
	ProtocolPaper Protocol = "paper"
)

// PaperLRs is the paper's learning-rate sweep, 7 rates from 10⁻⁶ to 10⁻².
func PaperLRs() []float64 { return LRGrid(7, 1e-6, 1e-2) }

// PractitionerLRs is the sweep of the practitioner protocol. In the
// whitened coordinates a rate is the fraction of a posterior sd Adam moves
// per step, so 10⁻³ (10⁴ steps to cross 10 sds) to 10⁻¹ (jitter of a
// tenth of an sd, removed by the trailing average) brackets the useful
// rates for the ladder's 10³–10⁴ steps whatever the posterior's scale.
func PractitionerLRs() []float64 { return LRGrid(5, 1e-3, 1e-1) }

// ParseProtocol validates a protocol name; "" is the practitioner's.
func ParseProtocol(s string) (Protocol, error) {
	switch Protocol(s) {
	case "", ProtocolPractitioner:
		return ProtocolPractitioner, nil
	case ProtocolPaper:
		return ProtocolPaper, nil
	}
	return "", fmt.Errorf("unknown VI protocol %q (valid: practitioner, paper)", s)
}

// DefaultLRs is the sweep of protocol p.
func (p Protocol) DefaultLRs() []float64 {
	if p == ProtocolPaper {
		return PaperLRs()
	}
	return PractitionerLRs()
}

// Start returns the Gaussian a fit under protocol p starts from and works
// in the coordinates of (nil: the prior, in z's own units), and a label
// for it: "laplace", "prior", or "prior (laplace failed: …)" when the
// practitioner's Laplace approximation could not be built, in which case
// the fit still works in the prior Gaussian's coordinates.
func (p Protocol) Start(ctx context.Context, task *factor.Task) (*Gaussian, string, error) {
	if p == ProtocolPaper {
		return nil, "prior", nil
	}
	q, _, err := Laplace(ctx, task)
	if err == nil {
		return q, "laplace", nil
	}
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	g, perr := PriorGaussian(task.Prior)
	if perr != nil {
		return nil, "", perr
	}
	return g, fmt.Sprintf("prior (laplace failed: %v)", err), nil
}

// FRVIOptions configures RunFRVI. Zero values take the defaults noted.
type FRVIOptions struct {
	Protocol Protocol  // "" means ProtocolPractitioner
	Budgets  []int     // nil means DefaultBudgets
	LRs      []float64 // nil means Protocol.DefaultLRs()
	// MCSamples, AvgFrac, TotalGradient and Seed are FRVIConfig's.
	MCSamples     int
	AvgFrac       float64
	TotalGradient bool
	Seed          uint64
	// Selection picks the rate per budget ("" means SelectELBO), scored
	// by Score (nil means NegELBOScore(task, 2000, Seed)).
	Selection Selection
	Score     ScoreFunc
	// Bound, when set, bounds Score from below, so the sweep scores only
	// the fits that could still be chosen (SweepBounded); the choice is
	// the same.
	Bound BoundFunc
	// OnRate, when set, is called after each learning rate's run (a
	// progress bar's tick).
	OnRate func(lr float64)
}

// FRVIResult is the outcome of RunFRVI.
type FRVIResult struct {
	Protocol Protocol
	Start    string    // "laplace", "prior", or "prior (laplace failed: …)"
	Init     *Gaussian // the start (nil for the paper's prior start)
	LRs      []float64
	Sweep    *SweepResult
	// Best and Convergence are per budget, in the budgets' order.
	Best        []*Gaussian
	Convergence []Convergence
	// StartSeconds is the wall-clock of building the start (the Laplace
	// approximation under the practitioner protocol; 0 for the paper's
	// prior start), shared by every rate and part of producing each fit.
	StartSeconds float64
	// Seconds[i][k] is the wall-clock of rate LRs[i]'s optimisation up to
	// budget k (scoring excluded; 0 for budgets a diverged run missed).
	Seconds [][]float64
	// CheckSeconds is the wall-clock of the convergence checks, which a
	// method's reported cost may leave out: they diagnose the fit, they
	// are not part of producing it.
	CheckSeconds float64
}

// ChosenSeconds is the cost of the chosen fit at budget index k: the
// start plus the chosen rate's optimisation up to that budget.
func (r *FRVIResult) ChosenSeconds(k int) float64 {
	i := indexOf(r.LRs, r.Sweep.Best[k].LR)
	if i < 0 {
		return r.StartSeconds
	}
	return r.StartSeconds + r.Seconds[i][k]
}

// Final is the chosen fit at the largest budget.
func (r *FRVIResult) Final() *Gaussian { return r.Best[len(r.Best)-1] }

// FinalConvergence is the verdict on Final.
func (r *FRVIResult) FinalConvergence() Convergence { return r.Convergence[len(r.Convergence)-1] }

// RunFRVI runs FRVI on task under a protocol: the start, the learning-rate
// sweep over the budget ladder with a rate chosen per budget, and the
// convergence checks of each chosen fit.
func RunFRVI(ctx context.Context, task *factor.Task, o FRVIOptions) (*FRVIResult, error) {
	proto, err := ParseProtocol(string(o.Protocol))
	if err != nil {
		return nil, err
	}
	budgets := o.Budgets
	if budgets == nil {
		budgets = slices.Clone(DefaultBudgets)
	}
	lrs := o.LRs
	if lrs == nil {
		lrs = proto.DefaultLRs()
	}
	sel := o.Selection
	if sel == "" {
		sel = SelectELBO
	}
	score := o.Score
	if score == nil {
		score = NegELBOScore(task, 2000, o.Seed)
	}
	t0 := time.Now()
	init, start, err := proto.Start(ctx, task)
	if err != nil {
		return nil, fmt.Errorf("frvi: %w", err)
	}
	startSecs := time.Since(t0).Seconds()
	traces := make([]*Trace, len(lrs))
	secs := make([][]float64, len(lrs))
	fit := func(ctx context.Context, lr float64) ([]Approx, error) {
		i := indexOf(lrs, lr)
		tr := NewTrace(budgets, frviParams{d: task.D}.size())
		traces[i] = tr
		secs[i] = make([]float64, len(budgets))
		began := time.Now()
		cfg := FRVIConfig{LR: lr, Budgets: budgets, MCSamples: o.MCSamples, AvgFrac: o.AvgFrac,
			Seed: o.Seed, TotalGradient: o.TotalGradient, Init: init, Trace: tr,
			OnSnapshot: func(k int) { secs[i][k] = time.Since(began).Seconds() }}
		qs, err := FitFRVI(ctx, task, cfg)
		if o.OnRate != nil {
			o.OnRate(lr)
		}
		out := make([]Approx, len(qs))
		for i, q := range qs {
			out[i] = q
		}
		return out, err
	}
	sw, err := SweepBounded(ctx, lrs, budgets, fit, sel, score, o.Bound)
	if err != nil {
		return nil, fmt.Errorf("frvi: %w", err)
	}
	res := &FRVIResult{Protocol: proto, Start: start, Init: init, LRs: lrs, Sweep: sw, StartSeconds: startSecs, Seconds: secs}
	for _, c := range sw.Best {
		g, ok := c.Q.(*Gaussian)
		if !ok {
			return nil, errors.New("frvi: sweep returned a non-Gaussian fit")
		}
		res.Best = append(res.Best, g)
	}
	t1 := time.Now()
	if res.Convergence, err = Assess(ctx, task, lrs, sw, traces, o.Seed); err != nil {
		return nil, fmt.Errorf("frvi: convergence checks: %w", err)
	}
	res.CheckSeconds = time.Since(t1).Seconds()
	return res, nil
}
