package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
)

// unit is one (setting, seed, method, variant) of a suite: the session's
// unit of work, whatever the suite.
type unit struct {
	setting Setting // families resolved for seed (Suite.Families)
	seed    uint64
	plan    Plan
	method  methods.Method
	// checkpoint is the hash of the checkpoint the unit's plan runs on
	// ("" for a run without a network), for its records' provenance.
	checkpoint string
}

func (u *unit) key() string {
	return records.UnitKey(u.setting.Suite, u.setting.Key, u.seed, u.plan.Method, u.plan.Variant)
}

// jobSeed is the unit's method seed (UnitSeed).
func (u *unit) jobSeed() uint64 {
	return UnitSeed(u.setting.Key, u.seed, u.plan.Method, u.plan.Variant)
}

// group is the units of one task: the task and what it is scored against
// are built once however many methods run on it.
type group struct {
	setting Setting
	seed    uint64
	units   []*unit
}

// shardKey names a task (suite, setting, seed) in the shard partition
// (shard.go).
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

// ResultsFileName is the file a run appends to: one per shard, so
// processes sharing a directory never write the same file.
func ResultsFileName(suite string, shard, shards int) string {
	if shards <= 1 {
		return fmt.Sprintf("%s.jsonl", suite)
	}
	return fmt.Sprintf("%s.shard-%03d-of-%03d.jsonl", suite, shard, shards)
}

// UnitSeed is the method seed of a unit: a hash of (setting, seed,
// method, variant), so reruns and shards reproduce it. `afin infer --seed
// UnitSeed(...)` reruns a unit's method exactly.
func UnitSeed(settingKey string, seed uint64, method, variant string) uint64 {
	return hashString("method", settingKey, strconv.FormatUint(seed, 10), method, variant)
}

// planned is a plan of the run with what resolving it gave: its method
// (nil when the run leaves it out) and its checkpoint's hash.
type planned struct {
	Plan
	method     methods.Method
	checkpoint string
}

