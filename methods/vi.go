package methods

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/afin-bench/afin/baselines/flows"
	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/internal/progress"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// elboDraws is the Monte Carlo size of the ELBO in selection and in
// diagnostics.
const elboDraws = 2048

func (o VIOptions) check(job *Job, needDraws bool) error {
	if _, err := vi.ParseProtocol(string(o.Protocol)); err != nil {
		return badInput("--protocol: %v", err)
	}
	if o.LRs != nil && len(o.LRs) == 0 {
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

// protocol is the protocol o names ("" is the practitioner's); check has
// validated it.
func (o VIOptions) protocol() vi.Protocol {
	p, _ := vi.ParseProtocol(string(o.Protocol))
	return p
}

// lrs is the sweep: the given rates, or the protocol's own.
func (o VIOptions) lrs() []float64 {
	if o.LRs != nil {
		return o.LRs
	}
	return o.protocol().DefaultLRs()
}

// settings is what a VI point records of o.
func (o VIOptions) settings() Settings {
	return Settings{Protocol: string(o.protocol()), LRs: o.lrs(), Selection: string(o.Selection)}
}

// score is the selection's score of a fit: SW2 of n draws from the VIDraws
// stream to the reference (the very draws a point then reports) under
// oracle selection, else −ELBO from the ELBO stream. NaN scores +Inf.
func (o VIOptions) score(job *Job, n int) vi.ScoreFunc {
	return func(ctx context.Context, _ int, q vi.Approx) (float64, error) {
		var s float64
		if o.Selection == vi.SelectOracle {
			d, _, err := posterior.DrawsOfContext(ctx, q, streams.New(job.Seed, streams.VIDraws), n)
			if err != nil {
				return 0, err
			}
			s = job.Score(d)
		} else {
			elbo, err := vi.ELBOContext(ctx, job.Task, q, streams.New(job.Seed, streams.ELBO), elboDraws)
			if err != nil {
				return 0, err
			}
			s = -elbo
		}
		if math.IsNaN(s) {
			s = math.Inf(1)
		}
		return s, nil
	}
}

// bound is the oracle selection's lower bound on score(job, n) of a fit:
// the job's ScoreBound at the mean and covariance of the very draws score
// would take, found without holding them (nil when there is no oracle
// selection or no bound). A Gaussian fit's draws are an affine map of the
// stream's standard normals, so their moments come from one pass over
// those, shared by every rate; other fits are drawn.
func (o VIOptions) bound(job *Job, n int) vi.BoundFunc {
	if o.Selection != vi.SelectOracle || job.ScoreBound == nil {
		return nil
	}
	var std struct{ mean, cov []float64 } // the standard normals' moments
	return func(ctx context.Context, _ int, q vi.Approx) (float64, error) {
		g, ok := q.(*posterior.Gaussian)
		if !ok {
			mean, cov, err := posterior.DrawMoments(ctx, q, streams.New(job.Seed, streams.VIDraws), n)
			if err != nil {
				return 0, err
			}
			return job.ScoreBound(mean, cov), nil
		}
		if std.mean == nil {
			m, c, err := posterior.StandardMoments(ctx, streams.New(job.Seed, streams.VIDraws), g.Dim(), n)
			if err != nil {
				return 0, err
			}
			std.mean, std.cov = m, c
		}
		return job.ScoreBound(g.PushMoments(std.mean, std.cov)), nil
	}
}

// chosenScore is the oracle selection's score of the chosen fit at budget
// index k of res, which is Job.Score of the draws a point of that fit
// reports when the point takes as many draws as the selection scored
// (both draw from the VIDraws stream: the very same draws); nil under
// ELBO selection or when the score is not finite (the scorer then says
// what it is itself).
func (o VIOptions) chosenScore(res *vi.FRVIResult, k int) *float64 {
	c := res.Sweep.Best[k]
	if o.Selection != vi.SelectOracle || c.Pruned || math.IsInf(c.Score, 0) || math.IsNaN(c.Score) {
		return nil
	}
	s := c.Score
	return &s
}

// frviRun runs FRVI under the job's protocol along budgets (vi.RunFRVI:
// one trajectory per rate, snapshotted at each budget, which is exactly a
// run of that many steps; a rate chosen per budget; each choice checked).
// n is the number of draws an oracle selection scores.
func frviRun(ctx context.Context, job *Job, budgets []int, n int) (*vi.FRVIResult, error) {
	o := job.Options.VI
	lrs := o.lrs()
	bar := progress.New(job.Progress, fmt.Sprintf("frvi %v steps", budgets), len(lrs))
	defer bar.Finish()
	res, err := vi.RunFRVI(ctx, job.Task, vi.FRVIOptions{
		Protocol: o.protocol(), Budgets: budgets, LRs: lrs, MCSamples: o.MCSamples,
		Seed: job.Seed, Selection: o.Selection, Score: o.score(job, n), Bound: o.bound(job, n),
		OnRate: func(float64) { bar.Add(1) },
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// frviDiagnostics describe the chosen fit at budget index k of res, and
// return its convergence verdict as Flags (ctx stops the ELBO's draws).
func frviDiagnostics(ctx context.Context, job *Job, res *vi.FRVIResult, k int, sampleSecs float64) (*VIDiagnostics, *Flags, error) {
	o := job.Options.VI
	best := res.Sweep.Best[k]
	elbo, err := vi.ELBOContext(ctx, job.Task, res.Best[k], streams.New(job.Seed, streams.ELBO), elboDraws)
	if err != nil {
		return nil, nil, err
	}
	dg := &VIDiagnostics{
		Protocol: string(res.Protocol), Start: res.Start,
		LR: best.LR, Selection: selectionLabel(o, res.LRs), LRsTried: len(res.LRs),
		LRsDiverged: countDiverged(res.Sweep.Failures), Steps: best.Budget,
		ELBO:            records.Num(elbo + job.Task.LogNormalizer()),
		OptimizeSeconds: records.Num(res.ChosenSeconds(k) - res.StartSeconds),
		SweepSeconds:    records.Num(res.StartSeconds + sumSeconds(res.Seconds)),
		SampleSeconds:   records.Num(sampleSecs),
		StartSeconds:    records.Num(res.StartSeconds), CheckSeconds: records.Num(res.CheckSeconds),
	}
	return dg, dg.withConvergence(res.Convergence[k]), nil
}

// countDiverged counts the rates whose run diverged.
func countDiverged(failures []error) int {
	n := 0
	for _, e := range failures {
		if errors.Is(e, vi.ErrDiverged) {
			n++
		}
	}
	return n
}

// sumSeconds is every rate's optimisation time to its last budget.
func sumSeconds(secs [][]float64) float64 {
	var t float64
	for _, row := range secs {
		if len(row) > 0 {
			t += row[len(row)-1]
		}
	}
	return t
}

// Names of the VI methods.
const (
	// FRVI is full-rank Gaussian VI.
	FRVI = "frvi"
	// FRVISNIS reweights an FRVI fit by SNIS.
	FRVISNIS = "frvi-snis"
)

func init() {
	mustRegister(Descriptor{
		Entry: catalog.Entry{
			Name: FRVI, Summary: "full-rank Gaussian variational inference by Adam on the reparameterised ELBO",
			Kind: KindSteps, Family: catalog.VI, Baseline: true,
			Rank: 3, Label: "FRVI", Legend: 4, Colour: "#009E73", Marker: "rect",
		},
		New:   func(string, *Env) (Method, error) { return frviMethod{}, nil },
		Slots: frviMethod{}.Slots,
		Flags: viFlags,
	})
	mustRegister(Descriptor{
		Entry: catalog.Entry{
			Name: FRVISNIS, Summary: "an FRVI fit as the proposal of self-normalised importance sampling",
			Kind: KindProposals, Family: catalog.VI, Weighted: true, Proposal: FRVI,
			Rank: 4, Label: "FRVI+SNIS", Legend: 5, Marker: "roundRect",
			VariantColours: map[string]string{"1k": "#56B4E9", "5k": "#117733", "10k": "#332288"},
		},
		New:   func(string, *Env) (Method, error) { return frviSNISMethod{}, nil },
		Slots: frviSNISMethod{}.Slots,
		Flags: func(fs *flag.FlagSet, f *InferFlags) {
			f.Budget = fs.Int("proposals", 10000, fmt.Sprintf("proposal draws from the fitted Gaussian (≥ %d, the fewest a Pareto k̂ fit needs)", posterior.MinParetoKDraws))
			fs.IntVar(&f.Options.FRVISteps, "steps", f.Options.FRVISteps, "Adam steps per learning rate behind the proposal")
			f.VI = true
		},
	})
	for _, fl := range []struct {
		kind          flows.Kind
		label, colour string
		rank, legend  int
	}{
		{flows.IAF, "IAF VI", "#882255", 9, 6},
		{flows.MAF, "MAF VI", "#999933", 10, 7},
		{flows.NSF, "NSF VI", "#44AA99", 11, 8},
	} {
		m := flowMethod{fl.kind}
		mustRegister(Descriptor{
			Entry: catalog.Entry{
				Name: string(fl.kind), Summary: "normalising-flow variational inference (" + fl.label + ")",
				Kind: KindSteps, Family: catalog.VI,
				Rank: fl.rank, Label: fl.label, Legend: fl.legend, Colour: fl.colour,
			},
			New:   func(string, *Env) (Method, error) { return m, nil },
			Slots: m.Slots,
			Flags: func(fs *flag.FlagSet, f *InferFlags) {
				viFlags(fs, f)
				a := &f.Options.Flow
				fs.IntVar(&a.Layers, "layers", a.Layers, "autoregressive transforms")
				fs.IntVar(&a.Hidden, "hidden", a.Hidden, "MADE hidden width")
				fs.IntVar(&a.Depth, "depth", a.Depth, "MADE hidden layers")
				if m.kind == flows.NSF {
					fs.IntVar(&a.Bins, "bins", a.Bins, "spline bins")
					fs.Float64Var(&a.Bound, "bound", a.Bound, "spline window [-bound, bound]")
				}
			},
		})
	}
}

// viFlags are the flags of a VI method whose budget is steps: draws come
// from the fitted approximation.
func viFlags(fs *flag.FlagSet, f *InferFlags) {
	f.Budget = fs.Int("steps", 10000, "Adam steps per learning rate")
	f.Kept = &f.Options.VI.Draws
	fs.IntVar(&f.Options.VI.Draws, "draws", f.Options.VI.Draws, "draws from the fitted approximation")
	f.VI = true
}

// frviMethod is full-rank Gaussian VI along a ladder of step counts.
type frviMethod struct{}

func (frviMethod) Name() string              { return FRVI }
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
	res, err := frviRun(ctx, job, job.Ladder, o.Draws)
	if err != nil {
		return err
	}
	settings := o.settings()
	settings.Draws = o.Draws
	for k, steps := range job.Ladder {
		q := res.Best[k]
		t0 := time.Now()
		draws, _, err := posterior.DrawsOfContext(ctx, q, streams.New(job.Seed, streams.VIDraws), o.Draws)
		if err != nil {
			return err
		}
		sampling := time.Since(t0).Seconds()
		dg, flags, err := frviDiagnostics(ctx, job, res, k, sampling)
		if err != nil {
			return err
		}
		mean, cov := q.Moments()
		err = emit(Point{
			Slot:  Slot{Kind: KindSteps, Budget: steps},
			Draws: draws, Mean: mean, Cov: cov, Scored: o.chosenScore(res, k),
			Seconds:     res.ChosenSeconds(k) + sampling,
			Diagnostics: Diagnostics{VIDiagnostics: dg, Flags: flags},
			Settings:    settings,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// frviSNISMethod refines an FRVI proposal fitted with Options.FRVISteps
// steps by SNIS along a ladder of proposal counts, and emits the
// proposal itself as the star: the largest budget's proposals,
// unweighted (as afin-snis does), so the star and that point differ by
// the weights alone. The proposal is the fit the frvi method reports at that
// step count: its learning rate is chosen by the same rule on the same
// number of draws (Options.VI.Draws), not on the star's, which would
// score every rate's 10⁷ draws under the paper profile for a choice the
// profile's draws already make. The fit's convergence verdict is the
// star's flag; the SNIS points carry its numbers in VIDiagnostics and
// their own warning in the SNIS diagnostics (k̂).
type frviSNISMethod struct{}

func (frviSNISMethod) Name() string              { return FRVISNIS }
func (frviSNISMethod) Kind() string              { return KindProposals }
func (frviSNISMethod) Slots(ladder []int) []Slot { return snisSlots(ladder) }

func (frviSNISMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	o := job.Options.VI
	if err := o.check(job, o.Selection == vi.SelectOracle); err != nil {
		return err
	}
	if err := checkLadder(KindProposals, job.Ladder, posterior.MinParetoKDraws); err != nil {
		return err
	}
	if job.Options.FRVISteps < 1 {
		return badInput("--steps must be ≥ 1, got %d", job.Options.FRVISteps)
	}
	res, err := frviRun(ctx, job, []int{job.Options.FRVISteps}, o.Draws)
	if err != nil {
		return err
	}
	q, fitSecs := res.Final(), res.ChosenSeconds(0)
	settings := o.settings()
	settings.Steps, settings.LR = job.Options.FRVISteps, res.Sweep.Best[0].LR
	dg, flags, err := frviDiagnostics(ctx, job, res, 0, 0)
	if err != nil {
		return err
	}
	target := job.Task.Packed() // as afin-snis: log p̃ at every proposal, faster
	for i, n := range job.Ladder {
		start := time.Now()
		props, logQ := posterior.DrawsOf(q, streams.New(job.Seed, streams.FRVISNISLadder.At(i)), n)
		sampling := time.Since(start).Seconds()
		draws, info, err := posterior.SNISDraws(ctx, target, props, logQ)
		if err != nil {
			return fmt.Errorf("frvi-snis with %d proposals: %w", n, err)
		}
		secs := time.Since(start).Seconds()
		if i == len(job.Ladder)-1 && !job.SkipProposal {
			// The star: this point's proposals, unweighted (as afin-snis).
			sdg := *dg
			sdg.SampleSeconds = records.Num(sampling)
			err := emit(Point{Slot: Slot{Stage: StageProposal, Kind: KindProposals, Budget: n}, Draws: props, Twin: draws,
				Seconds: fitSecs + sampling, Diagnostics: Diagnostics{VIDiagnostics: &sdg, Flags: flags}, Settings: settings})
			if err != nil {
				return err
			}
		}
		err = emit(Point{
			Slot: Slot{Kind: KindProposals, Budget: n}, Draws: draws, Seconds: fitSecs + secs,
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
	if o.Draws < 2 {
		// A flow has no closed-form moments: its mean and covariance are
		// those of its draws, and one draw has no covariance (it would be
		// reported as a zero matrix).
		return badInput("--draws must be ≥ 2 (a flow's mean and covariance are estimated from its draws), got %d", o.Draws)
	}
	opts := flows.Options{Arch: job.Options.Flow, Protocol: o.protocol(), Budgets: job.Ladder, LRs: o.lrs(),
		MCSamples: o.MCSamples, Selection: o.Selection, Seed: job.Seed, Progress: job.Progress}
	if o.Selection == vi.SelectOracle {
		opts.Score = func(ctx context.Context, _ int, q vi.Approx) (float64, error) {
			d, _, err := posterior.DrawsOfContext(ctx, q, streams.New(job.Seed, streams.FlowOracleDraws), min(o.Draws, 2000))
			if err != nil {
				return 0, err
			}
			return job.Score(d), nil
		}
	}
	res, err := flows.Fit(ctx, job.Task, m.kind, opts)
	if err != nil {
		return err
	}
	settings := o.settings()
	settings.Draws = o.Draws
	for i, snap := range res.Best {
		start := time.Now()
		draws, _, err := posterior.DrawsOfContext(ctx, snap, streams.New(job.Seed, streams.VIDraws), o.Draws)
		if err != nil {
			return err
		}
		sampling := time.Since(start).Seconds()
		dg, err := flowDiagnostics(ctx, job, res, i, sampling)
		if err != nil {
			return err
		}
		err = emit(Point{
			Slot: Slot{Kind: KindSteps, Budget: job.Ladder[i]}, Draws: draws,
			Seconds:     res.StartSeconds + snap.Seconds + sampling,
			Diagnostics: Diagnostics{VIDiagnostics: dg, Flags: dg.withConvergence(res.Convergence[i])},
			Settings:    settings,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// flowDiagnostics describe the chosen snapshot at budget index i of res
// (ctx stops the ELBO's draws).
func flowDiagnostics(ctx context.Context, job *Job, res *flows.Result, i int, sampleSecs float64) (*VIDiagnostics, error) {
	o, snap := job.Options.VI, res.Best[i]
	lrs := o.lrs()
	elbo, err := vi.ELBOContext(ctx, job.Task, snap, streams.New(job.Seed, streams.ELBO), elboDraws)
	if err != nil {
		return nil, err
	}
	return &VIDiagnostics{
		Protocol: string(res.Protocol), Start: res.Start,
		LR: snap.LR, Selection: selectionLabel(o, lrs), LRsTried: len(lrs),
		LRsDiverged: countDiverged(res.Sweep.Failures), Steps: snap.Steps, NParams: snap.NumParams(),
		ELBO:            records.Num(elbo + job.Task.LogNormalizer()),
		OptimizeSeconds: records.Num(snap.Seconds), SweepSeconds: records.Num(res.Seconds),
		SampleSeconds: records.Num(sampleSecs), StartSeconds: records.Num(res.StartSeconds),
		CheckSeconds: records.Num(res.CheckSeconds),
	}, nil
}

// selectionLabel names the selection rule; with one rate there is none.
func selectionLabel(o VIOptions, lrs []float64) string {
	if len(lrs) == 1 {
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
