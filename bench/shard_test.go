package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
)

// oldHashShard is the partition of runs before shards balanced cost: the
// task's key hashed onto N shards. Kept here to measure the old balance
// and to write a directory the old way in the resume test.
func oldHashShard(taskKey string, n int) int {
	return int(hashString("shard", taskKey) % uint64(n))
}

// suiteCostTasks are a suite's tasks under a profile with their costs
// under the committed model, the default plans, as a run partitions them.
func suiteCostTasks(t *testing.T, suite, profile string) []costTask {
	t.Helper()
	prof, err := GetProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	su, err := lookupSuite(suite)
	if err != nil {
		t.Fatal(err)
	}
	m, err := DefaultCostModel()
	if err != nil {
		t.Fatal(err)
	}
	settings, err := su.Settings(prof)
	if err != nil {
		t.Fatal(err)
	}
	seeds, _ := su.Seeds(prof, nil)
	var plans []Plan
	for _, p := range prof.plansOf(su) {
		if !p.OptIn {
			plans = append(plans, p)
		}
	}
	return costTasks(su, prof, m, settings, seeds, plans)
}

// hashRatio is the largest over the mean shard of the old hash partition.
func hashRatio(tasks []costTask, n int) float64 {
	loads := make([]float64, n)
	for i := range tasks {
		loads[oldHashShard(tasks[i].key, n)] += tasks[i].cost()
	}
	return (&shardMap{loads: loads}).ratio()
}

// TestShardBalance: at 64 shards the largest shard's estimated cost is at
// most 1.15× the mean on every suite whose units outnumber the shards 4 to
// 1, on the quick and paper profiles; every unit has exactly one shard;
// and the partition is the same computed twice. It logs the old hash
// partition's ratio beside the new one.
func TestShardBalance(t *testing.T) {
	const shards = 64
	for _, profile := range []string{"quick", "paper"} {
		for _, suite := range SuiteNames() {
			t.Run(profile+"/"+suite, func(t *testing.T) {
				tasks := suiteCostTasks(t, suite, profile)
				units := 0
				for i := range tasks {
					units += len(tasks[i].units)
				}
				if units < shards {
					if _, err := partition(tasks, shards); !errors.Is(err, ErrTooManyShards) {
						t.Fatalf("%d units on %d shards: error %v, want ErrTooManyShards", units, shards, err)
					}
					return
				}
				sm, err := partition(tasks, shards)
				if err != nil {
					t.Fatal(err)
				}
				again, _ := partition(tasks, shards)
				count := make([]int, shards)
				for i := range tasks {
					for _, u := range tasks[i].units {
						s := shardOfKey(sm, tasks[i].key, u.key)
						if s2 := shardOfKey(again, tasks[i].key, u.key); s2 != s {
							t.Fatalf("unit %s|%s on shard %d, then %d", tasks[i].key, u.key, s, s2)
						}
						count[s]++
					}
				}
				t.Logf("%s %s: %d units, largest/mean at %d shards: hash %.2f, by cost %.2f (%d empty)",
					profile, suite, units, shards, hashRatio(tasks, shards), sm.ratio(), sm.empty())
				if units >= 4*shards && sm.ratio() > 1.15 {
					t.Errorf("largest shard %.3f× the mean, want ≤ 1.15", sm.ratio())
				}
			})
		}
	}
}

// shardOfKey is shardMap.shardOf for a unit named by its costUnit key.
func shardOfKey(sm *shardMap, task, unit string) int {
	if i, ok := sm.unit[task+"|"+unit]; ok {
		return i
	}
	return sm.task[task]
}

// TestPartitionRefusesTooManyShards names the useful number.
func TestPartitionRefusesTooManyShards(t *testing.T) {
	tasks := []costTask{
		{key: "a", target: 1, units: []costUnit{{key: "m|", cost: 5}, {key: "n|", cost: 2}}},
		{key: "b", target: 1, units: []costUnit{{key: "m|", cost: 4}}},
	}
	tests := []struct {
		shards  int
		wantErr bool
	}{{1, false}, {2, false}, {3, false}, {4, true}, {64, true}}
	for _, tc := range tests {
		_, err := partition(tasks, tc.shards)
		if tc.wantErr != (err != nil) {
			t.Fatalf("%d shards: error %v, want error %v", tc.shards, err, tc.wantErr)
		}
		if err != nil && (!errors.Is(err, ErrTooManyShards) || !strings.Contains(err.Error(), "at most 3")) {
			t.Errorf("%d shards: error %q does not name 3 as the most useful", tc.shards, err)
		}
	}
}

// TestResumeOldHashShards: a directory written by a run sharded the old
// way (shard 0 of 3 by the task's hash, and part of shard 1) is resumed by
// the cost-balanced shards: the units it holds are not run again, and the
// shards complete it to exactly the unsharded run's records.
func TestResumeOldHashShards(t *testing.T) {
	factory := func(count *int) MethodFactory {
		return func(name string, _ *methods.Env) (methods.Method, error) {
			return fakeMethod{name: name, count: count}, nil
		}
	}
	full := t.TempDir()
	if _, err := Run(context.Background(), fakeConfig(full, factory(nil))); err != nil {
		t.Fatal(err)
	}
	want := metricsByKey(t, full)
	recs, err := records.ReadDir(full)
	if err != nil {
		t.Fatal(err)
	}
	// The old run's files: shard 0's records whole, shard 1's first half.
	dir := t.TempDir()
	old := map[int][]records.Record{}
	for _, r := range recs {
		i := oldHashShard(fmt.Sprintf("%s|%s|%d", r.Suite, r.Setting, r.Seed), 3)
		old[i] = append(old[i], r)
	}
	// Whole units only (each has two points, written one after the
	// other), so every unit the directory holds is finished.
	half := len(old[1]) / 2
	old[1] = old[1][:half-half%2]
	held := len(old[0]) + len(old[1])
	for i := range 2 {
		var b bytes.Buffer
		if err := records.WriteRecords(&b, old[i]); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ResultsFileName("synthetic", i, 3)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	points := 0
	for i := range 3 {
		cfg := fakeConfig(dir, factory(&points))
		cfg.Shard, cfg.Shards = i, 3
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	if points != len(want)-held {
		t.Errorf("the new shards ran %d points; %d were missing (the old shards held %d of %d)", points, len(want)-held, held, len(want))
	}
	if got := metricsByKey(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed directory differs from the unsharded run (%d vs %d records)", len(got), len(want))
	}
}