// planGroups is the pure part of a run: the units of this shard (all of
// them when sm is nil), grouped by task, leaving out those done reports
// finished. It returns the groups to run and the shard's unit count. A
// plan with Tasks > 0 runs on the first Tasks seeds only; families
// resolves a setting's families under a seed.
func planGroups(settings []Setting, seeds []uint64, plans []planned, families func(Setting, uint64) (string, string), sm *shardMap, shard int, done func(*unit) bool) (groups []*group, units int) {
	for _, s := range settings {
		for i, seed := range seeds {
			key := shardKey(s, seed)
			rs := s
			rs.Prior, rs.Likelihood = families(s, seed)
			g := &group{setting: rs, seed: seed}
			for _, p := range plans {
				if p.method == nil || (p.Tasks > 0 && i >= p.Tasks) || (sm != nil && sm.shardOf(key, p.Plan) != shard) {
					continue
				}
				u := &unit{setting: rs, seed: seed, plan: p.Plan, method: p.method, checkpoint: p.checkpoint}
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

// slots are the points of u that carry records: all of its method's, or
// without the SNIS proposal stars when the suite skips them.
func (r *session) slots(u *unit) []methods.Slot {
	all := u.method.Slots(u.plan.Ladder)
	if !r.scoring.skipsProposals() {
		return all
	}
	var out []methods.Slot
	for _, s := range all {
		if s.Stage == "" {
			out = append(out, s)
		}
	}
	return out
}

// unitDone reports whether every slot of u is stored: as a success, or
// as a failure unless the run retries failures. Planning calls it once
// per unit, so it also counts the units skipped as failed.
func (r *session) unitDone(u *unit) bool {
	failed := false
	for _, s := range r.slots(u) {
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

// slotRecord is the record of u at slot s with only its key fields and
// the setting's set.
func slotRecord(u *unit, s methods.Slot) *records.Record {
	return &records.Record{Suite: u.setting.Suite, Setting: u.setting.Key, Group: u.setting.Group,
		Prior: u.setting.Prior, Likelihood: u.setting.Likelihood, Seed: u.seed,
		Method: u.plan.Method, Variant: u.plan.Variant, Stage: s.Stage, BudgetKind: s.Kind, Budget: s.Budget}
}

// runGroup builds a task and its target and runs the task's units. A
// unit that fails leaves failed records and the others still run; one
// interrupted (ctx cancelled) leaves none, so a resume redoes it.
func (r *session) runGroup(ctx context.Context, g *group) {
	span := r.cpu.begin()
	est := r.targetEstimate(g)
	tp := r.progress.begin(est, span)
	task, tg, err := r.scoring.target(ctx, r, g.setting, g.seed)
	tcpu, _ := span.end()
	r.progress.end(tp, 0, 0)
	if err != nil {
		if ctx.Err() == nil {
			for _, u := range g.units {
				up := r.progress.begin(r.unitEstimate(u), nil)
				r.fail(u, task, nil, 0, nil, tcpu, 0, err)
				r.progress.end(up, 1, 0)
			}
		}
		return
	}
	r.progress.credit(est)
	for _, u := range g.units {
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		run := &unitRun{unit: u, task: task, tg: tg, cpu: r.cpu.begin(), targetCPU: tcpu}
		up := r.progress.begin(r.unitEstimate(u), run.cpu)
		n, err := r.runUnit(ctx, run)
		cpu, _ := run.cpu.end()
		switch {
		case err != nil && ctx.Err() != nil:
			// Interrupted: neither a success nor a failure to report.
			r.done(0, n, nil)
			r.progress.end(up, 0, cpu)
			return
		case err != nil:
			r.fail(u, task, tg, time.Since(start).Seconds(), run.cpu, tcpu, n, err)
		default:
			r.done(1, n, nil)
		}
		r.progress.end(up, 1, cpu)
	}
}

// unitRun is one unit being run: its task and target, and the CPU meter
// of its span.
type unitRun struct {
	unit      *unit
	task      *factor.Task
	tg        target
	cpu       *cpuSpan
	targetCPU float64 // CPU seconds of building the task and its target
}

// runUnit runs one unit and appends a record per point it emits.
func (r *session) runUnit(ctx context.Context, run *unitRun) (int, error) {
	u, task, tg := run.unit, run.task, run.tg
	job := &methods.Job{Task: task, Seed: u.jobSeed(), Ladder: u.plan.Ladder, Options: u.plan.Options,
		SkipProposal: r.scoring.skipsProposals()}
	tg.job(job, u)
	slots := map[methods.Slot]bool{}
	for _, s := range r.slots(u) {
		slots[s] = true
	}
	n := 0
	err := methods.Run(ctx, u.method, job, func(p methods.Point) error {
		if p.Stage != "" && r.scoring.skipsProposals() {
			return nil
		}
		if !slots[p.Slot] {
			return fmt.Errorf("method %s emitted unplanned point %+v", u.plan.Method, p.Slot)
		}
		if p.Draws == nil || p.Draws.Len() == 0 {
			return fmt.Errorf("method %s emitted no draws at %+v", u.plan.Method, p.Slot)
		}
		rec, err := r.record(run, p)
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

// record scores one point against the task's target; nil when the store
// already holds it.
func (r *session) record(run *unitRun, p methods.Point) (*records.Record, error) {
	u, task, tg := run.unit, run.task, run.tg
	rec := slotRecord(u, p.Slot)
	if r.st.Succeeded(rec.Key()) {
		return nil, nil
	}
	rec.D, rec.N = task.D, task.N()
	rec.Seconds = records.Num(p.Seconds)
	rec.Reference = tg.ref()
	rec.Provenance = r.provenance(u)
	settings, err := p.Settings.Map()
	if err != nil {
		return nil, err
	}
	rec.MethodSettings = settings
	if err := tg.score(rec, task, u, p); err != nil {
		return nil, err
	}
	setCPU(rec, run.cpu, run.targetCPU)
	rec.Provenance.Time = time.Now().UTC().Format(time.RFC3339)
	return rec, nil
}

// setCPU puts the unit's CPU time so far (its scoring of this point
// included) and its task's on rec.
func setCPU(rec *records.Record, span *cpuSpan, targetCPU float64) {
	if span == nil {
		return
	}
	c, shared := span.seconds()
	rec.CPUSeconds, rec.CPUShared, rec.TargetCPUSeconds = records.Num(c), shared, records.Num(targetCPU)
}

// provenance is the run's provenance with the checkpoint u's plan runs on.
func (r *session) provenance(u *unit) records.Provenance {
	p := r.prov
	p.Checkpoint = u.checkpoint
	return p
}

// fail logs a failed unit, leaves its failed records and books it; n
// counts the records the unit stored before it failed. task and tg may
// be nil when building them was what failed.
func (r *session) fail(u *unit, task *factor.Task, tg target, seconds float64, span *cpuSpan, targetCPU float64, n int, cause error) {
	err := fmt.Errorf("%s: %w", u.key(), cause)
	r.mu.Lock()
	fmt.Fprintf(r.cfg.Log, "unit failed: %v\n", err)
	r.mu.Unlock()
	m, rerr := r.recordFailure(u, task, tg, seconds, span, targetCPU, cause)
	if rerr != nil {
		err = errors.Join(err, rerr)
	}
	r.done(1, n+m, err)
}

// recordFailure leaves a failed record for every slot of u that holds no
// success (a unit that failed after some points keeps them), so the
// directory, the report and the gate can tell a failed unit from one
// never run. One record per slot, not per unit: the slots carry the keys
// report tables and baseline entries are made of, and a rerun's success
// supersedes exactly the failed record of its key.
func (r *session) recordFailure(u *unit, task *factor.Task, tg target, seconds float64, span *cpuSpan, targetCPU float64, cause error) (int, error) {
	n := 0
	for _, s := range r.slots(u) {
		rec := slotRecord(u, s)
		if r.st.Succeeded(rec.Key()) {
			continue
		}
		if task != nil {
			rec.D, rec.N = task.D, task.N()
		}
		if tg != nil {
			rec.Reference = tg.ref()
		}
		rec.Seconds = records.Num(seconds)
		setCPU(rec, span, targetCPU)
		rec.Provenance = r.provenance(u)
		rec.Provenance.Time = time.Now().UTC().Format(time.RFC3339)
		rec.MarkFailed(cause.Error())
		if err := r.st.Append(rec); err != nil {
			return n, fmt.Errorf("recording the failure of %s: %w", u.key(), err)
		}
		n++
	}
	return n, nil
}
