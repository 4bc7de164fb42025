package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
)

// This file is the one run session every suite runs through: defaults,
// settings, seeds and plans, method resolution, the results store and
// its lock, provenance, the progress bar, the worker pool and the
// interrupted / first-error summary. A suite only feeds it (Suite) and
// scores its points (scoring).

// Config is one `afin bench` invocation.
type Config struct {
	Suite   string
	Profile *Profile
	Results string // results directory

	// Shard I of N (0 ≤ I < N); N ≤ 1 means unsharded.
	Shard, Shards int

	Seeds   []uint64 // nil: the profile's seeds
	Methods []string // nil: every method of the suite available here

	Env         *methods.Env // nil: the shipped checkpoint
	DataDir     string       // raw data files of a suite that reads them
	DataDirEnv  string       // $AFIN_DATA_DIR, used by the uci suite when DataDir is ""
	RefCacheDir string       // reference cache; "" is the default cache directory
	Workers     int          // concurrent tasks; 0 or 1 runs one at a time (clean timings)
	// SuiteFlags are the values of the suite's own flags (Suite.Flags),
	// by flag name; a flag the suite does not declare is refused.
	SuiteFlags map[string]string
	// RetryFailed reruns units the directory holds as failed; without it
	// a failed unit counts as finished (it ran, and failed).
	RetryFailed bool
	// AllowMixed lets a run add records to a directory whose records of
	// the suite carry another commit (refused by default, as `afin check`
	// refuses such a directory: records.CheckResume).
	AllowMixed bool
	Progress   io.Writer
	Log        io.Writer

	// Hooks for tests and alternative sources; nil picks the defaults
	// (the suite's settings, the simulator / datasets, the cached
	// reference, the built-in methods).
	Settings  []Setting
	BuildTask func(s Setting, seed uint64) (*factor.Task, error)
	Reference ReferenceFunc
	NewMethod MethodFactory
	// CostModel estimates the units' costs for the shard partition and
	// the progress ETA (nil: DefaultCostModel). Every shard of a plan must
	// use the same one.
	CostModel *CostModel
	// now is the progress lines' clock (nil: time.Now).
	now func() time.Time
	// cpuClock reads the process's CPU seconds (nil: cputime.Process);
	// tests substitute a clock they drive.
	cpuClock func() (float64, error)
}

// Summary reports what a run did.
type Summary struct {
	File    string // the results file appended to
	Units   int    // units of this shard
	Skipped int    // already complete (PrevFailed of them as failures)
	Ran     int    // units run now
	Failed  int    // units that failed now (a failed record per point)
	// PrevFailed counts units skipped because the directory holds them
	// as failed; --retry-failed reruns them.
	PrevFailed int
	Records    int // records appended, failed ones included
	Notes      []string
	Duration   time.Duration
}

// session is the state of one Run shared by its workers.
type session struct {
	cfg       *Config
	suite     Suite
	scoring   scoring
	settings  []Setting
	seeds     []uint64
	plans     []planned
	buildTask func(Setting, uint64) (*factor.Task, error)
	reference ReferenceFunc
	st        *records.Store
	prov      records.Provenance
	progress  *tracker
	cpu       *cpuMeter
	model     *CostModel
	shards    *shardMap // the partition of the suite's units (shard.go)

	mu       sync.Mutex // guards sum, firstErr and the log
	sum      *Summary
	firstErr error
}

// Run runs the suite's units of this shard that the results directory
// does not already hold in full, appending one record per point. The
// suite is looked up once, here.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	s, err := lookupSuite(cfg.Suite)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	r, err := open(ctx, &cfg, s)
	if err != nil {
		return nil, err
	}
	defer r.st.Close()
	groups, units := planGroups(r.settings, r.seeds, r.plans, s.Families, r.shards, cfg.Shard, r.unitDone)
	// The whole plan beside the results, so report and check can say
	// "incomplete: X of Y units" of a directory missing records or shards.
	if err := records.WritePlan(cfg.Results, r.runPlan()); err != nil {
		return nil, err
	}
	pending := 0
	for _, g := range groups {
		pending += len(g.units)
	}
	r.sum.Units, r.sum.Skipped = units, units-pending
	if n := r.sum.PrevFailed; n > 0 {
		r.note("note", fmt.Sprintf("%d unit(s) failed in an earlier run and are not rerun (--retry-failed reruns them)", n))
	}
	r.progress = newTracker(cfg.Progress, "bench "+cfg.Suite, pending, r.estimate(groups), cfg.now, true)
	pool(ctx, max(cfg.Workers, 1), groups, r.runGroup)
	r.progress.finish()
	r.sum.Duration = time.Since(start)
	if err := ctx.Err(); err != nil {
		return r.sum, fmt.Errorf("interrupted after %d records (rerun to resume): %w", r.sum.Records, err)
	}
	if r.firstErr != nil {
		return r.sum, fmt.Errorf("%d unit(s) failed; first: %w", r.sum.Failed, r.firstErr)
	}
	return r.sum, nil
}

