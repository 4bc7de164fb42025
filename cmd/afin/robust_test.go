package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/bench"
	"github.com/afin-bench/afin/internal/countctx"
	"github.com/afin-bench/afin/records"
)

// goodStore writes a small results store and the baseline the gate takes
// from it; it returns the store's file content and the baseline's path.
func goodStore(t *testing.T) (content, baseline string) {
	t.Helper()
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	writeStore(t, res, 0.05)
	baseline = filepath.Join(dir, "baseline.json")
	if code, _, stderr := runCLI("check", "--results", res, "--write-baseline", baseline); code != 0 {
		t.Fatalf("write-baseline: %s", stderr)
	}
	data, err := os.ReadFile(filepath.Join(res, "synthetic.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data), baseline
}

// Every corruption tried by hand on a copy of a results directory: report
// and check refuse it (exit 2, one line naming it) or read it with a
// warning carrying its count; the gate fails on a partial set.
func TestResultsCorruptionCases(t *testing.T) {
	good, baseline := goodStore(t)
	lines := strings.SplitAfter(strings.TrimSuffix(good, "\n"), "\n")
	first := strings.TrimSuffix(lines[0], "\n")
	tests := []struct {
		name   string
		files  map[string]string
		report int // exit status of report
		check  int // exit status of check
		want   string
	}{
		{"hello world", map[string]string{"x.jsonl": good + `{"hello":"world"}` + "\n"}, 2, 2, "missing field"},
		{"metric missing", map[string]string{"x.jsonl": strings.Replace(good, `"m1":0.1,`, "", 1)}, 2, 2, "missing field(s) m1"},
		{"negative metric", map[string]string{"x.jsonl": strings.Replace(good, `"m2":0.2`, `"m2":-0.2`, 1)}, 2, 2, "m2: must be finite and ≥ 0"},
		{"unknown method", map[string]string{"x.jsonl": good + strings.Replace(first, `"nuts"`, `"magic"`, 1) + "\n"}, 2, 2, `unknown method "magic"`},
		{"unknown budget", map[string]string{"x.jsonl": good + strings.Replace(first, `"budget":100`, `"budget":7`, 1) + "\n"}, 0, 1, "1 not in the baseline"},
		{"no final newline", map[string]string{"x.jsonl": strings.TrimSuffix(good, "\n")}, 0, 0, "lacks a final newline"},
		{"torn last line", map[string]string{"x.jsonl": good + first[:len(first)/2]}, 0, 0, "torn last line dropped"},
		{"conflicting duplicate", map[string]string{"a.jsonl": good, "b.jsonl": strings.Replace(first, `"m1":0.1`, `"m1":0.3`, 1) + "\n"}, 2, 2, "stored twice with different results"},
		{"other profile mixed in", map[string]string{"x.jsonl": strings.Replace(good, `"profile":""`, `"profile":"quick"`, 1)}, 0, 2, "mixes records of 2 profiles"},
		{"one shard of three", map[string]string{"x.jsonl": lines[0] + lines[1]}, 0, 1, "2 incomplete"},
		{"file cut at 60%", map[string]string{"x.jsonl": good[:len(good)*6/10]}, 0, 1, "incomplete"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "res")
			os.MkdirAll(dir, 0o755)
			for f, s := range tc.files {
				os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644)
			}
			out := filepath.Join(t.TempDir(), "report")
			rc, _, rerr := runCLI("report", "--results", dir, "--out", out, "--quiet")
			cc, cout, cerr := runCLI("check", "--results", dir, "--baseline", baseline)
			if rc != tc.report || cc != tc.check {
				t.Fatalf("exit report %d, check %d; want %d, %d\nreport: %s\ncheck: %s%s", rc, cc, tc.report, tc.check, rerr, cout, cerr)
			}
			if !strings.Contains(cerr, tc.want) {
				t.Errorf("check stderr %q lacks %q", cerr, tc.want)
			}
			if tc.report == 0 && tc.check == 0 {
				// A warning reaches the reader of the HTML report too.
				page, _ := os.ReadFile(filepath.Join(out, "index.html"))
				if !strings.Contains(string(page), tc.want) {
					t.Errorf("index.html lacks the warning %q", tc.want)
				}
			}
			if tc.report == 2 {
				if strings.Count(rerr, "\n") != 1 || !strings.Contains(rerr, tc.want) {
					t.Errorf("report stderr %q: want one line with %q", rerr, tc.want)
				}
				if _, err := os.Stat(out); err == nil {
					t.Error("report wrote output for refused results")
				}
			}
		})
	}
}

