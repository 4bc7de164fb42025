package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckpointThroughputBadInput(t *testing.T) {
	small := filepath.Join("..", "..", "checkpoints", "small-gaussian")
	flow := filepath.Join("..", "..", "checkpoints", "small-flow")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "give a checkpoint DIR"},
		{[]string{"--config", "small"}, "--random-weights"},
		{[]string{"--config", "huge", "--random-weights", "1"}, "huge"},
		{[]string{small, "--config", "small", "--random-weights", "1"}, "not both"},
		{[]string{small, "--tasks", "0"}, "--tasks"},
		{[]string{small, "--d", "0"}, "--d"},
		{[]string{small, "--workers", "-1"}, "--workers"},
		{[]string{flow, "--tasks", "2"}, "Gaussian decoder only"},
		{[]string{filepath.Join(t.TempDir(), "missing")}, "missing"},
		{[]string{small, "extra"}, "unexpected argument"},
	} {
		code, _, stderr := runCLI(append([]string{"checkpoint", "throughput"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestCheckpointThroughput(t *testing.T) {
	small := filepath.Join("..", "..", "checkpoints", "small-gaussian")
	for _, tc := range []struct {
		name, engine string
		args         []string
		batches      int
		compiled     bool
	}{
		// 10 tasks in passes of 4: 3 batches, the last of 2.
		{"gomlx random weights", "gomlx", []string{"--config", "small", "--random-weights", "3", "--batch", "4"}, 3, true},
		{"gomlx checkpoint", "gomlx", []string{small, "--batch", "5"}, 2, true},
		// Native: 10 tasks over 2 workers, at least 4 passes each → 1 task a pass.
		{"native", "native", []string{small, "--batch", "5", "--workers", "2"}, 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(engineEnv, tc.engine)
			t.Setenv(backendEnv, "go")
			args := append(append([]string{"checkpoint", "throughput"}, tc.args...), "--tasks", "10", "--d", "3", "--n", "5", "--json")
			code, stdout, stderr := runCLI(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var res throughputResult
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if res.Tasks != 10 || res.D != 3 || res.N != 5 || res.Batches != tc.batches {
				t.Errorf("tasks %d d %d n %d batches %d; want 10, 3, 5, %d", res.Tasks, res.D, res.N, res.Batches, tc.batches)
			}
			if !(res.Seconds > 0) || !(res.TasksPerS > 0) {
				t.Errorf("seconds %v, tasks/s %v: want both positive", res.Seconds, res.TasksPerS)
			}
			// A program per batch size and set of families present: at
			// most one compile a batch, none on the native engine.
			if tc.compiled != (res.Programs > 0) || res.Programs > res.Batches {
				t.Errorf("%d programs compiled on %s in %d batches", res.Programs, res.Engine, res.Batches)
			}
			if tc.compiled != (res.CompileSeconds > 0) {
				t.Errorf("%v s of compiling on %s", res.CompileSeconds, res.Engine)
			}
			if tc.compiled && (!(res.FirstBatchSeconds > 0) || !(res.TasksPerSAfterFirst > 0)) {
				t.Errorf("GoMLX: first batch %v s, after it %v tasks/s; want both positive", res.FirstBatchSeconds, res.TasksPerSAfterFirst)
			}
		})
	}
}