// setDefaults fills what a Config may leave zero; a missing profile is an
// error.
func (cfg *Config) setDefaults() error {
	if cfg.Profile == nil {
		return errors.New("bench: no profile")
	}
	cfg.Shards = max(cfg.Shards, 1)
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Env == nil {
		cfg.Env = &methods.Env{}
	}
	return nil
}

// writer is who this run is to the results directory's lock: the suite,
// profile and shard plan, so the shards of one plan share the directory
// and any other writer is refused.
func (cfg *Config) writer() records.Writer {
	return records.Writer{Suite: cfg.Suite, Profile: cfg.Profile.Name, Shard: cfg.Shard, Shards: cfg.Shards}
}

// open resolves everything a run needs before any work starts, so a bad
// suite flag, method, data directory or checkpoint fails at once, and
// opens the results store.
func open(ctx context.Context, cfg *Config, s Suite) (*session, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	cfg.Suite = s.Info().Name
	if err := checkSuiteFlags(s, cfg.SuiteFlags); err != nil {
		return nil, err
	}
	r := &session{cfg: cfg, suite: s, scoring: s.scoring(), settings: cfg.Settings, buildTask: cfg.BuildTask, reference: cfg.Reference}
	plans, notes, err := r.plan()
	if err != nil {
		return nil, err
	}
	if err := r.partition(); err != nil {
		return nil, err
	}
	// Everything that can be refused is checked before the results store
	// is opened, so a refused run creates neither the results file nor its
	// lock: a second writer first (before anything slow), the suite's
	// raw data and checkpoints (Suite.Prepare), then the methods (loading
	// a checkpoint).
	name := ResultsFileName(cfg.Suite, cfg.Shard, cfg.Shards)
	if err := records.CheckWriter(cfg.Results, name, cfg.writer()); err != nil {
		return nil, err
	}
	if err := s.Prepare(cfg, r.settings, r.seeds); err != nil {
		return nil, err
	}
	if r.buildTask == nil {
		r.buildTask = func(st Setting, seed uint64) (*factor.Task, error) { return s.Task(cfg, st, seed) }
	}
	more, err := r.resolve(plans)
	if err != nil {
		return nil, err
	}
	notes = append(notes, more...)
	if r.reference == nil {
		r.reference = s.Reference(cfg.RefCacheDir)
	}
	r.prov = records.CurrentProvenance(ctx, cfg.Profile.Name, cfg.Env.Engine.String()) // which implementation ran the network
	if cfg.Shards > 1 {
		r.prov.Shard = fmt.Sprintf("%d/%d", cfg.Shard, cfg.Shards)
	}
	if r.st, err = records.OpenStoreFor(cfg.Results, name, cfg.writer(), r.admit); err != nil {
		return nil, err
	}
	r.sum = &Summary{File: r.st.Path()}
	r.cpu = newCPUMeter(cfg.cpuClock)
	for _, n := range notes {
		r.note("note", n)
	}
	r.noteStore()
	return r, nil
}

// partition sets the run's cost model and its shard partition: the
// suite's default plans (not the --methods chosen, so every shard of a plan
// computes the same partition) over its tasks.
func (r *session) partition() error {
	cfg := r.cfg
	r.model = cfg.CostModel
	if r.model == nil {
		var err error
		if r.model, err = DefaultCostModel(); err != nil {
			return err
		}
	}
	var plans []Plan
	for _, p := range cfg.Profile.plansOf(r.suite) {
		if !p.OptIn {
			plans = append(plans, p)
		}
	}
	sm, err := partition(costTasks(r.suite, cfg.Profile, r.model, r.settings, r.seeds, plans), cfg.Shards)
	if err != nil {
		return fmt.Errorf("--shard %d/%d: %w", cfg.Shard, cfg.Shards, err)
	}
	r.shards = sm
	return nil
}

// admit refuses to resume a directory whose records of the suite carry
// another commit, unless the run allows the mix.
func (r *session) admit(l *records.Loaded) error {
	if r.cfg.AllowMixed {
		return nil
	}
	return records.CheckResume(l, r.cfg.Suite, r.prov)
}

