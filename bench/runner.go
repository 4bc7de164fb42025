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

	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/progress"
	"github.com/afin-bench/afin/posterior"
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

	Env         MethodEnv
	DataDir     string // UCI raw files (uci suite)
	RefCacheDir string // reference cache; "" is the default cache directory
	Workers     int    // concurrent tasks; 0 or 1 runs one at a time (clean timings)
	Progress    io.Writer
	Log         io.Writer

	// Hooks for tests and alternative sources; nil picks the defaults
	// (the simulator / datasets, the cached reference, the built-in
	// method adapters).
	BuildTask func(s Setting, seed uint64) (*factor.Task, error)
	Reference ReferenceFunc
	Factories map[string]methodFactory
}

// Summary reports what a run did.
type Summary struct {
	File     string // the results file appended to
	Units    int    // units of this shard
	Skipped  int    // already complete
	Ran      int    // units run now
	Failed   int    // units that returned an error (retried on the next run)
	Records  int    // records appended
	Notes    []string
	Duration time.Duration
}

// unit is one (setting, seed, method, variant) of a suite.
type unit struct {
	setting Setting
	seed    uint64
	plan    Plan
	method  Method
}

func (u *unit) key() string {
	return unitKey(u.setting.Suite, u.setting.Key, u.seed, u.plan.Method, u.plan.Variant)
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

// Run runs the suite's units of this shard that the results directory
// does not already hold in full, appending one record per point.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	start := time.Now()
	if cfg.Profile == nil {
		return nil, errors.New("bench: no profile")
	}
	if cfg.Shards < 1 {
		cfg.Shards = 1
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	settings, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	plans := cfg.Profile.Plans(cfg.Suite)
	if len(plans) == 0 {
		return nil, fmt.Errorf("suite %q has no methods in profile %s", cfg.Suite, cfg.Profile.Name)
	}
	methods, notes, err := ResolveMethods(plans, cfg.Methods, cfg.Env, cfg.Factories)
	if err != nil {
		return nil, err
	}
	if len(methods) == 0 {
		return nil, fmt.Errorf("no method of suite %s is available: %s", cfg.Suite, strings.Join(notes, "; "))
	}
	for _, n := range notes {
		fmt.Fprintln(cfg.Log, "note:", n)
	}
	seeds := cfg.Seeds
	if len(seeds) == 0 {
		seeds = cfg.Profile.Seeds
	}
	buildTask := cfg.BuildTask
	if buildTask == nil {
		if cfg.Suite == "uci" {
			// Fail before any work when the raw files are missing.
			dir, err := datasets.ResolveDir(cfg.DataDir)
			if err != nil {
				return nil, err
			}
			cfg.DataDir = dir
		}
		buildTask = cfg.defaultTask
	}
	refFn := cfg.Reference
	if refFn == nil {
		refFn = CachedReference(cfg.RefCacheDir)
	}

	st, err := OpenStore(cfg.Results, ResultsFileName(cfg.Suite, cfg.Shard, cfg.Shards))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	sum := &Summary{File: st.Path(), Notes: notes}

	// Units grouped by task, so each task and its reference are built
	// once however many methods run on it.
	type group struct {
		setting Setting
		seed    uint64
		units   []*unit
	}
	var groups []*group
	for _, s := range settings {
		for _, seed := range seeds {
			g := &group{setting: s, seed: seed}
			for _, p := range plans {
				m, ok := methods[p.Method]
				if !ok {
					continue
				}
				u := &unit{setting: s, seed: seed, plan: p, method: m}
				if !InShard(shardKey(s, seed), cfg.Shard, cfg.Shards) {
					continue
				}
				sum.Units++
				if unitDone(st, u) {
					sum.Skipped++
					continue
				}
				g.units = append(g.units, u)
			}
			if len(g.units) > 0 {
				groups = append(groups, g)
			}
		}
	}
	pending := sum.Units - sum.Skipped
	bar := progress.New(cfg.Progress, "bench "+cfg.Suite, pending)
	prov := CurrentProvenance(ctx, cfg.Profile.Name)
	if cfg.Shards > 1 {
		prov.Shard = fmt.Sprintf("%d/%d", cfg.Shard, cfg.Shards)
	}
	if cp, ok := methods["afin"].(interface{ CheckpointHash() string }); ok {
		prov.Checkpoint = cp.CheckpointHash()
	} else if cp, ok := methods["afin-snis"].(interface{ CheckpointHash() string }); ok {
		prov.Checkpoint = cp.CheckpointHash()
	}

	var (
		mu       sync.Mutex
		firstErr error
	)
	note := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(cfg.Log, format+"\n", args...)
	}
	runGroup := func(g *group) {
		task, err := buildTask(g.setting, g.seed)
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = fmt.Errorf("%s seed %d: building task: %w", g.setting.Key, g.seed, err)
			}
			sum.Failed += len(g.units)
			mu.Unlock()
			bar.Add(len(g.units))
			return
		}
		ref, err := refFn(ctx, task, cfg.Profile)
		if err != nil {
			mu.Lock()
			if firstErr == nil && ctx.Err() == nil {
				firstErr = fmt.Errorf("%s seed %d: reference: %w", g.setting.Key, g.seed, err)
			}
			sum.Failed += len(g.units)
			mu.Unlock()
			bar.Add(len(g.units))
			return
		}
		for _, u := range g.units {
			if ctx.Err() != nil {
				return
			}
			n, err := runUnit(ctx, st, u, task, ref, prov, cfg.Env.Stderr)
			mu.Lock()
			sum.Records += n
			if err != nil {
				sum.Failed++
				if firstErr == nil && ctx.Err() == nil {
					firstErr = fmt.Errorf("%s: %w", u.key(), err)
				}
			} else {
				sum.Ran++
			}
			mu.Unlock()
			if err != nil && ctx.Err() == nil {
				note("unit %s failed: %v", u.key(), err)
			}
			bar.Add(1)
		}
	}

	workers := max(cfg.Workers, 1)
	next := make(chan *group)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range next {
				runGroup(g)
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
	bar.Finish()
	sum.Duration = time.Since(start)
	if err := ctx.Err(); err != nil {
		return sum, fmt.Errorf("interrupted after %d records (rerun to resume): %w", sum.Records, err)
	}
	if firstErr != nil {
		return sum, fmt.Errorf("%d unit(s) failed; first: %w", sum.Failed, firstErr)
	}
	return sum, nil
}

