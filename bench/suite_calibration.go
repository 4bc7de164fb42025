package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/afin-bench/afin/calibration"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/progress"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/suite"
)

// The calibration suite (issue 18) runs simulation-based calibration over
// the 16 prior–likelihood pairs at the three difficulty tiers of the
// synthetic suite: each (setting, replicate) is a simulated task whose true
// z is known, each method's draws give the ranks of package calibration,
// and one record per (setting, replicate, method) keeps them in its
// diagnostics (m1, m2 and sw2 are null: there is no reference). The
// report pools the records of a tier into rank-ECDF bands, coverage and
// z-scores. A record's seed is the task replicate; --seeds does not apply.

// CalibrationSuite is the suite's name.
const CalibrationSuite = suite.Calibration

// calibrationSuite runs its own way (Runner): no reference posterior,
// one record of ranks per (setting, replicate, method).
type calibrationSuite struct {
	BaseSuite
	info suite.Info
}

func init() { Register(calibrationSuite{info: builtinInfo(CalibrationSuite)}) }

func (s calibrationSuite) Info() suite.Info { return s.info }

func (calibrationSuite) Settings(*Profile) ([]Setting, error) { return CalibrationSettings(), nil }

// Plans: none for Run's units; the suite's methods, each with its task
// count, are CalibrationPlans, which RunCalibration runs.
func (calibrationSuite) Plans(*Profile) []Plan { return nil }

func (calibrationSuite) Run(ctx context.Context, cfg Config) (*Summary, error) {
	return RunCalibration(ctx, cfg)
}

// CalibrationDraws is L, the posterior draws each rank is taken among.
const CalibrationDraws = 100

// CalibrationPlan is one method of the calibration suite: its plan (one
// budget) and on how many tasks per setting it runs.
type CalibrationPlan struct {
	Plan
	Tasks int
}

// calibrationTasks is tasks per setting per profile: AFIN, AFIN+SNIS and
// FRVI on many, NUTS (the calibrated control) on fewer.
var calibrationTasks = map[string][2]int{"smoke": {2, 2}, "quick": {8, 4}, "paper": {100, 25}}

// CalibrationPlans returns the calibration suite's methods under p. The
// opt-in afin-imh and auto run when --methods names them.
func (p *Profile) CalibrationPlans() []CalibrationPlan {
	many, few := calibrationTasks[p.Name][0], calibrationTasks[p.Name][1]
	if many == 0 {
		many, few = 16, 8
	}
	o := p.options(CalibrationDraws)
	// ELBO selection: SBC must not look at the truth to pick a rate.
	o.VI.Selection = methods.DefaultOptions().VI.Selection
	o.NUTS.Chains = 1
	plan := func(m string, budget, tasks int, optIn bool) CalibrationPlan {
		return CalibrationPlan{Plan: Plan{Method: m, Ladder: []int{budget}, Options: o, OptIn: optIn}, Tasks: tasks}
	}
	return []CalibrationPlan{
		plan(methods.AFIN, CalibrationDraws, many, false),
		plan(methods.AFINSNIS, 10*CalibrationDraws, many, false),
		plan(methods.FRVI, slices.Max(p.FRVISteps), many, false),
		plan(methods.NUTS, 4*CalibrationDraws, few, false),
		plan(methods.AFINIMH, 4*CalibrationDraws, many, true),
		plan(methods.Auto, 10*CalibrationDraws, few, true),
	}
}

// CalibrationSettings are the synthetic suite's 48 settings under the
// calibration suite's name (the same tasks for the same replicate).
func CalibrationSettings() []Setting { return syntheticGrid(CalibrationSuite) }

// calibrationRun is the state of one run of the suite.
type calibrationRun struct {
	cfg   *Config
	st    *records.Store
	prov  records.Provenance
	plans []CalibrationPlan
	ms    map[string]methods.Method
	sum   *Summary
	first error
}

