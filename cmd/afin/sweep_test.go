package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad and edge inputs found by the CLI robustness sweep: each is refused
// with exit 2 and one line saying what is wrong, before any work.
func TestSweepBadInput(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[{"type":"lin_gaussian","x":[0.1,0.2],"y":0.5,"sigma":1}]}`)
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	writeStore(t, res, 0.05)
	baseline := filepath.Join(dir, "baseline.json")
	if code, _, stderr := cliRun(t, "check", "--results", res, "--write-baseline", baseline); code != 0 {
		t.Fatalf("write-baseline: exit %d: %s", code, stderr)
	}
	newBaseline := filepath.Join(dir, "new.json")
	big := fdWrite(t, "big.csv", "z1,z2\n1e300,1e300\n-1e300,-1e300\n")
	// A checkpoint whose weights were cut short.
	cut := filepath.Join(dir, "cut")
	os.MkdirAll(cut, 0o755)
	ship := filepath.Join("..", "..", "checkpoints", "small-gaussian")
	for _, f := range []string{"config.json", "model.safetensors"} {
		data, err := os.ReadFile(filepath.Join(ship, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "model.safetensors" {
			data = data[:len(data)/2]
		}
		os.WriteFile(filepath.Join(cut, f), data, 0o644)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		// One draw's covariance was reported as a zero matrix.
		{"flow with one draw", []string{"infer", "--method", "iaf", "--task", task, "--steps", "5", "--draws", "1"}, "--draws must be ≥ 2"},
		// encoding/json failed on the NaN after the work: exit 1.
		{"NaN tolerance", []string{"check", "--results", res, "--rel", "NaN", "--write-baseline", newBaseline}, "--rel: must be finite and ≥ 0, got NaN"},
		{"infinite tolerance", []string{"check", "--results", res, "--abs", "Inf", "--write-baseline", newBaseline}, "--abs: must be finite and ≥ 0, got +Inf"},
		// Silently ignored: the gate ran with the baseline's tolerances.
		{"tolerance without write", []string{"check", "--results", res, "--baseline", baseline, "--rel", "10"}, "--rel and --abs set the tolerances of a baseline written with --write-baseline"},
		// Silently ignored: a baseline was written, nothing checked.
		{"baseline and write-baseline", []string{"check", "--results", res, "--baseline", baseline, "--write-baseline", newBaseline}, "--baseline and --write-baseline exclude each other"},
		// "no records in X" read as if no run had happened yet.
		{"check: results missing", []string{"check", "--results", filepath.Join(dir, "typo")}, "no records in " + filepath.Join(dir, "typo") + ": the directory does not exist"},
		{"report: results a file", []string{"report", "--results", task, "--out", filepath.Join(dir, "rep")}, "no records in " + task + ": it is a file, not a directory"},
		{"compare: side missing", []string{"report", "--compare", res, filepath.Join(dir, "typo")}, "--compare: no records in " + filepath.Join(dir, "typo") + ": the directory does not exist"},
		// Every unit of the seed ran twice.
		{"repeated seed", []string{"bench", "--suite", "synthetic", "--profile", "smoke", "--methods", "afin", "--seeds", "1,1", "--results", filepath.Join(dir, "bench")}, "--seeds: seed 1 is given twice"},
		// sd +Inf in the table, null (NA's spelling) in JSON, exit 0.
		{"summary overflow", []string{"summary", "--draws", big}, "z1: sd is +Inf: the draws are too large in magnitude"},
		{"summary overflow, JSON", []string{"summary", "--draws", big, "--json"}, "z1: sd is +Inf"},
		// Described as a usable checkpoint, exit 0.
		{"truncated weights", []string{"checkpoint", "info", cut}, "outside the"},
		// Refused inside the trainer, exit 1 like a failed run.
		{"infinite learning rate", []string{"train", "--lr", "Inf", "--steps", "1", "--out", filepath.Join(dir, "train")}, "learning rate must be finite and > 0, got +Inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := cliRun(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q\nstdout: %s", code, stderr, tc.want, stdout)
			}
		})
	}
	if _, err := os.Stat(newBaseline); err == nil {
		t.Error("a refused --write-baseline wrote the file")
	}
	for _, d := range []string{"bench", "train"} {
		if _, err := os.Stat(filepath.Join(dir, d)); err == nil {
			t.Errorf("a refused %s created its output directory", d)
		}
	}
}

// fullWriter fails every write, as stdout on a full disk or a closed pipe.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A result that cannot be written is a failure, not exit 0 with the
// numbers lost.
func TestSweepStdoutWriteError(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[]}`)
	draws := fdWrite(t, "a.csv", "z1,z2\n0,1\n1,0\n2,2\n")
	ref := fdWrite(t, "b.csv", "z1,z2\n0,0\n1,1\n2,1\n")
	ck := filepath.Join("..", "..", "checkpoints", "small-gaussian")
	tests := []struct {
		name string
		args []string
	}{
		{"metrics", []string{"metrics", "--draws", draws, "--ref", ref}},
		{"density", []string{"density", "--task", task, "--at", draws, "--checkpoint", ck}},
		{"checkpoint info", []string{"checkpoint", "info", ck}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			code := run(context.Background(), &cliEnv{stdout: fullWriter{}, stderr: &errb}, tc.args)
			if code == 0 || !strings.Contains(errb.String(), "no space left on device") {
				t.Fatalf("exit %d, stderr %q; want a failure naming the write error", code, errb.String())
			}
		})
	}
}

// A log q that overflows float64 is printed as -Inf (null in JSON) with a
// warning saying why, not on its own.
func TestSweepDensityNonFinite(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[]}`)
	at := fdWrite(t, "z.csv", "z1,z2\n0,0\n1e200,-1e200\n")
	ck := filepath.Join("..", "..", "checkpoints", "small-gaussian")
	for _, asJSON := range []bool{false, true} {
		args := []string{"density", "--task", task, "--at", at, "--checkpoint", ck}
		if asJSON {
			args = append(args, "--json")
		}
		code, stdout, stderr := cliRun(t, args...)
		if code != 0 || !strings.Contains(stderr, "log q is not finite at 1 of 2 point(s) (first: data row 2") {
			t.Errorf("json %v: exit %d, stderr %q\nstdout: %s", asJSON, code, stderr, stdout)
		}
	}
}

// Statistics that cannot be computed read as null in the text summary
// (as in JSON) and are named as such in the warning, not as <nil> or NaN.
func TestSweepInferUndefinedDiagnostics(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_laplace","loc":[0,0],"scale":[1,1]},"factors":[{"type":"bernoulli_logit","x":[0.5,-1],"y":1}]}`)
	code, stdout, stderr := cliRun(t, "infer", "--method", "nuts", "--task", task, "--draws", "8", "--chains", "2", "--warmup", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "<nil>") || !strings.Contains(stdout, "ess_bulk: null") {
		t.Errorf("stdout shows Go's <nil> or lacks ess_bulk: null:\n%s", stdout)
	}
	if strings.Contains(stderr, "NaN") || !strings.Contains(stderr, "min bulk ESS cannot be computed") {
		t.Errorf("warning %q: want the uncomputable ESS named, no NaN", stderr)
	}
}
