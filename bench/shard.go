package bench

import (
	"errors"
	"fmt"
	"sort"
)

// Shards by cost. `--shard I/N` runs the units the partition below gives
// shard I: the suite's tasks, each with the estimated cost of its units
// and of its target (the cost model, cost.go), packed longest first onto
// the least-loaded shard. The partition depends only on the suite, the
// profile, the seeds and the cost model compiled into the binary, never on
// --methods or on what the directory holds, so every process of a plan
// computes the same one.
//
// A task stays whole on one shard (its reference posterior built once)
// while it costs at most a quarter of a shard's mean load; a costlier task
// is split into its units, each charged the task's target again, since a
// shard that runs one of them builds the reference itself unless the
// shards share a reference cache. Without the split a suite of a few
// hundred costly tasks could not be balanced on 64 shards.
//
// Records are keyed by unit, not by shard, so a directory written by a
// run sharded another way (the old hash of the task, or another count)
// is resumed: every unit it holds counts as done, whichever shard runs it
// now.

// costTask is one task of the partition: its key (shardKey), the cost of
// building its target and its units' costs, in plan order.
type costTask struct {
	key    string
	target float64
	units  []costUnit
}

// costUnit is one unit of a costTask.
type costUnit struct {
	key  string // the plan's method and variant
	cost float64
}

func (t *costTask) cost() float64 {
	c := t.target
	for _, u := range t.units {
		c += u.cost
	}
	return c
}

func planKey(p Plan) string { return p.Method + "|" + p.Variant }

// costTasks are the tasks of settings × seeds under plans with their
// estimated costs; a plan with Tasks > 0 counts on its first Tasks seeds
// only, as planGroups runs it.
func costTasks(su Suite, prof *Profile, m *CostModel, settings []Setting, seeds []uint64, plans []Plan) []costTask {
	name := su.Info().Name
	var out []costTask
	for _, s := range settings {
		for i, seed := range seeds {
			rs := s
			rs.Prior, rs.Likelihood = su.Families(s, seed)
			t := costTask{key: shardKey(s, seed), target: m.TargetSeconds(name, targetKind(su, rs), prof, s.D, s.N)}
			for _, p := range plans {
				if p.Tasks > 0 && i >= p.Tasks {
					continue
				}
				c, _ := m.UnitSeconds(name, p, s.D, s.N)
				t.units = append(t.units, costUnit{key: planKey(p), cost: c})
			}
			out = append(out, t)
		}
	}
	return out
}

// shardMap is a partition of a suite's units.
type shardMap struct {
	shards int
	task   map[string]int // a task's shard: the whole task's, or its first unit's
	unit   map[string]int // shardKey|method|variant → shard, for split tasks
	loads  []float64      // each shard's estimated CPU seconds
	units  int            // the units partitioned
}

// shardOf is the shard of the unit of plan p on task key; a unit of a
// plan the partition did not cost (an opt-in or external method) goes
// with its task.
func (sm *shardMap) shardOf(task string, p Plan) int {
	if sm.shards <= 1 {
		return 0
	}
	if i, ok := sm.unit[task+"|"+planKey(p)]; ok {
		return i
	}
	return sm.task[task]
}

// ErrTooManyShards: more shards than units to put on them.
var ErrTooManyShards = errors.New("more shards than units")

// partition packs tasks onto shards (see the file comment). It refuses
// more shards than units, naming the number that would be useful.
func partition(tasks []costTask, shards int) (*shardMap, error) {
	shards = max(shards, 1)
	sm := &shardMap{shards: shards, task: map[string]int{}, unit: map[string]int{}, loads: make([]float64, shards)}
	total := 0.0
	for i := range tasks {
		sm.units += len(tasks[i].units)
		total += tasks[i].cost()
	}
	if shards > 1 && shards > sm.units {
		return nil, fmt.Errorf("%w: %d shards for %d units; use at most %d (--shard I/%d)", ErrTooManyShards, shards, sm.units, sm.units, sm.units)
	}
	type item struct {
		task, unit string // unit "" for a whole task
		cost       float64
	}
	var items []item
	split := total / float64(shards) / 4
	for i := range tasks {
		t := &tasks[i]
		if shards == 1 || t.cost() <= split || len(t.units) <= 1 {
			items = append(items, item{task: t.key, cost: t.cost()})
			continue
		}
		for _, u := range t.units {
			items = append(items, item{task: t.key, unit: u.key, cost: t.target + u.cost})
		}
	}
	// Longest first; equal costs by key, so the order (and the partition)
	// is the same in every process.
	sort.SliceStable(items, func(a, b int) bool {
		if items[a].cost != items[b].cost {
			return items[a].cost > items[b].cost
		}
		if items[a].task != items[b].task {
			return items[a].task < items[b].task
		}
		return items[a].unit < items[b].unit
	})
	for _, it := range items {
		best := 0
		for i, l := range sm.loads {
			if l < sm.loads[best] {
				best = i
			}
		}
		sm.loads[best] += it.cost
		if it.unit != "" {
			sm.unit[it.task+"|"+it.unit] = best
		}
		if _, ok := sm.task[it.task]; !ok || it.unit == "" {
			sm.task[it.task] = best
		}
	}
	fixTaskShards(sm, tasks)
	return sm, nil
}

// fixTaskShards makes a split task's shard (where its uncosted units go)
// its first unit's in plan order, not whichever of its units was packed
// first.
func fixTaskShards(sm *shardMap, tasks []costTask) {
	for i := range tasks {
		t := &tasks[i]
		if len(t.units) == 0 {
			continue
		}
		if s, ok := sm.unit[t.key+"|"+t.units[0].key]; ok {
			sm.task[t.key] = s
		}
	}
}

// ratio is the largest shard's load over the mean load.
func (sm *shardMap) ratio() float64 {
	top, sum := 0.0, 0.0
	for _, l := range sm.loads {
		top, sum = max(top, l), sum+l
	}
	if sum == 0 {
		return 1
	}
	return top / (sum / float64(len(sm.loads)))
}

// empty counts the shards with nothing to run.
func (sm *shardMap) empty() int {
	n := 0
	for _, l := range sm.loads {
		if l == 0 {
			n++
		}
	}
	return n
}
