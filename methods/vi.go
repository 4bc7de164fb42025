package methods

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/afin-bench/afin/baselines/flows"
	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/internal/progress"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// elboDraws is the Monte Carlo size of the ELBO in selection and in
// diagnostics.
const elboDraws = 2048

func (o VIOptions) check(job *Job, needDraws bool) error {
	if len(o.LRs) == 0 {
		return badInput("--lr: no learning rate given")
	}
	for _, lr := range o.LRs {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return badInput("--lr must be finite and > 0, got %g", lr)
		}
	}
	if _, err := vi.ParseSelection(string(o.Selection)); err != nil {
		return badInput("--lr-select: %v", err)
	}
	if o.Selection == vi.SelectOracle && job.Score == nil {
		return badInput("--lr-select oracle needs a reference to score against")
	}
	if o.MCSamples < 1 {
		return badInput("--mc must be ≥ 1, got %d", o.MCSamples)
	}
	if needDraws && o.Draws < 1 {
		return badInput("--draws must be ≥ 1, got %d", o.Draws)
	}
	return nil
}

// frviFit is one timed FRVI fit at one learning rate and step count.
type frviFit struct {
	q        *vi.Gaussian
	draws    *posterior.Draws
	fitSecs  float64 // optimisation
	drawSecs float64 // drawing from q
	lr       float64
	score    float64
}

// frviSweep fits every rate with steps steps and keeps the best by the
// selection rule; n draws from each q are taken (and scored under oracle
// selection). The VIDiagnostics describe the sweep.
func frviSweep(ctx context.Context, job *Job, steps, n int) (*frviFit, *VIDiagnostics, error) {
	o := job.Options.VI
	var best *frviFit
	dg := &VIDiagnostics{Selection: selectionLabel(o), LRsTried: len(o.LRs), Steps: steps}
	var sweep float64
	bar := progress.New(job.Progress, fmt.Sprintf("frvi %d steps", steps), len(o.LRs))
	defer bar.Finish()
	for _, lr := range o.LRs {
		start := time.Now()
		qs, err := vi.FitFRVI(ctx, job.Task, vi.FRVIConfig{LR: lr, Budgets: []int{steps}, MCSamples: o.MCSamples, Seed: job.Seed})
		bar.Add(1)
		fit := &frviFit{lr: lr, fitSecs: time.Since(start).Seconds()}
		sweep += fit.fitSecs
		if errors.Is(err, vi.ErrDiverged) || (err == nil && (len(qs) == 0 || qs[0] == nil)) {
			dg.LRsDiverged++
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("frvi at learning rate %g: %w", lr, err)
		}
		fit.q = qs[0]
		t0 := time.Now()
		fit.draws, _ = posterior.DrawsOf(fit.q, streams.New(job.Seed, streams.VIDraws), n)
		fit.drawSecs = time.Since(t0).Seconds()
		if o.Selection == vi.SelectOracle {
			fit.score = job.Score(fit.draws)
		} else {
			fit.score = -vi.ELBO(job.Task, fit.q, streams.New(job.Seed, streams.ELBO), elboDraws)
		}
		if math.IsNaN(fit.score) {
			fit.score = math.Inf(1)
		}
		if best == nil || fit.score < best.score {
			best = fit
		}
	}
	if best == nil {
		return nil, nil, fmt.Errorf("frvi: every learning rate %v diverged within %d steps", o.LRs, steps)
	}
	dg.LR = best.lr
	dg.OptimizeSeconds = records.Num(best.fitSecs)
	dg.SweepSeconds = records.Num(sweep)
	dg.SampleSeconds = records.Num(best.drawSecs)
	dg.ELBO = records.Num(vi.ELBO(job.Task, best.q, streams.New(job.Seed, streams.ELBO), elboDraws) + job.Task.LogNormalizer())
	return best, dg, nil
}

// frviMethod is full-rank Gaussian VI along a ladder of step counts; each
// budget is its own sweep of independent fits.
type frviMethod struct{}

func (frviMethod) Name() string              { return "frvi" }
func (frviMethod) Kind() string              { return KindSteps }
func (frviMethod) Slots(ladder []int) []Slot { return ladderSlots(KindSteps, ladder) }

