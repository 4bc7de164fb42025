package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/progress"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

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
	// Decoders are the two checkpoints a suite comparing decoders runs
	// (Env's checkpoint is replaced by each in turn); others ignore it.
	Decoders DecoderCheckpoints
	// RetryFailed reruns units the directory holds as failed; without it
	// a failed unit counts as finished (it ran, and failed).
	RetryFailed bool
	Progress    io.Writer
	Log         io.Writer

	// Hooks for tests and alternative sources; nil picks the defaults
	// (the suite's settings, the simulator / datasets, the cached
	// reference, the built-in methods).
	Settings  []Setting
	BuildTask func(s Setting, seed uint64) (*factor.Task, error)
	Reference ReferenceFunc
	NewMethod MethodFactory
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

// unit is one (setting, seed, method, variant) of a suite.
type unit struct {
	setting Setting
	seed    uint64
	plan    Plan
	method  methods.Method
}

func (u *unit) key() string {
	return records.UnitKey(u.setting.Suite, u.setting.Key, u.seed, u.plan.Method, u.plan.Variant)
}

// group is the units of one task: the task and its reference are built
// once however many methods run on it.
type group struct {
	setting Setting
	seed    uint64
	units   []*unit
}

// shardKey is what --shard partitions by: the task (suite, setting,
// seed), so all methods of a task share one shard and its reference
// posterior (the dominant cost of the paper profile) is computed once.
func shardKey(s Setting, seed uint64) string {
	return fmt.Sprintf("%s|%s|%d", s.Suite, s.Key, seed)
}

// ParseShard parses "I/N" with 0 ≤ I < N.
func ParseShard(s string) (i, n int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			n, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard: want I/N with 0 ≤ I < N (e.g. 0/4), got %q", s)
	}
	return i, n, nil
}

// InShard reports whether the task with this key belongs to shard i of
// n. The partition depends only on the key, so it is the same in every
// process and whatever subset of methods or seeds a run selects.
func InShard(key string, i, n int) bool {
	if n <= 1 {
		return true
	}
	return hashString("shard", key)%uint64(n) == uint64(i)
}

// ResultsFileName is the file a run appends to: one per shard, so
// processes sharing a directory never write the same file.
func ResultsFileName(suite string, shard, shards int) string {
	if shards <= 1 {
		return fmt.Sprintf("%s.jsonl", suite)
	}
	return fmt.Sprintf("%s.shard-%03d-of-%03d.jsonl", suite, shard, shards)
}

// planGroups is the pure part of a run: the units of this shard, grouped
// by task, leaving out those done reports finished. It returns the groups
// to run and the shard's unit count.
func planGroups(settings []Setting, seeds []uint64, plans []Plan, ms map[string]methods.Method, shard, shards int, done func(*unit) bool) (groups []*group, units int) {
	for _, s := range settings {
		for _, seed := range seeds {
			if !InShard(shardKey(s, seed), shard, shards) {
				continue
			}
			g := &group{setting: s, seed: seed}
			for _, p := range plans {
				m, ok := ms[p.Method]
				if !ok {
					continue
				}
				u := &unit{setting: s, seed: seed, plan: p, method: m}
				units++
				if !done(u) {
					g.units = append(g.units, u)
				}
			}
			if len(g.units) > 0 {
				groups = append(groups, g)
			}
		}
	}
	return groups, units
}

// Run runs the suite's units of this shard that the results directory
// does not already hold in full, appending one record per point.
// A suite that runs its own way (Runner) is handed the config.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	s, err := lookupSuite(cfg.Suite)
	if err != nil {
		return nil, err
	}
	if r, ok := s.(Runner); ok {
		return r.Run(ctx, cfg)
	}
	return runUnits(ctx, cfg, s)
}

// runUnits runs a suite's units against their reference posteriors.
func runUnits(ctx context.Context, cfg Config, s Suite) (*Summary, error) {
	start := time.Now()
	r, err := newRunner(ctx, &cfg, s)
	if err != nil {
		return nil, err
	}
	defer r.st.Close()
	seeds := cfg.Seeds
	if len(seeds) == 0 {
		seeds = cfg.Profile.Seeds
	}
	groups, units := planGroups(r.settings, seeds, r.plans, r.methods, cfg.Shard, cfg.Shards, r.unitDone)
	// The whole plan beside the results, so report and check can say
	// "incomplete: X of Y units" of a directory missing records or shards.
	if err := records.WritePlan(cfg.Results, r.runPlan(seeds)); err != nil {
		return nil, err
	}
	pending := 0
	for _, g := range groups {
		pending += len(g.units)
	}
	r.sum.Units, r.sum.Skipped = units, units-pending
	if n := r.sum.PrevFailed; n > 0 {
		note := fmt.Sprintf("%d unit(s) failed in an earlier run and are not rerun (--retry-failed reruns them)", n)
		r.sum.Notes = append(r.sum.Notes, note)
		fmt.Fprintln(cfg.Log, "note:", note)
	}
	r.bar = progress.New(cfg.Progress, "bench "+cfg.Suite, pending)
	pool(ctx, max(cfg.Workers, 1), groups, r.runGroup)
	r.bar.Finish()
	r.sum.Duration = time.Since(start)
	if err := ctx.Err(); err != nil {
		return r.sum, fmt.Errorf("interrupted after %d records (rerun to resume): %w", r.sum.Records, err)
	}
	if r.firstErr != nil {
		return r.sum, fmt.Errorf("%d unit(s) failed; first: %w", r.sum.Failed, r.firstErr)
	}
	return r.sum, nil
}

