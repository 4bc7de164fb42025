package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
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

// README and checkpoints/README.md give the shipped checkpoint's training
// in the figures its own log holds, the ones the report's banner prints:
// the whole history (train.jsonl runs on through the warm start from
// small-gaussian) and the part on the full support after the warm start.
func TestReadmeTrainingAccount(t *testing.T) {
	root := filepath.Join("..", "..")
	steps, secs := lastTrainLog(filepath.Join(root, "checkpoints", "small-full", "train.jsonl"))
	warmSteps, warmSecs := lastTrainLog(filepath.Join(root, "checkpoints", "small-gaussian", "train.jsonl"))
	start := describeCheckpoint(filepath.Join(root, "checkpoints", "small-gaussian"))
	if steps == 0 || warmSteps == 0 || start.Err != "" {
		t.Fatalf("training logs: small-full %d steps, small-gaussian %d steps (%s)", steps, warmSteps, start.Err)
	}
	full := describeCheckpoint(filepath.Join(root, "checkpoints", "small-full"))
	if full.Step != steps || full.TrainSteps != steps {
		t.Fatalf("small-full's manifest is at step %d, its log ends at %d", full.Step, steps)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// README wraps lines: compare with single spaces.
	text := strings.Join(strings.Fields(string(readme)), " ")
	for _, want := range []string{
		fmt.Sprintf("Trained for %s steps in %.1f hours", digits(steps), secs/3600),
		fmt.Sprintf("small-gaussian's %s, then %s steps", digits(start.Step), digits(steps-start.Step)),
		fmt.Sprintf("%.1f hours) on the whole support", (secs-warmSecs)/3600),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("README.md does not say %q (from the checkpoints' train.jsonl and config.json)", want)
		}
	}
	ckReadme, err := os.ReadFile(filepath.Join(root, "checkpoints", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s steps in %s s (%.1f h)", digits(steps), digits(int(math.Round(secs))), secs/3600)
	if !strings.Contains(strings.Join(strings.Fields(string(ckReadme)), " "), want) {
		t.Errorf("checkpoints/README.md does not say %q", want)
	}
}

// digits writes n with thousands separators, as the READMEs do.
func digits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