// plan fills the run's settings and seeds and returns its plans: the
// suite's under the profile and the external methods --methods adds.
func (r *session) plan() ([]Plan, []string, error) {
	cfg, s := r.cfg, r.suite
	var err error
	if r.settings == nil {
		if r.settings, err = s.Settings(cfg.Profile); err != nil {
			return nil, nil, err
		}
		sort.SliceStable(r.settings, func(i, j int) bool { return r.settings[i].Key < r.settings[j].Key })
	}
	var notes []string
	seeds, note := s.Seeds(cfg.Profile, cfg.Seeds)
	if r.seeds = seeds; note != "" {
		notes = append(notes, note)
	}
	plans := cfg.Profile.plansOf(s)
	if len(plans) == 0 {
		return nil, nil, fmt.Errorf("suite %q has no methods in profile %s", cfg.Suite, cfg.Profile.Name)
	}
	ext, err := execPlans(cfg.Profile, s, cfg.Methods, cfg.Env, cfg.NewMethod)
	if err != nil {
		return nil, nil, err
	}
	plans = append(plans, ext...)
	if err := checkWanted(plans, cfg.Methods); err != nil {
		return nil, nil, err
	}
	return plans, notes, nil
}

// resolve builds the plans' methods, once per method environment: the
// run's, or a variant's own checkpoint (Suite.variantEnvs). Each plan
// keeps the hash of the checkpoint its environment's network reads, for
// its records' provenance.
func (r *session) resolve(plans []Plan) ([]string, error) {
	cfg := r.cfg
	envs := r.suite.variantEnvs(cfg)
	envOf := func(p Plan) *methods.Env {
		if e, ok := envs[p.Variant]; ok {
			return e
		}
		return cfg.Env
	}
	var order []*methods.Env
	byEnv := map[*methods.Env][]Plan{}
	for _, p := range plans {
		e := envOf(p)
		if _, ok := byEnv[e]; !ok {
			order = append(order, e)
		}
		byEnv[e] = append(byEnv[e], p)
	}
	var notes []string
	for _, e := range order {
		ps := byEnv[e]
		want := wantedOf(ps, cfg.Methods)
		if len(cfg.Methods) > 0 && len(want) == 0 {
			continue
		}
		ms, n, err := ResolveMethods(ps, want, e, cfg.NewMethod)
		if err != nil {
			return nil, err
		}
		notes = append(notes, n...)
		ck := checkpointHash(ms)
		for _, p := range ps {
			if m := ms[p.Method]; m != nil {
				r.plans = append(r.plans, planned{Plan: p, method: m, checkpoint: ck})
			}
		}
	}
	if len(r.plans) == 0 {
		return nil, fmt.Errorf("no method of suite %s is available: %s", cfg.Suite, strings.Join(notes, "; "))
	}
	return notes, nil
}

// wantedOf is the part of want that plans run.
func wantedOf(plans []Plan, want []string) []string {
	var out []string
	for _, name := range want {
		for _, p := range plans {
			if p.Method == name {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// checkpointHash is the hash of the checkpoint the network methods of ms
// read ("" when none does).
func checkpointHash(ms map[string]methods.Method) string {
	h := ""
	for _, name := range keys(ms) {
		if p, ok := ms[name].(methods.Provenancer); ok {
			h = p.CheckpointHash()
		}
	}
	return h
}

// note tells the user (Log) and keeps the line in the summary.
func (r *session) note(kind, line string) {
	r.sum.Notes = append(r.sum.Notes, line)
	fmt.Fprintf(r.cfg.Log, "%s: %s\n", kind, line)
}

// noteStore notes what opening the store found: records of another
// profile, and what it repaired.
func (r *session) noteStore() {
	cfg := r.cfg
	if n := r.st.OtherProfiles(cfg.Profile.Name); n > 0 {
		r.note("warning", fmt.Sprintf("%s already holds %d record(s) of another profile than %s: report and check will warn that they mix", cfg.Results, n, cfg.Profile.Name))
	}
	if r.st.Repaired != "" {
		r.note("note", "repaired "+r.st.Repaired)
	}
}

// done books the outcome of count units: the one place that takes the
// lock and keeps the first error.
func (r *session) done(count, records int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.Records += records
	if err == nil {
		r.sum.Ran += count
	} else {
		r.sum.Failed += count
		if r.firstErr == nil {
			r.firstErr = err
		}
	}
}

// estimate is the estimated CPU seconds of running groups: their units'
// and their targets'.
func (r *session) estimate(groups []*group) float64 {
	c := 0.0
	for _, g := range groups {
		c += r.targetEstimate(g)
		for _, u := range g.units {
			c += r.unitEstimate(u)
		}
	}
	return c
}

func (r *session) unitEstimate(u *unit) float64 {
	c, _ := r.model.UnitSeconds(r.cfg.Suite, u.plan, u.setting.D, u.setting.N)
	return c
}

func (r *session) targetEstimate(g *group) float64 {
	return r.model.TargetSeconds(r.cfg.Suite, targetKind(r.suite, g.setting), r.cfg.Profile, g.setting.D, g.setting.N)
}
