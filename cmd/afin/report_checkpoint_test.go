package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// describeCheckpoint reads the shipped checkpoint's manifest, hash and
// training log, and describes an unreadable one by its error instead of
// failing the report.
func TestDescribeCheckpoint(t *testing.T) {
	shipped := filepath.Join("..", "..", "checkpoints", "small-gaussian")
	empty := t.TempDir()
	logOnly := t.TempDir()
	if err := os.WriteFile(filepath.Join(logOnly, "train.jsonl"), []byte("{\"step\":10,\"seconds\":5}\n{\"step\":20,\"seconds\":9.5}\n{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dir, errHas string
		params            int
	}{
		{"shipped", shipped, "", 86501},
		{"no config.json", empty, "checkpoint", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ck := describeCheckpoint(c.dir)
			if c.errHas != "" {
				if !strings.Contains(ck.Err, c.errHas) {
					t.Fatalf("Err %q, want it to mention %q", ck.Err, c.errHas)
				}
				return
			}
			if ck.Err != "" || ck.Params != c.params || len(ck.Hash) != 64 || ck.TrainSteps == 0 || !strings.Contains(ck.Support, "d 1–") {
				t.Fatalf("got %+v", ck)
			}
		})
	}
	if step, secs := lastTrainLog(filepath.Join(logOnly, "train.jsonl")); step != 20 || secs != 9.5 {
		t.Errorf("lastTrainLog = %d, %v; want the last whole line (20, 9.5)", step, secs)
	}
}
