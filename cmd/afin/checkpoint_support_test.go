package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin/checkpoint"
)

// copyInference copies a checkpoint's inference files into a new
// directory, with its support's ranges removed: a checkpoint as written
// before they existed.
func copyInference(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := checkpoint.InferenceFiles(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == checkpoint.ConfigFile {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			delete(m["training_support"].(map[string]any), "ranges")
			if data, err = json.MarshalIndent(m, "", "  "); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// `afin checkpoint support --write` gives a checkpoint without ranges its
// ranges and OOD statistics, after which it still loads and `checkpoint
// info` prints both; before, info says the support is unknown.
func TestCheckpointSupportWrites(t *testing.T) {
	dir := copyInference(t, filepath.Join("..", "..", "checkpoints", "small-gaussian"))
	code, out, errs := runCLI("checkpoint", "info", dir)
	if code != 0 || !strings.Contains(out, checkpoint.SupportUnknown) || !strings.Contains(out, "ood          none") {
		t.Fatalf("info before: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI("checkpoint", "support", dir, "--write", "--fit", "60", "--calibrate", "20", "--test", "20")
	if code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("support: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI("checkpoint", "info", dir)
	if code != 0 {
		t.Fatalf("info after: exit %d\n%s", code, errs)
	}
	for _, want := range []string{"prior diag_gaussian     location", "scale [0.4493, 1]", "binomial_logit   trials [2, 8]",
		"lin_student_t    noise scale [0.4966, 1]  df [3.5, 8]", "ood          Mahalanobis distance", "fitted on 60"} {
		if !strings.Contains(out, want) {
			t.Errorf("info after support --write lacks %q:\n%s", want, out)
		}
	}
	if code, _, errs = runCLI("checkpoint", "support", dir, "--fit", "1"); code != 2 || !strings.Contains(errs, "fit=1") {
		t.Errorf("--fit 1: exit %d, %s", code, errs)
	}
}