// dirEntries lists a directory's names, to show a refused command wrote
// nothing.
func dirEntries(t *testing.T, dir string) string {
	t.Helper()
	es, _ := os.ReadDir(dir)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

// Bad input caught before the work: exit 2, one line naming the problem,
// nothing written.
func TestBadInputBeforeTheWork(t *testing.T) {
	task, _ := blTaskFile(t, 1, "diag_gaussian", "lin_gaussian", 2, 8)
	big, _ := blTaskFile(t, 1, "diag_gaussian", "lin_gaussian", 4096, 16)
	dir := t.TempDir()
	afile := filepath.Join(dir, "afile")
	os.WriteFile(afile, []byte("x"), 0o644)
	res := filepath.Join(t.TempDir(), "res")
	writeStore(t, res, 0.05)
	tests := []struct {
		name  string
		args  []string
		want  string
		cache string // AFIN_CACHE_DIR; "" for a fresh one
	}{
		{"draws-out under a file", []string{"infer", "--method", "nuts", "--task", task, "--draws-out", filepath.Join(afile, "draws.csv")}, "afile is a file, not a directory", ""},
		{"draws-out unwritable", []string{"infer", "--method", "nuts", "--task", task, "--draws-out", "/proc/draws.csv"}, "--draws-out: cannot write in /proc", ""},
		{"draws-out missing directory", []string{"infer", "--method", "nuts", "--task", task, "--draws-out", filepath.Join(dir, "no", "draws.csv")}, "does not exist", ""},
		{"cache-dir under a file", []string{"reference", "--task", task, "--cache-dir", filepath.Join(afile, "cache")}, "--cache-dir: " + afile + " is a file", ""},
		{"frvi cache-dir unwritable", []string{"infer", "--method", "frvi", "--task", task, "--lr-select", "oracle", "--cache-dir", "/proc/cache"}, "--cache-dir: cannot write in /proc", ""},
		{"bench results under a file", []string{"bench", "--suite", "synthetic", "--profile", "smoke", "--results", filepath.Join(afile, "r")}, "--results: " + afile + " is a file", ""},
		{"bench reference cache under a file", []string{"bench", "--suite", "synthetic", "--profile", "smoke", "--results", filepath.Join(dir, "r3")}, "reference cache ($AFIN_CACHE_DIR): " + afile + " is a file", filepath.Join(afile, "cache")},
		{"report out under a file", []string{"report", "--results", res, "--out", filepath.Join(afile, "rep")}, "--out: " + afile + " is a file", ""},
		{"bench method outside the suite", []string{"bench", "--suite", "synthetic", "--methods", "frvi-snis", "--results", filepath.Join(dir, "r2")}, "not part of this suite", ""},
		{"simulate design", []string{"simulate", "--design", "bogus"}, "(valid: iid, diag_scale, correlated, student_t, mixture)", ""},
		{"afin beyond memory", []string{"infer", "--method", "afin", "--task", big, "--draws-out", filepath.Join(dir, "d.csv")}, "is available", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cache := tc.cache
			if cache == "" {
				cache = filepath.Join(t.TempDir(), "cache")
			}
			t.Setenv("AFIN_CACHE_DIR", cache)
			before := dirEntries(t, dir)
			code, _, stderr := runCLI(tc.args...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, tc.want)
			}
			if after := dirEntries(t, dir); after != before {
				t.Errorf("wrote %q (was %q)", after, before)
			}
		})
	}
}

// A second bench writing the results file another one is writing exits 2
// at once (shards, writing their own files, share a directory): it does
// not wait for the lock, which is held until the test returns, so a wait
// would hang the test.
func TestSecondBenchOnADirectory(t *testing.T) {
	dir := t.TempDir()
	held, err := openHeldStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	code, _, stderr := runCLI("bench", "--suite", "synthetic", "--profile", "smoke", "--results", dir)
	if code != 2 || !strings.Contains(stderr, "being written by another afin bench") {
		t.Fatalf("exit %d, stderr %q; want exit 2 at once", code, stderr)
	}
}

