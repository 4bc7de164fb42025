package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/internal/progress"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/predictive"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/suite"
)

// The openml suite (issue 29, paper App. E.6) checks whether posteriors
// stay useful on real data: Bayesian logistic regression on 16 binary
// OpenML datasets (package datasets), each method's posterior predictive
// p(y=1|x) = E_q[σ(xᵀz)] (SNIS-weighted for AFIN+SNIS) scored on the
// held-out 30 % by accuracy, NLL and AUC, and on the training split the
// same way. There is no reference posterior: m1, m2 and sw2 are null, and
// the predictive metrics are the record's diagnostics (OpenMLMetrics).
// NUTS, the asymptotically exact method, is the reference for the model
// itself: its scores are what the logistic model can do, so the gap
// between NUTS and AFIN is the amortised approximation's and the gap
// between NUTS and TabPFN the model's. A record's seed picks the
// train/test split, the same for every method.

// OpenMLSuite is the suite's name.
const OpenMLSuite = suite.OpenML

// openmlSuite runs its own way (Runner): no reference posterior, the
// posterior predictive scored on held-out labels.
type openmlSuite struct {
	BaseSuite
	info suite.Info
}

func init() { Register(openmlSuite{info: builtinInfo(OpenMLSuite)}) }

func (s openmlSuite) Info() suite.Info { return s.info }

func (openmlSuite) Settings(p *Profile) ([]Setting, error) {
	if p == nil {
		return nil, errors.New("the openml suite's settings depend on the profile")
	}
	return OpenMLSettings(p), nil
}

func (openmlSuite) Plans(p *Profile) []Plan { return p.openmlPlans() }

func (openmlSuite) Ladder(p *Profile, kind string) []int { return p.openmlLadder(kind) }

func (openmlSuite) Run(ctx context.Context, cfg Config) (*Summary, error) { return RunOpenML(ctx, cfg) }

// OpenMLProposals is the paper's AFIN+SNIS proposal count, and the draws
// AFIN single shot and FRVI are scored with.
const OpenMLProposals = 4096

// OpenMLMetrics are the diagnostics keys of the predictive metrics, test
// split then training split.
var OpenMLMetrics = []string{"test_acc", "test_nll", "test_auc", "train_acc", "train_nll", "train_auc"}

// openmlBudget is one profile's share of the suite: its datasets and the
// NUTS and FRVI budgets (AFIN's are the paper's 4,096 at every profile).
type openmlBudget struct {
	datasets                      []string // nil: all 16
	nutsWarmup, nutsDraws, nutsCh int
	frviSteps                     int
}

var openmlBudgets = map[string]openmlBudget{
	// smoke: three small datasets, seconds of method time: heart-statlog
	// inside the shipped checkpoint's support, haberman outside it in its
	// covariate ranges and blood-transfusion in N (523 > 256), so the smoke
	// report shows the out-of-support flag.
	"smoke": {datasets: []string{"haberman", "heart-statlog", "blood-transfusion-service-center"},
		nutsWarmup: 200, nutsDraws: 400, nutsCh: 1, frviSteps: 300},
	"quick": {nutsWarmup: 500, nutsDraws: 1000, nutsCh: 1, frviSteps: 2000},
	"paper": {nutsWarmup: 1000, nutsDraws: 4000, nutsCh: 4, frviSteps: 10_000},
}

func (p *Profile) openmlBudget() openmlBudget {
	if b, ok := openmlBudgets[p.Name]; ok {
		return b
	}
	return openmlBudgets["quick"]
}

// openmlPlans are the suite's methods: AFIN and AFIN+SNIS at 4,096, NUTS
// and FRVI (learning rate by ELBO: there is no reference to pick it by).
func (p *Profile) openmlPlans() []Plan {
	b := p.openmlBudget()
	o := p.options(OpenMLProposals)
	o.NUTS.Warmup, o.NUTS.Chains = b.nutsWarmup, b.nutsCh
	o.VI.Selection = methods.DefaultOptions().VI.Selection
	return []Plan{
		{Method: methods.AFIN, Ladder: []int{OpenMLProposals}, Options: o},
		{Method: methods.AFINSNIS, Ladder: []int{OpenMLProposals}, Options: o},
		{Method: methods.NUTS, Ladder: []int{b.nutsDraws}, Options: o},
		{Method: methods.FRVI, Ladder: []int{b.frviSteps}, Options: o},
	}
}