// RunCalibration runs the calibration suite; bench.Run hands it the
// config when Suite names it. Resume and --shard work as in the
// other suites (a task's methods share its shard).
func RunCalibration(ctx context.Context, cfg Config) (*Summary, error) {
	start := time.Now()
	r, err := newCalibrationRun(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer r.st.Close()
	settings := cfg.Settings
	if settings == nil {
		settings = CalibrationSettings()
	}
	type task struct {
		s   Setting
		rep uint64
		ps  []CalibrationPlan
	}
	var todo []task
	for _, s := range settings {
		for rep := range uint64(maxTasks(r.plans)) {
			if !InShard(shardKey(s, rep), cfg.Shard, cfg.Shards) {
				continue
			}
			t := task{s: s, rep: rep}
			for _, p := range r.plans {
				if int(rep) < p.Tasks && r.ms[p.Method] != nil {
					r.sum.Units++
					if k := calibrationKey(s, rep, p); r.st.Succeeded(k) || (r.st.Has(k) && !cfg.RetryFailed) {
						r.sum.Skipped++
						if !r.st.Succeeded(k) {
							r.sum.PrevFailed++
						}
						continue
					}
					t.ps = append(t.ps, p)
				}
			}
			if len(t.ps) > 0 {
				todo = append(todo, t)
			}
		}
	}
	bar := progress.New(cfg.Progress, "bench calibration", r.sum.Units-r.sum.Skipped)
	for _, t := range todo {
		if ctx.Err() != nil {
			break
		}
		r.runTask(ctx, t.s, t.rep, t.ps, bar)
	}
	bar.Finish()
	r.sum.Duration = time.Since(start)
	if err := ctx.Err(); err != nil {
		return r.sum, fmt.Errorf("interrupted after %d records (rerun to resume): %w", r.sum.Records, err)
	}
	if r.first != nil {
		return r.sum, fmt.Errorf("%d unit(s) failed; first: %w", r.sum.Failed, r.first)
	}
	return r.sum, nil
}

func maxTasks(ps []CalibrationPlan) int {
	m := 0
	for _, p := range ps {
		m = max(m, p.Tasks)
	}
	return m
}

// calibrationKey is the key of the one record of a unit.
func calibrationKey(s Setting, rep uint64, p CalibrationPlan) string {
	rec := records.Record{Suite: CalibrationSuite, Setting: s.Key, Seed: rep, Method: p.Method,
		BudgetKind: kindOf(p.Method), Budget: p.Ladder[0]}
	return rec.Key()
}

func newCalibrationRun(ctx context.Context, cfg *Config) (*calibrationRun, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	r := &calibrationRun{cfg: cfg, plans: cfg.Profile.CalibrationPlans()}
	plans := make([]Plan, len(r.plans))
	for i, p := range r.plans {
		plans[i] = p.Plan
	}
	name := ResultsFileName(CalibrationSuite, cfg.Shard, cfg.Shards)
	if err := records.CheckWriter(cfg.Results, name, cfg.writer()); err != nil {
		return nil, err
	}
	ms, notes, err := ResolveMethods(plans, cfg.Methods, cfg.Env, cfg.NewMethod)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no method of the calibration suite is available: %v", notes)
	}
	if len(cfg.Seeds) > 0 {
		notes = append(notes, "--seeds is ignored by the calibration suite: its seeds are task replicates")
	}
	for _, n := range notes {
		fmt.Fprintln(cfg.Log, "note:", n)
	}
	r.ms = ms
	if r.st, err = records.OpenStoreFor(cfg.Results, name, cfg.writer()); err != nil {
		return nil, err
	}
	r.sum = &Summary{File: r.st.Path(), Notes: notes}
	r.prov = records.CurrentProvenance(ctx, cfg.Profile.Name, cfg.Env.Engine.String()) // which implementation ran the network
	if cfg.Shards > 1 {
		r.prov.Shard = fmt.Sprintf("%d/%d", cfg.Shard, cfg.Shards)
	}
	for _, m := range ms {
		if p, ok := m.(methods.Provenancer); ok {
			r.prov.Checkpoint = p.CheckpointHash()
		}
	}
	return r, nil
}

// runTask simulates one task and runs its pending methods on it; a
// failing method is counted, leaves a failed record and the others still
// run. An interrupted unit leaves no record, so a resume redoes it.
func (r *calibrationRun) runTask(ctx context.Context, s Setting, rep uint64, ps []CalibrationPlan, bar *progress.Bar) {
	task, taskErr := SimTask(s, rep)
	for _, p := range ps {
		err := taskErr
		if err == nil {
			err = r.runUnit(ctx, s, rep, task, p)
		}
		if err != nil && ctx.Err() != nil {
			return
		}
		if err != nil {
			r.sum.Failed++
			if r.first == nil {
				r.first = fmt.Errorf("%s seed %d %s: %w", s.Key, rep, p.Method, err)
			}
			fmt.Fprintf(r.cfg.Log, "calibration: %s seed %d %s: %v\n", s.Key, rep, p.Method, err)
			if rerr := r.recordFailure(s, rep, task, p, err); rerr != nil {
				fmt.Fprintf(r.cfg.Log, "calibration: %v\n", rerr)
			} else {
				r.sum.Records++
			}
		} else {
			r.sum.Ran++
			r.sum.Records++
		}
		bar.Add(1)
	}
}

