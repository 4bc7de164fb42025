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
		// shapes is the distinct chunk sizes of the passes (tasks padded to
		// a power of two); 0 on the native engine.
		shapes int
	}{
		// 10 tasks in passes of 4: 3 batches, the last of 2.
		{"gomlx random weights", "gomlx", []string{"--config", "small", "--random-weights", "3", "--batch", "4"}, 3, 2},
		{"gomlx checkpoint", "gomlx", []string{small, "--batch", "5"}, 2, 1},
		// Native: 10 tasks over 2 workers, at least 4 passes each → 1 task a pass.
		{"native", "native", []string{small, "--batch", "5", "--workers", "2"}, 10, 0},
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
			// An inference pass runs four block programs (the adapters, an
			// encoder layer, a merge block, the decoder head), compiled once
			// for each chunk size met; none on the native engine.
			compiled := tc.shapes > 0
			if res.Programs != 4*tc.shapes {
				t.Errorf("%d programs compiled on %s in %d batches, want %d", res.Programs, res.Engine, res.Batches, 4*tc.shapes)
			}
			if compiled != (res.CompileSeconds > 0) {
				t.Errorf("%v s of compiling on %s", res.CompileSeconds, res.Engine)
			}
			if compiled && (!(res.FirstBatchSeconds > 0) || !(res.TasksPerSAfterFirst > 0)) {
				t.Errorf("GoMLX: first batch %v s, after it %v tasks/s; want both positive", res.FirstBatchSeconds, res.TasksPerSAfterFirst)
			}
		})
	}
}
