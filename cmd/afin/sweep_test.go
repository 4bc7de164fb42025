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
	// A checkpoint without its config.json.
	noConfig := filepath.Join(dir, "noconfig")
	os.MkdirAll(noConfig, 0o755)
	if data, err := os.ReadFile(filepath.Join(ship, "model.safetensors")); err == nil {
		os.WriteFile(filepath.Join(noConfig, "model.safetensors"), data, 0o644)
	}
	// Results directories holding a line that is not a record.
	garbage, schema := filepath.Join(dir, "garbage"), filepath.Join(dir, "schema")
	os.MkdirAll(garbage, 0o755)
	os.MkdirAll(schema, 0o755)
	os.WriteFile(filepath.Join(garbage, "x.jsonl"), []byte("garbage\n"), 0o644)
	os.WriteFile(filepath.Join(schema, "x.jsonl"), []byte(`{"suite":"synthetic","seed":1}`+"\n"), 0o644)
	nowhere := filepath.Join(dir, "nowhere")
	pts := fdWrite(t, "z.csv", "z1,z2\n0,0\n")
	// Addresses that refuse connections: a fetch that got as far as the
	// network fails (exit 1), and never downloads.
	deadURL := "http://127.0.0.1:9"
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
		// Exit 1, leaving an empty uci.jsonl and .uci.jsonl.lock behind.
		{"bench: no data dir", []string{"bench", "--suite", "uci", "--profile", "smoke", "--methods", "afin", "--results", filepath.Join(dir, "bench"), "--data-dir", nowhere}, "no UCI raw files in " + nowhere},
		{"bench: checkpoint missing", []string{"bench", "--suite", "synthetic", "--profile", "smoke", "--methods", "afin", "--results", filepath.Join(dir, "bench"), "--checkpoint", nowhere}, filepath.Join(nowhere, "config.json")},
		{"bench: checkpoint truncated", []string{"bench", "--suite", "synthetic", "--profile", "smoke", "--results", filepath.Join(dir, "bench"), "--checkpoint", cut}, filepath.Join(cut, "model.safetensors")},
		// Exit 1 from bench, 2 from report and check for the same file.
		{"bench: garbage results", []string{"bench", "--suite", "synthetic", "--profile", "smoke", "--methods", "afin", "--results", garbage}, filepath.Join(garbage, "x.jsonl") + ":1: not a valid results record"},
		{"bench: wrong-schema results", []string{"bench", "--suite", "synthetic", "--profile", "smoke", "--methods", "afin", "--results", schema}, filepath.Join(schema, "x.jsonl") + ":1: not a valid results record"},
		// Exit 1.
		{"density: checkpoint missing", []string{"density", "--task", task, "--at", pts, "--checkpoint", nowhere}, filepath.Join(nowhere, "config.json")},
		{"density: checkpoint truncated", []string{"density", "--task", task, "--at", pts, "--checkpoint", cut}, filepath.Join(cut, "model.safetensors")},
		{"density: no config.json", []string{"density", "--task", task, "--at", pts, "--checkpoint", noConfig}, filepath.Join(noConfig, "config.json")},
		{"infer: checkpoint truncated", []string{"infer", "--method", "afin", "--task", task, "--checkpoint", cut}, filepath.Join(cut, "model.safetensors")},
		{"infer: no config.json", []string{"infer", "--method", "afin-snis", "--task", task, "--checkpoint", noConfig}, filepath.Join(noConfig, "config.json")},
		// The network was tried first (exit 1).
		{"checkpoint fetch: out a file", []string{"checkpoint", "fetch", "--out", filepath.Join(task, "ck"), "--base", deadURL}, "--out: " + task + " is a file, not a directory"},
		{"checkpoint fetch: unknown family", []string{"checkpoint", "fetch", "--out", filepath.Join(dir, "ck"), "--base", deadURL, "--family", "gaussian,bogus"}, `--family: unknown family "bogus"`},
		{"datasets fetch: data dir a file", []string{"datasets", "fetch", "--data-dir", filepath.Join(task, "uci"), "--mirror", deadURL}, "--data-dir: " + task + " is a file, not a directory"},
		// Exit 1 (bench now refuses the same data directory with 2).
		{"datasets task: no data dir", []string{"datasets", "task", "concrete_slump", "--data-dir", nowhere}, "raw file " + filepath.Join(nowhere, "concrete_slump")},
		// pareto_k: null with no word why.
		{"afin-snis: too few proposals", []string{"infer", "--method", "afin-snis", "--task", task, "--proposals", "2"}, "--proposals must be ≥ 21, got 2"},
		{"frvi-snis: too few proposals", []string{"infer", "--method", "frvi-snis", "--task", task, "--steps", "5", "--proposals", "20"}, "--proposals must be ≥ 21, got 20"},
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
	for _, d := range []string{"bench", "train", "ck"} {
		if _, err := os.Stat(filepath.Join(dir, d)); err == nil {
			t.Errorf("a refused %s created its output directory", d)
		}
	}
	for _, d := range []string{garbage, schema} {
		if entries, _ := os.ReadDir(d); len(entries) != 1 {
			t.Errorf("a refused bench left files in %s: %v", d, entries)
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

// Statistics that cannot be computed read as NaN in the text summary (the
// token JSON holds for them) and are named as such in the warning, not as
// <nil> or NaN.
func TestSweepInferUndefinedDiagnostics(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_laplace","loc":[0,0],"scale":[1,1]},"factors":[{"type":"bernoulli_logit","x":[0.5,-1],"y":1}]}`)
	code, stdout, stderr := cliRun(t, "infer", "--method", "nuts", "--task", task, "--draws", "8", "--chains", "2", "--warmup", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "<nil>") || !strings.Contains(stdout, "ess_bulk: NaN") {
		t.Errorf("stdout shows Go's <nil> or lacks ess_bulk: NaN:\n%s", stdout)
	}
	if strings.Contains(stderr, "NaN") || !strings.Contains(stderr, "min bulk ESS cannot be computed") {
		t.Errorf("warning %q: want the uncomputable ESS named, no NaN", stderr)
	}
}

// IMH's budget is its draws: with too few proposals behind them for a
// Pareto fit, imh_pareto_k is null and a warning says why.
func TestSweepIMHTooFewProposals(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[{"type":"lin_gaussian","x":[0.1,0.2],"y":0.5,"sigma":1}]}`)
	ck := filepath.Join("..", "..", "checkpoints", "small-gaussian")
	tests := []struct {
		draws string
		warn  bool
	}{
		{"4", true},
		{"40", false},
	}
	for _, tc := range tests {
		code, stdout, stderr := cliRun(t, "infer", "--method", "afin-imh", "--task", task, "--checkpoint", ck, "--chains", "1", "--draws", tc.draws)
		got := strings.Contains(stderr, "imh_pareto_k cannot be computed (too few proposals")
		if code != 0 || got != tc.warn {
			t.Errorf("--draws %s: exit %d, warning %v (want %v); stderr %q\nstdout: %s", tc.draws, code, got, tc.warn, stderr, stdout)
		}
	}
}

// An import whose --out cannot be created is refused before the run is
// read, with exit 2, not as a failed write after it.
func TestSweepImportOutUnusable(t *testing.T) {
	run := filepath.Join(torchFixtures, "run-gaussian")
	if _, err := os.Stat(run); err != nil {
		t.Fatal(err)
	}
	file := fdWrite(t, "file", "")
	code, stdout, stderr := cliRun(t, "checkpoint", "import", run, "--out", filepath.Join(file, "ck"))
	want := "--out: " + file + " is a file, not a directory"
	if code != 2 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q\nstdout: %s", code, stderr, want, stdout)
	}
}