// unitDone reports whether every slot of u is stored.
func unitDone(st *Store, u *unit) bool {
	for _, s := range u.method.Slots(u.plan) {
		r := Record{Suite: u.setting.Suite, Setting: u.setting.Key, Seed: u.seed,
			Method: u.plan.Method, Variant: u.plan.Variant, Stage: s.Stage, BudgetKind: s.Kind, Budget: s.Budget}
		if !st.Has(r.Key()) {
			return false
		}
	}
	return true
}

// runUnit runs one unit and appends a record per point it emits.
func runUnit(ctx context.Context, st *Store, u *unit, task *factor.Task, ref *Reference, prov Provenance, stderr io.Writer) (int, error) {
	taskKey := u.setting.Key
	sw2Seed := hashString("sw2", taskKey, strconv.FormatUint(u.seed, 10))
	job := &Job{
		Task:    task,
		Setting: u.setting,
		Seed:    hashString("method", taskKey, strconv.FormatUint(u.seed, 10), u.plan.Method, u.plan.Variant),
		Plan:    u.plan,
		Score: func(d *posterior.Draws) float64 {
			return posterior.SW2(d, ref.Draws, sw2Seed)
		},
		Stderr: stderr,
	}
	prior, lik := u.setting.Families(u.seed)
	slots := map[Slot]bool{}
	for _, s := range u.method.Slots(u.plan) {
		slots[s] = true
	}
	n := 0
	err := u.method.Run(ctx, job, func(p Point) error {
		if !slots[p.Slot] {
			return fmt.Errorf("method %s emitted unplanned point %+v", u.plan.Method, p.Slot)
		}
		if p.Draws == nil || p.Draws.Len() == 0 {
			return fmt.Errorf("method %s emitted no draws at %+v", u.plan.Method, p.Slot)
		}
		r := &Record{
			Suite: u.setting.Suite, Setting: u.setting.Key, Group: u.setting.Group,
			Prior: prior, Likelihood: lik, D: task.D, N: task.N(), Seed: u.seed,
			Method: u.plan.Method, Variant: u.plan.Variant, Stage: p.Stage,
			BudgetKind: p.Kind, Budget: p.Budget,
			SW2:            Num(posterior.SW2(p.Draws, ref.Draws, sw2Seed)),
			Seconds:        Num(p.Seconds),
			MethodSettings: p.Settings,
			Reference:      ref.Info,
			Provenance:     prov,
		}
		if st.Has(r.Key()) {
			return nil
		}
		m1, m2 := momentErrors(p.Draws, ref)
		r.M1, r.M2 = Num(m1), Num(m2)
		if len(p.Diagnostics) > 0 || p.Draws.Weighted() {
			r.Diagnostics = map[string]Num{}
			for k, v := range p.Diagnostics {
				r.Diagnostics[k] = Num(v)
			}
		}
		if p.Draws.Weighted() {
			// Table 9's energy gap: expected −log p̃ under the SNIS
			// approximation minus that under the reference.
			r.Diagnostics["energy_gap"] = Num(posterior.EnergyGap(task, p.Draws, ref.Draws))
		}
		r.Provenance.Time = time.Now().UTC().Format(time.RFC3339)
		if err := st.Append(r); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

// settings returns the suite's settings, sorted by key for a stable order.
func (cfg *Config) settings() ([]Setting, error) {
	var (
		out []Setting
		err error
	)
	if cfg.Suite == "uci" {
		out = UCISettings()
	} else {
		out, err = Settings(cfg.Suite)
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