// pool runs fn on every group with the given number of workers, stopping
// the feed when ctx is cancelled.
func pool(ctx context.Context, workers int, groups []*group, fn func(context.Context, *group)) {
	next := make(chan *group)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range next {
				fn(ctx, g)
			}
		}()
	}
feed:
	for _, g := range groups {
		select {
		case next <- g:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
}

// runner is the state of one Run shared by its workers.
type runner struct {
	cfg       *Config
	settings  []Setting
	plans     []Plan
	methods   map[string]methods.Method
	buildTask func(Setting, uint64) (*factor.Task, error)
	reference ReferenceFunc
	st        *records.Store
	prov      records.Provenance
	bar       *progress.Bar

	mu       sync.Mutex // guards sum, firstErr and the log
	sum      *Summary
	firstErr error
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

// newRunner resolves everything a run needs before any work starts, so a
// bad suite, method or data directory fails at once.
func newRunner(ctx context.Context, cfg *Config, s Suite) (*runner, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, settings: cfg.Settings, buildTask: cfg.BuildTask, reference: cfg.Reference}
	var err error
	if r.settings == nil {
		if r.settings, err = suiteSettings(s, cfg.Profile); err != nil {
			return nil, err
		}
	}
	if r.plans = cfg.Profile.Plans(cfg.Suite); len(r.plans) == 0 {
		return nil, fmt.Errorf("suite %q has no methods in profile %s", cfg.Suite, cfg.Profile.Name)
	}
	ext, err := execPlans(cfg.Profile, s, cfg.Methods, cfg.Env, cfg.NewMethod)
	if err != nil {
		return nil, err
	}
	r.plans = append(r.plans, ext...)
	if err := checkWanted(r.plans, cfg.Methods); err != nil {
		return nil, err
	}
	// Everything that can be refused is checked before the results store
	// is opened, so a refused run creates neither the results file nor its
	// lock: a second writer first (before anything slow), the suite's
	// raw data (Suite.Prepare), then the methods (loading a checkpoint).
	name := ResultsFileName(cfg.Suite, cfg.Shard, cfg.Shards)
	if err := records.CheckWriter(cfg.Results, name, cfg.writer()); err != nil {
		return nil, err
	}
	if r.buildTask == nil {
		if err := s.Prepare(cfg); err != nil {
			return nil, err
		}
		r.buildTask = func(st Setting, seed uint64) (*factor.Task, error) { return s.Task(cfg, st, seed) }
	}
	ms, notes, err := ResolveMethods(r.plans, cfg.Methods, cfg.Env, cfg.NewMethod)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no method of suite %s is available: %s", cfg.Suite, strings.Join(notes, "; "))
	}
	r.methods = ms
	if r.st, err = records.OpenStoreFor(cfg.Results, name, cfg.writer()); err != nil {
		return nil, err
	}
	for _, n := range notes {
		fmt.Fprintln(cfg.Log, "note:", n)
	}
	if r.reference == nil {
		r.reference = s.Reference(cfg.RefCacheDir)
	}
	r.sum = &Summary{File: r.st.Path(), Notes: notes}
	r.noteStore()
	r.prov = records.CurrentProvenance(ctx, cfg.Profile.Name, cfg.Env.Engine.String()) // which implementation ran the network
	if cfg.Shards > 1 {
		r.prov.Shard = fmt.Sprintf("%d/%d", cfg.Shard, cfg.Shards)
	}
	for _, name := range keys(ms) {
		if p, ok := ms[name].(methods.Provenancer); ok {
			r.prov.Checkpoint = p.CheckpointHash()
		}
	}
	return r, nil
}