func (frviMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	o := job.Options.VI
	if err := o.check(job, true); err != nil {
		return err
	}
	if err := checkLadder(KindSteps, job.Ladder, 1); err != nil {
		return err
	}
	for _, steps := range job.Ladder {
		best, dg, err := frviSweep(ctx, job, steps, o.Draws)
		if err != nil {
			return err
		}
		mean, cov := best.q.Moments()
		err = emit(Point{
			Slot:  Slot{Kind: KindSteps, Budget: steps},
			Draws: best.draws, Mean: mean, Cov: cov,
			Seconds:     best.fitSecs + best.drawSecs,
			Diagnostics: Diagnostics{VIDiagnostics: dg, Flags: lrEdgeFlags(o.LRs, best.lr)},
			Settings:    Settings{LRs: o.LRs, Selection: string(o.Selection), Draws: o.Draws},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// frviSNISMethod refines an FRVI proposal fitted with Options.FRVISteps
// steps by SNIS along a ladder of proposal counts, and emits the
// proposal itself as the star.
type frviSNISMethod struct{}

func (frviSNISMethod) Name() string              { return "frvi-snis" }
func (frviSNISMethod) Kind() string              { return KindProposals }
func (frviSNISMethod) Slots(ladder []int) []Slot { return snisSlots(ladder) }

func (frviSNISMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	o := job.Options.VI
	if err := o.check(job, false); err != nil {
		return err
	}
	if err := checkLadder(KindProposals, job.Ladder, 2); err != nil {
		return err
	}
	if job.Options.FRVISteps < 1 {
		return badInput("--steps must be ≥ 1, got %d", job.Options.FRVISteps)
	}
	top := job.Ladder[len(job.Ladder)-1]
	best, dg, err := frviSweep(ctx, job, job.Options.FRVISteps, top)
	if err != nil {
		return err
	}
	settings := Settings{Steps: job.Options.FRVISteps, LR: best.lr, LRs: o.LRs, Selection: string(o.Selection)}
	if !job.SkipProposal {
		err := emit(Point{Slot: Slot{Stage: StageProposal, Kind: KindProposals, Budget: top}, Draws: best.draws,
			Seconds: best.fitSecs + best.drawSecs, Diagnostics: Diagnostics{VIDiagnostics: dg, Flags: lrEdgeFlags(o.LRs, best.lr)}, Settings: settings})
		if err != nil {
			return err
		}
	}
	for i, n := range job.Ladder {
		start := time.Now()
		draws, info, err := posterior.SNISOf(ctx, job.Task, best.q, streams.New(job.Seed, streams.FRVISNISLadder.At(i)), n)
		if err != nil {
			return fmt.Errorf("frvi-snis with %d proposals: %w", n, err)
		}
		secs := time.Since(start).Seconds()
		err = emit(Point{
			Slot: Slot{Kind: KindProposals, Budget: n}, Draws: draws, Seconds: best.fitSecs + secs,
			Diagnostics: Diagnostics{VIDiagnostics: dg, SNISDiagnostics: newSNISDiagnostics(n, info, secs)},
			Settings:    settings,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// flowMethod is normalising-flow VI (IAF, MAF or NSF) along the step
// ladder: one snapshotting trajectory per learning rate.
type flowMethod struct{ kind flows.Kind }

func (m flowMethod) Name() string            { return string(m.kind) }
func (flowMethod) Kind() string              { return KindSteps }
func (flowMethod) Slots(ladder []int) []Slot { return ladderSlots(KindSteps, ladder) }

func (m flowMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	o := job.Options.VI
	if err := o.check(job, true); err != nil {
		return err
	}
	if err := checkLadder(KindSteps, job.Ladder, 1); err != nil {
		return err
	}
	if err := checkArch(job.Options.Flow); err != nil {
		return err
	}
	opts := flows.Options{Arch: job.Options.Flow, Budgets: job.Ladder, LRs: o.LRs, MCSamples: o.MCSamples,
		Selection: o.Selection, Seed: job.Seed, Progress: job.Progress}
	if o.Selection == vi.SelectOracle {
		opts.Score = func(_ int, q vi.Approx) (float64, error) {
			d, _ := posterior.DrawsOf(q, streams.New(job.Seed, streams.FlowOracleDraws), min(o.Draws, 2000))
			return job.Score(d), nil
		}
	}
	res, err := flows.Fit(ctx, job.Task, m.kind, opts)
	if err != nil {
		return err
	}
	diverged := 0
	for _, e := range res.Sweep.Failures {
		if errors.Is(e, vi.ErrDiverged) {
			diverged++
		}
	}
	for i, snap := range res.Best {
		start := time.Now()
		draws, _ := posterior.DrawsOf(snap, streams.New(job.Seed, streams.VIDraws), o.Draws)
		sampling := time.Since(start).Seconds()
		dg := &VIDiagnostics{LR: snap.LR, Selection: selectionLabel(o), LRsTried: len(o.LRs), LRsDiverged: diverged,
			Steps: snap.Steps, NParams: snap.NumParams(),
			ELBO:            records.Num(vi.ELBO(job.Task, snap, streams.New(job.Seed, streams.ELBO), elboDraws) + job.Task.LogNormalizer()),
			OptimizeSeconds: records.Num(snap.Seconds), SweepSeconds: records.Num(res.Seconds), SampleSeconds: records.Num(sampling)}
		err := emit(Point{
			Slot: Slot{Kind: KindSteps, Budget: job.Ladder[i]}, Draws: draws, Seconds: snap.Seconds + sampling,
			Diagnostics: Diagnostics{VIDiagnostics: dg, Flags: lrEdgeFlags(o.LRs, snap.LR)},
			Settings:    Settings{LRs: o.LRs, Selection: string(o.Selection), Draws: o.Draws},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// selectionLabel names the selection rule; with one rate there is none.
func selectionLabel(o VIOptions) string {
	if len(o.LRs) == 1 {
		return "fixed"
	}
	return string(o.Selection)
}

// checkArch refuses flow architectures that flows.Arch would silently
// replace by its defaults (zero fields) or reject.
func checkArch(a flows.Arch) error {
	switch {
	case a.Layers < 1:
		return badInput("--layers must be ≥ 1, got %d", a.Layers)
	case a.Hidden < 1:
		return badInput("--hidden must be ≥ 1, got %d", a.Hidden)
	case a.Depth < 1:
		return badInput("--depth must be ≥ 1, got %d", a.Depth)
	case a.Bins < 2:
		return badInput("--bins must be ≥ 2, got %d", a.Bins)
	case !(a.Bound > 0):
		return badInput("--bound must be > 0, got %g", a.Bound)
	case !(a.MaxLogScale > 0):
		return badInput("max log-scale must be > 0, got %g", a.MaxLogScale)
	}
	if err := a.Check(); err != nil {
		return badInput("--%v", err)
	}
	return nil
}