// runUnit runs one method on one task and appends its record.
func (r *calibrationRun) runUnit(ctx context.Context, s Setting, rep uint64, task *factor.Task, p CalibrationPlan) error {
	seed := UnitSeed(s.Key, rep, p.Method, "")
	job := &methods.Job{Task: task, Seed: seed, Ladder: p.Ladder, Options: p.Options, SkipProposal: true}
	var pt *methods.Point
	err := methods.Run(ctx, r.ms[p.Method], job, func(q methods.Point) error {
		if q.Stage == "" {
			pt = &q
		}
		return nil
	})
	if err != nil {
		return err
	}
	if pt == nil || pt.Draws == nil || pt.Draws.Len() == 0 {
		return fmt.Errorf("method %s gave no draws", p.Method)
	}
	ranks, err := calibration.Rank(task, pt.Draws, CalibrationDraws, projection(task.D),
		streams.New(seed, streams.CalibrationRanks))
	if err != nil {
		return err
	}
	diag, err := pt.Diagnostics.Numbers()
	if err != nil {
		return err
	}
	prior, lik := s.Families(rep)
	nan := records.Num(math.NaN())
	rec := &records.Record{Suite: CalibrationSuite, Setting: s.Key, Group: s.Group, Prior: prior, Likelihood: lik,
		D: task.D, N: task.N(), Seed: rep, Method: p.Method, BudgetKind: pt.Kind, Budget: pt.Budget,
		M1: nan, M2: nan, SW2: nan, Seconds: records.Num(pt.Seconds),
		Diagnostics: map[string]records.Num{}, Reference: records.RefInfo{Kind: "true_z"}, Provenance: r.prov}
	for k, v := range diag {
		rec.Diagnostics[k] = records.Num(v)
	}
	for k, v := range ranks.Numbers() {
		rec.Diagnostics[k] = records.Num(v)
	}
	if rec.MethodSettings, err = pt.Settings.Map(); err != nil {
		return err
	}
	rec.Provenance.Time = time.Now().UTC().Format(time.RFC3339)
	return r.st.Append(rec)
}

// recordFailure leaves the failed record of a calibration unit (its one
// key, see calibrationKey), as bench.Run does for the other suites.
func (r *calibrationRun) recordFailure(s Setting, rep uint64, task *factor.Task, p CalibrationPlan, cause error) error {
	prior, lik := s.Families(rep)
	rec := &records.Record{Suite: CalibrationSuite, Setting: s.Key, Group: s.Group, Prior: prior, Likelihood: lik,
		Seed: rep, Method: p.Method, BudgetKind: kindOf(p.Method), Budget: p.Ladder[0],
		Reference: records.RefInfo{Kind: "true_z"}, Provenance: r.prov}
	if task != nil {
		rec.D, rec.N = task.D, task.N()
	}
	rec.Provenance.Time = time.Now().UTC().Format(time.RFC3339)
	rec.MarkFailed(cause.Error())
	return r.st.Append(rec)
}

// projection is the fixed random unit direction of the projection test
// quantity in dimension d (seeded by d alone, so every task and method of
// a tier shares it).
func projection(d int) []float64 {
	rng := streams.New(uint64(d), streams.CalibrationRanks)
	v := make([]float64, d)
	norm := 0.0
	for i := range v {
		v[i] = rng.NormFloat64()
		norm += v[i] * v[i]
	}
	for i := range v {
		v[i] /= math.Sqrt(norm)
	}
	return v
}

// workflowPlans are the opt-in afin-imh and auto plans of the synthetic
// and uci suites (issue 18's workflow table): both at the largest NUTS
// budget, so auto's NUTS stage and NUTS alone return as many draws.
func (p *Profile) workflowPlans() []Plan {
	o := p.options(p.FRVIDraws)
	n := slices.Max(p.NUTSDraws)
	n -= n % max(o.Auto.Chains, o.IMH.Chains, 1)
	return []Plan{
		{Method: methods.AFINIMH, Ladder: []int{n}, Options: o, OptIn: true},
		{Method: methods.Auto, Ladder: []int{n}, Options: o, OptIn: true},
	}
}