// noteStore notes what opening the store found: records of another
// profile, and what it repaired.
func (r *runner) noteStore() {
	cfg := r.cfg
	if n := r.st.OtherProfiles(cfg.Profile.Name); n > 0 {
		note := fmt.Sprintf("%s already holds %d record(s) of another profile than %s: report and check will warn that they mix", cfg.Results, n, cfg.Profile.Name)
		r.sum.Notes = append(r.sum.Notes, note)
		fmt.Fprintln(cfg.Log, "warning:", note)
	}
	if r.st.Repaired != "" {
		r.sum.Notes = append(r.sum.Notes, "repaired "+r.st.Repaired)
		fmt.Fprintln(cfg.Log, "note: repaired", r.st.Repaired)
	}
}

// done books the outcome of count units: the one place that takes the
// lock and keeps the first error.
func (r *runner) done(count, records int, err error) {
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
	r.bar.Add(count)
}

// runGroup builds a task and its reference and runs the task's units. A
// unit that fails leaves failed records and the others still run; one
// interrupted (ctx cancelled) leaves none, so a resume redoes it.
func (r *runner) runGroup(ctx context.Context, g *group) {
	task, err := r.buildTask(g.setting, g.seed)
	if err != nil {
		r.failGroup(g, nil, nil, fmt.Errorf("building task: %w", err))
		return
	}
	ref, err := r.reference(ctx, task, r.cfg.Profile)
	if err != nil {
		if ctx.Err() == nil {
			r.failGroup(g, task, nil, fmt.Errorf("reference: %w", err))
		}
		return
	}
	for _, u := range g.units {
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		n, err := r.runUnit(ctx, u, task, ref)
		if err != nil && ctx.Err() != nil {
			// Interrupted: neither a success nor a failure to report.
			r.done(0, n, nil)
			return
		}
		if err != nil {
			r.fail(u, task, ref, time.Since(start).Seconds(), n, err)
			continue
		}
		r.done(1, n, nil)
	}
}

// failGroup fails every unit of g with the same cause (the task or its
// reference could not be built).
func (r *runner) failGroup(g *group, task *factor.Task, ref *Reference, cause error) {
	for _, u := range g.units {
		r.fail(u, task, ref, 0, 0, cause)
	}
}

// fail logs a failed unit, leaves its failed records and books it; n
// counts the records the unit stored before it failed.
func (r *runner) fail(u *unit, task *factor.Task, ref *Reference, seconds float64, n int, cause error) {
	err := fmt.Errorf("%s: %w", u.key(), cause)
	r.mu.Lock()
	fmt.Fprintf(r.cfg.Log, "unit failed: %v\n", err)
	r.mu.Unlock()
	m, rerr := r.recordFailure(u, task, ref, seconds, cause)
	if rerr != nil {
		err = errors.Join(err, rerr)
	}
	r.done(1, n+m, err)
}

// unitDone reports whether every slot of u is stored: as a success, or
// as a failure unless the run retries failures. Planning calls it once
// per unit, so it also counts the units skipped as failed.
func (r *runner) unitDone(u *unit) bool {
	failed := false
	for _, s := range u.method.Slots(u.plan.Ladder) {
		k := slotRecord(u, s).Key()
		switch {
		case r.st.Succeeded(k):
		case r.st.Has(k) && !r.cfg.RetryFailed:
			failed = true
		default:
			return false
		}
	}
	if failed {
		r.sum.PrevFailed++
	}
	return true
}

// slotRecord is the record of u at slot s with only its key fields set.
func slotRecord(u *unit, s methods.Slot) *records.Record {
	return &records.Record{Suite: u.setting.Suite, Setting: u.setting.Key, Group: u.setting.Group, Seed: u.seed,
		Method: u.plan.Method, Variant: u.plan.Variant, Stage: s.Stage, BudgetKind: s.Kind, Budget: s.Budget}
}

// recordFailure leaves a failed record for every slot of u that holds no
// success (a unit that failed after some points keeps them), so the
// directory, the report and the gate can tell a failed unit from one
// never run. One record per slot, not per unit: the slots carry the keys
// report tables and baseline entries are made of, and a rerun's success
// supersedes exactly the failed record of its key. task and ref may be
// nil when building them was what failed.
func (r *runner) recordFailure(u *unit, task *factor.Task, ref *Reference, seconds float64, cause error) (int, error) {
	n := 0
	for _, s := range u.method.Slots(u.plan.Ladder) {
		rec := slotRecord(u, s)
		if r.st.Succeeded(rec.Key()) {
			continue
		}
		rec.Prior, rec.Likelihood = u.setting.Families(u.seed)
		if task != nil {
			rec.D, rec.N = task.D, task.N()
		}
		if ref != nil {
			rec.Reference = ref.Info
		}
		rec.Seconds = records.Num(seconds)
		rec.Provenance = r.prov
		rec.Provenance.Time = time.Now().UTC().Format(time.RFC3339)
		rec.MarkFailed(cause.Error())
		if err := r.st.Append(rec); err != nil {
			return n, fmt.Errorf("recording the failure of %s: %w", u.key(), err)
		}
		n++
	}
	return n, nil
}