// openmlLadder is an external method's ladder in the suite, by budget
// kind.
func (p *Profile) openmlLadder(kind string) []int {
	b := p.openmlBudget()
	switch kind {
	case methods.KindSteps:
		return []int{b.frviSteps}
	case methods.KindProposals:
		return []int{OpenMLProposals}
	}
	return []int{b.nutsDraws}
}

// OpenMLSettings are the suite's settings under profile p: one per
// dataset, keyed and grouped by its name, in the paper's table order.
func OpenMLSettings(p *Profile) []Setting {
	want := p.openmlBudget().datasets
	var out []Setting
	for _, in := range datasets.OpenMLList() {
		if want != nil && !contains(want, in.Name) {
			continue
		}
		out = append(out, Setting{Suite: OpenMLSuite, Key: in.Name, Group: in.Name, Dataset: in.Name,
			Prior: "diag_gaussian", Likelihood: "bernoulli_logit", D: in.DModel(), N: in.NTrain})
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// openmlUnit is one (dataset, seed, plan) of the suite.
type openmlUnit struct {
	split *datasets.OpenMLSplit
	s     Setting
	seed  uint64
	plan  Plan
}

// RunOpenML runs the openml suite; bench.Run hands it the config when
// Suite names it. cfg.DataDir is the directory of the raw files.
// Every dataset is read and preprocessed before the results store is
// opened, so a missing or bad file refuses the run and writes nothing.
func RunOpenML(ctx context.Context, cfg Config) (*Summary, error) {
	start := time.Now()
	r, todo, err := newOpenMLRun(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer r.st.Close()
	bar := progress.New(cfg.Progress, "bench openml", len(todo))
	for _, u := range todo {
		if ctx.Err() != nil {
			break
		}
		r.runUnit(ctx, u)
		bar.Add(1)
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

// newOpenMLRun checks and loads everything the run needs, then opens the
// results store and plans the units it does not hold yet.
func newOpenMLRun(ctx context.Context, cfg *Config) (*openmlRun, []openmlUnit, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, nil, err
	}
	plans := cfg.Profile.Plans(OpenMLSuite)
	ext, err := execPlans(cfg.Profile, openmlSuite{}, cfg.Methods, cfg.Env, cfg.NewMethod)
	if err != nil {
		return nil, nil, err
	}
	plans = append(plans, ext...)
	if err := checkWanted(plans, cfg.Methods); err != nil {
		return nil, nil, err
	}
	name := ResultsFileName(OpenMLSuite, cfg.Shard, cfg.Shards)
	if err := records.CheckUnlocked(cfg.Results, name); err != nil {
		return nil, nil, err
	}
	settings := cfg.Settings
	if settings == nil {
		settings = OpenMLSettings(cfg.Profile)
	}
	seeds := cfg.Seeds
	if len(seeds) == 0 {
		seeds = cfg.Profile.Seeds
	}
	splits, err := loadOpenMLSplits(cfg, settings, seeds)
	if err != nil {
		return nil, nil, err
	}
	ms, notes, err := ResolveMethods(plans, cfg.Methods, cfg.Env, cfg.NewMethod)
	if err != nil {
		return nil, nil, err
	}
	if len(ms) == 0 {
		return nil, nil, fmt.Errorf("no method of the openml suite is available: %s", strings.Join(notes, "; "))
	}
	st, err := records.OpenStore(cfg.Results, name)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range notes {
		fmt.Fprintln(cfg.Log, "note:", n)
	}
	r := &openmlRun{cfg: cfg, st: st, ms: ms, sum: &Summary{File: st.Path(), Notes: notes}}
	r.prov = records.CurrentProvenance(ctx, cfg.Profile.Name, cfg.Env.Engine.String()) // which implementation ran the network
	if cfg.Shards > 1 {
		r.prov.Shard = fmt.Sprintf("%d/%d", cfg.Shard, cfg.Shards)
	}
	for _, k := range keys(ms) {
		if p, ok := ms[k].(methods.Provenancer); ok {
			r.prov.Checkpoint = p.CheckpointHash()
		}
	}
	return r, r.plan(settings, seeds, plans, splits), nil
}

// loadOpenMLSplits reads and preprocesses every (dataset, seed) of the
// run, warning where a feature is constant on the training split.
func loadOpenMLSplits(cfg *Config, settings []Setting, seeds []uint64) (map[string]*datasets.OpenMLSplit, error) {
	names := make([]string, len(settings))
	for i, s := range settings {
		names[i] = s.Key
	}
	if err := datasets.CheckOpenMLDir(cfg.DataDir, names); err != nil {
		return nil, err
	}
	splits := map[string]*datasets.OpenMLSplit{}
	for _, s := range settings {
		for _, seed := range seeds {
			sp, err := datasets.LoadOpenML(cfg.DataDir, s.Key, seed)
			if err != nil {
				return nil, err
			}
			splits[shardKey(s, seed)] = sp
			if c := sp.ConstantInTrain; len(c) > 0 {
				fmt.Fprintf(cfg.Log, "warning: %s seed %d: feature(s) %s constant on the training split (sd floored at 1e-6, as the authors' code): their test values are huge and the predictions of those rows rest on the prior (records carry constant_train_features)\n",
					s.Key, seed, strings.Join(c, ", "))
			}
		}
	}
	return splits, nil
}

// plan lists the units of this shard the store does not hold, counting
// the others as skipped.
func (r *openmlRun) plan(settings []Setting, seeds []uint64, plans []Plan, splits map[string]*datasets.OpenMLSplit) []openmlUnit {
	var todo []openmlUnit
	for _, s := range settings {
		for _, seed := range seeds {
			if !InShard(shardKey(s, seed), r.cfg.Shard, r.cfg.Shards) {
				continue
			}
			for _, p := range plans {
				m, ok := r.ms[p.Method]
				if !ok {
					continue
				}
				r.sum.Units++
				u := openmlUnit{split: splits[shardKey(s, seed)], s: s, seed: seed, plan: p}
				if done, failed := r.unitDone(u, m); done {
					r.sum.Skipped++
					if failed {
						r.sum.PrevFailed++
					}
					continue
				}
				todo = append(todo, u)
			}
		}
	}
	if n := r.sum.PrevFailed; n > 0 {
		note := fmt.Sprintf("%d unit(s) failed in an earlier run and are not rerun (--retry-failed reruns them)", n)
		r.sum.Notes = append(r.sum.Notes, note)
		fmt.Fprintln(r.cfg.Log, "note:", note)
	}
	return todo
}

type openmlRun struct {
	cfg   *Config
	st    *records.Store
	prov  records.Provenance
	ms    map[string]methods.Method
	sum   *Summary
	first error
}

// mainSlots are a unit's slots without the SNIS proposal star (AFIN single
// shot is its own method here).
func mainSlots(m methods.Method, ladder []int) []methods.Slot {
	var out []methods.Slot
	for _, s := range m.Slots(ladder) {
		if s.Stage == "" {
			out = append(out, s)
		}
	}
	return out
}

func (r *openmlRun) baseRecord(u openmlUnit, s methods.Slot) *records.Record {
	return &records.Record{Suite: OpenMLSuite, Setting: u.s.Key, Group: u.s.Group,
		Prior: u.s.Prior, Likelihood: u.s.Likelihood, D: u.s.D, N: u.s.N, Seed: u.seed,
		Method: u.plan.Method, Variant: u.plan.Variant, BudgetKind: s.Kind, Budget: s.Budget,
		M1: records.Num(math.NaN()), M2: records.Num(math.NaN()), SW2: records.Num(math.NaN()),
		Reference: records.RefInfo{Kind: "heldout_labels"}, Provenance: r.prov}
}

// unitDone reports whether every slot of u is stored (as a failure too,
// unless the run retries failures) and whether any of them failed.
func (r *openmlRun) unitDone(u openmlUnit, m methods.Method) (done, failed bool) {
	for _, s := range mainSlots(m, u.plan.Ladder) {
		k := r.baseRecord(u, s).Key()
		switch {
		case r.st.Succeeded(k):
		case r.st.Has(k) && !r.cfg.RetryFailed:
			failed = true
		default:
			return false, false
		}
	}
	return true, failed
}

// runUnit runs one method on one dataset and appends a record per point;
// a failure leaves failed records at the slots without a success.
func (r *openmlRun) runUnit(ctx context.Context, u openmlUnit) {
	m := r.ms[u.plan.Method]
	task := u.split.Task()
	job := &methods.Job{Task: task, Seed: UnitSeed(u.s.Key, u.seed, u.plan.Method, u.plan.Variant),
		Ladder: u.plan.Ladder, Options: u.plan.Options, SkipProposal: true}
	start := time.Now()
	n := 0
	err := methods.Run(ctx, m, job, func(p methods.Point) error {
		if p.Stage != "" {
			return nil
		}
		if p.Draws == nil || p.Draws.Len() == 0 {
			return fmt.Errorf("method %s gave no draws at %+v", u.plan.Method, p.Slot)
		}
		rec, err := r.record(u, p)
		if err != nil {
			return err
		}
		if err := r.st.Append(rec); err != nil {
			return err
		}
		n++
		return nil
	})
	r.sum.Records += n
	if err != nil && ctx.Err() != nil {
		return
	}
	if err == nil {
		r.sum.Ran++
		return
	}
	r.sum.Failed++
	err = fmt.Errorf("%s seed %d %s: %w", u.s.Key, u.seed, u.plan.Method, err)
	if r.first == nil {
		r.first = err
	}
	fmt.Fprintf(r.cfg.Log, "unit failed: %v\n", err)
	for _, s := range mainSlots(m, u.plan.Ladder) {
		rec := r.baseRecord(u, s)
		if r.st.Succeeded(rec.Key()) {
			continue
		}
		rec.Seconds = records.Num(time.Since(start).Seconds())
		rec.Provenance.Time = time.Now().UTC().Format(time.RFC3339)
		rec.MarkFailed(err.Error())
		if aerr := r.st.Append(rec); aerr != nil {
			fmt.Fprintf(r.cfg.Log, "recording the failure: %v\n", aerr)
			continue
		}
		r.sum.Records++
	}
}

// record scores one point's posterior predictive on both splits.
func (r *openmlRun) record(u openmlUnit, p methods.Point) (*records.Record, error) {
	rec := r.baseRecord(u, p.Slot)
	rec.Seconds = records.Num(p.Seconds)
	test, err := predictive.Score(p.Draws, u.split.XTest, u.split.YTest)
	if err != nil {
		return nil, fmt.Errorf("test split: %w", err)
	}
	train, err := predictive.Score(p.Draws, u.split.XTrain, u.split.YTrain)
	if err != nil {
		return nil, fmt.Errorf("training split: %w", err)
	}
	diag, err := p.Diagnostics.Numbers()
	if err != nil {
		return nil, err
	}
	rec.Diagnostics = map[string]records.Num{}
	for k, v := range diag {
		rec.Diagnostics[k] = records.Num(v)
	}
	for k, v := range map[string]float64{
		"test_acc": test.Accuracy, "test_nll": test.NLL, "test_auc": test.AUC,
		"train_acc": train.Accuracy, "train_nll": train.NLL, "train_auc": train.AUC,
		"n_test": float64(len(u.split.YTest)), "d_feat": float64(u.split.DFeat()),
		"constant_train_features": float64(len(u.split.ConstantInTrain)),
	} {
		rec.Diagnostics[k] = records.Num(v)
	}
	if p.Draws.Weighted() {
		rec.Diagnostics["ess_ratio"] = records.Num(predictive.ESSRatio(p.Draws))
	}
	if rec.MethodSettings, err = p.Settings.Map(); err != nil {
		return nil, err
	}
	if a := p.Diagnostics.AFINDiagnostics; a != nil {
		// Which network made the numbers, in words the report can print.
		if rec.MethodSettings == nil {
			rec.MethodSettings = map[string]any{}
		}
		rec.MethodSettings["checkpoint"] = a.Checkpoint
		rec.MethodSettings["checkpoint_config"] = a.Config
		rec.MethodSettings["decoder"] = a.Decoder
	}
	setFlags(rec, p.Diagnostics.Flags)
	rec.Provenance.Time = time.Now().UTC().Format(time.RFC3339)
	return rec, nil
}