// Cancelling (what Ctrl-C and SIGTERM do) at any point of `afin infer
// --method afin` (batch building, adapters, encoder, attention) exits 130
// at the next look at the context: the context cancels itself at its
// k-th look, for k spread over a whole run, and no loop may look at it
// more than twice more (the error path's own look) after the cancel.
func TestInterruptDuringAFINForward(t *testing.T) {
	task, _ := blTaskFile(t, 1, "diag_gaussian", "lin_gaussian", 16, 256)
	infer := func(ctx context.Context) (int, string) {
		var out, errb strings.Builder
		code := run(ctx, &cliEnv{stdout: &out, stderr: &errb}, []string{"infer", "--method", "afin", "--task", task})
		return code, errb.String()
	}
	whole := countctx.CancelAt(0)
	defer whole.Stop()
	if code, stderr := infer(whole); code != 0 {
		t.Fatalf("uncancelled: exit %d, stderr %q", code, stderr)
	}
	looks := whole.Calls()
	if looks < 20 {
		t.Fatalf("a whole run looks at its context %d times: too few for a bounded latency", looks)
	}
	for _, at := range []int64{1, 2, looks / 8, looks / 4, looks / 2, 3 * looks / 4, looks - looks/8} {
		ctx := countctx.CancelAt(at)
		code, stderr := infer(ctx)
		ctx.Stop()
		if code != 130 || !strings.Contains(stderr, "interrupted") {
			t.Errorf("cancel at look %d of %d: exit %d, stderr %q; want 130", at, looks, code, stderr)
		}
		if ctx.After() > 2 {
			t.Errorf("cancel at look %d of %d: looked %d more times before returning", at, looks, ctx.After())
		}
	}
}

func openHeldStore(dir string) (interface{ Close() error }, error) {
	return records.OpenStore(dir, bench.ResultsFileName("synthetic", 0, 1))
}

// The gate refuses records of several profiles, commits or checkpoints
// (exit 2, one line naming the mix) and compares them only when
// --allow-mixed says the mix is intended; writing a baseline from them
// is refused the same way.
func TestCheckRefusesMixedRecords(t *testing.T) {
	good, baseline := goodStore(t)
	first := strings.SplitAfter(good, "\n")[0]
	tests := []struct {
		name string
		from string
		to   string
		want string
	}{
		{"two profiles", `"profile":""`, `"profile":"quick"`, "mixes records of 2 profiles (: 3, quick: 1)"},
		{"two commits", `"git_commit":""`, `"git_commit":"0123456789abcdef"`, "mixes records of 2 commits"},
		{"two checkpoints", `"provenance":{`, `"provenance":{"checkpoint":"aaaaaaaaaaaaaaaa",`, "mixes records of 2 checkpoints"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(first, tc.from) {
				t.Fatalf("record %s lacks %s", first, tc.from)
			}
			dir := filepath.Join(t.TempDir(), "res")
			os.MkdirAll(dir, 0o755)
			all := good
			if tc.name == "two checkpoints" {
				// Records of a method without a network carry no
				// checkpoint and mix with nothing: give every record one.
				all = strings.ReplaceAll(good, tc.from, `"provenance":{"checkpoint":"bbbbbbbbbbbbbbbb",`)
			}
			mixed := strings.Replace(all, tc.from, tc.to, 1)
			if tc.name == "two checkpoints" {
				mixed = strings.Replace(all, `"bbbbbbbbbbbbbbbb"`, `"aaaaaaaaaaaaaaaa"`, 1)
			}
			os.WriteFile(filepath.Join(dir, "synthetic.jsonl"), []byte(mixed), 0o644)
			code, stdout, stderr := runCLI("check", "--results", dir, "--baseline", baseline)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if code != 2 || !strings.Contains(last, tc.want) || !strings.Contains(last, "--allow-mixed") {
				t.Fatalf("exit %d, last line %q; want 2 naming %q and --allow-mixed\n%s", code, last, tc.want, stdout)
			}
			if code, _, stderr := runCLI("check", "--results", dir, "--write-baseline", filepath.Join(t.TempDir(), "b.json")); code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("write-baseline from mixed records: exit %d, %s", code, stderr)
			}
			if code, stdout, stderr := runCLI("check", "--results", dir, "--baseline", baseline, "--allow-mixed"); code != 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("--allow-mixed: exit %d (want 0, the mix still warned)\n%s%s", code, stdout, stderr)
			}
		})
	}
}