// UnitSeed is the method seed of a unit: a hash of (setting, seed,
// method, variant), so reruns and shards reproduce it. `afin infer --seed
// UnitSeed(...)` reruns a unit's method exactly.
func UnitSeed(settingKey string, seed uint64, method, variant string) uint64 {
	return hashString("method", settingKey, strconv.FormatUint(seed, 10), method, variant)
}

// runUnit runs one unit and appends a record per point it emits.
func (r *runner) runUnit(ctx context.Context, u *unit, task *factor.Task, ref *Reference) (int, error) {
	sw2Seed := hashString("sw2", u.setting.Key, strconv.FormatUint(u.seed, 10))
	job := &methods.Job{
		Task: task, Seed: UnitSeed(u.setting.Key, u.seed, u.plan.Method, u.plan.Variant),
		Ladder: u.plan.Ladder, Options: u.plan.Options,
		Score: func(d *posterior.Draws) float64 { return posterior.SW2(d, ref.Draws, sw2Seed) },
	}
	slots := map[methods.Slot]bool{}
	for _, s := range u.method.Slots(u.plan.Ladder) {
		slots[s] = true
	}
	n := 0
	err := methods.Run(ctx, u.method, job, func(p methods.Point) error {
		if !slots[p.Slot] {
			return fmt.Errorf("method %s emitted unplanned point %+v", u.plan.Method, p.Slot)
		}
		if p.Draws == nil || p.Draws.Len() == 0 {
			return fmt.Errorf("method %s emitted no draws at %+v", u.plan.Method, p.Slot)
		}
		rec, err := r.record(u, task, ref, p, sw2Seed)
		if err != nil || rec == nil {
			return err
		}
		if err := r.st.Append(rec); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

// record scores one point against the reference; nil when the store
// already holds it.
func (r *runner) record(u *unit, task *factor.Task, ref *Reference, p methods.Point, sw2Seed uint64) (*records.Record, error) {
	prior, lik := u.setting.Families(u.seed)
	rec := &records.Record{
		Suite: u.setting.Suite, Setting: u.setting.Key, Group: u.setting.Group,
		Prior: prior, Likelihood: lik, D: task.D, N: task.N(), Seed: u.seed,
		Method: u.plan.Method, Variant: u.plan.Variant, Stage: p.Stage,
		BudgetKind: p.Kind, Budget: p.Budget,
		Seconds:    records.Num(p.Seconds),
		Reference:  ref.Info,
		Provenance: r.prov,
	}
	if r.st.Succeeded(rec.Key()) {
		return nil, nil
	}
	settings, err := p.Settings.Map()
	if err != nil {
		return nil, err
	}
	rec.MethodSettings = settings
	m1, m2 := momentErrors(p.Draws, ref)
	rec.M1, rec.M2 = records.Metric(m1), records.Metric(m2)
	rec.Marginals = marginalErrors(p.Draws, ref)
	rec.SW2 = records.Metric(posterior.SW2(p.Draws, ref.Draws, sw2Seed))
	diag, err := p.Diagnostics.Numbers()
	if err != nil {
		return nil, err
	}
	if p.Draws.Weighted() {
		// Table 9's energy gap: expected −log p̃ under the SNIS
		// approximation minus that under the reference.
		diag["energy_gap"] = posterior.EnergyGap(task, p.Draws, ref.Draws)
	}
	if len(diag) > 0 {
		rec.Diagnostics = map[string]records.Num{}
		for k, v := range diag {
			rec.Diagnostics[k] = records.Num(v)
		}
	}
	setFlags(rec, p.Diagnostics.Flags)
	rec.Provenance.Time = time.Now().UTC().Format(time.RFC3339)
	return rec, nil
}

// setFlags copies a point's flags into its record: every raised flag by
// name and in words, and the two fields older records carry.
func setFlags(rec *records.Record, f *methods.Flags) {
	if f == nil {
		return
	}
	rec.Flags, rec.Warnings = f.Raised(), f.Warnings
	rec.OutsideSupport = f.OutsideSupport
	if f.Converged != nil && !*f.Converged {
		rec.NotConverged = f.ConvergenceReason
		if rec.NotConverged == "" {
			rec.NotConverged = "not converged"
		}
	}
}

// suiteSettings returns the suite's settings under p, sorted by key for
// a stable order.
func suiteSettings(s Suite, p *Profile) ([]Setting, error) {
	out, err := s.Settings(p)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
