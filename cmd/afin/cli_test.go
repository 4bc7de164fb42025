package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/methods"
)

// cliRun drives the CLI in-process and returns exit status, stdout, stderr.
func cliRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

// TestBadFlagsOneLine checks that a flag error is bad input with exactly
// one line on stderr: the flag package's own report would add the whole
// usage after it.
func TestBadFlagsOneLine(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[]}`)
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"unknown flag", []string{"simulate", "--bogus"}, "afin simulate: flag provided but not defined: -bogus"},
		{"seed overflow", []string{"simulate", "--seed", "18446744073709551616"}, `invalid value "18446744073709551616" for flag -seed: value out of range`},
		{"negative seed", []string{"infer", "--method", "nuts", "--task", task, "--seed", "-1"}, `invalid value "-1" for flag -seed`},
		{"other method's flag", []string{"infer", "--method", "nuts", "--task", task, "--steps", "3"},
			"flag provided but not defined: -steps (see 'afin infer --method nuts --help')"},
		{"non-integer draws", []string{"infer", "--method", "frvi", "--task", task, "--draws", "1e3"}, `invalid value "1e3" for flag -draws`},
		{"missing value", []string{"metrics", "--draws"}, "flag needs an argument: -draws"},
		{"reference", []string{"reference", "--chains", "x"}, `invalid value "x" for flag -chains`},
		{"datasets list", []string{"datasets", "list", "--bogus"}, "flag provided but not defined: -bogus"},
		{"datasets task", []string{"datasets", "task", "--bogus", "yacht"}, "flag provided but not defined: -bogus"},
		{"method twice", []string{"infer", "--method", "nuts", "--method", "frvi", "--task", task},
			`--method given twice ("nuts", then "frvi")`},
		{"unknown method with its flags", []string{"infer", "--method", "hmc", "--task", task, "--leapfrog", "5"},
			`--method: unknown method "hmc"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := cliRun(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("stdout %q, want none", out)
			}
			if !strings.Contains(errs, tc.msg) {
				t.Errorf("stderr %q does not contain %q", errs, tc.msg)
			}
			if n := strings.Count(errs, "\n"); n != 1 {
				t.Errorf("stderr has %d lines, want 1: %q", n, errs)
			}
		})
	}
}

// TestHelpPrintsUsage checks --help still prints the usage with the flags
// after the flag package's output is silenced.
func TestHelpPrintsUsage(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"simulate", "--help"}, []string{"usage: afin simulate", "-likelihood"}},
		{[]string{"infer", "--help"}, []string{"usage: afin infer", "-task", "'afin infer --method M --help'"}},
		{[]string{"infer", "--method", "nuts", "-h"}, []string{"usage: afin infer", "-warmup"}},
		{[]string{"metrics", "--help"}, []string{"usage: afin metrics", "-ref"}},
		{[]string{"datasets", "task", "--help"}, []string{"usage: afin datasets task", "-data-dir"}},
	}
	for _, tc := range tests {
		code, _, errs := cliRun(t, tc.args...)
		if code != 0 {
			t.Errorf("%v: exit %d, want 0", tc.args, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: usage %q lacks %q", tc.args, errs, w)
			}
		}
	}
}

// TestOutputDimLimit checks that a task too large for a d×d covariance is
// refused up front instead of exhausting memory.
func TestOutputDimLimit(t *testing.T) {
	big := func(d int) string {
		loc := strings.TrimSuffix(strings.Repeat("0,", d), ",")
		scale := strings.TrimSuffix(strings.Repeat("1,", d), ",")
		return fdWrite(t, "task.json", fmt.Sprintf(`{"d":%d,"prior":{"type":"diag_gaussian","loc":[%s],"scale":[%s]},"factors":[]}`, d, loc, scale))
	}
	tooBig := big(maxOutputD + 1)
	for _, args := range [][]string{
		{"infer", "--method", "exact", "--task", tooBig},
		{"infer", "--method", "nuts", "--task", tooBig},
		{"reference", "--task", tooBig, "--no-cache"},
	} {
		code, _, errs := cliRun(t, args...)
		want := fmt.Sprintf("d = %d: this command reports a d×d covariance, which needs d ≤ %d", maxOutputD+1, maxOutputD)
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", args[:3], code, errs, want)
		}
	}
	// The limit itself still runs (the exact posterior of a diagonal prior).
	if testing.Short() {
		return
	}
	if code, _, errs := cliRun(t, "infer", "--method", "exact", "--task", big(512)); code != 0 {
		t.Errorf("d=512: exit %d, stderr %q", code, errs)
	}
}

// TestInferSummaryStable checks the text summary lists the diagnostics in
// a fixed (sorted) order, not Go's random map order.
func TestInferSummaryStable(t *testing.T) {
	res := &inferResult{Method: "nuts", D: 1, Mean: []float64{0}, Cov: [][]float64{{1}},
		Diagnostics: methods.Diagnostics{NUTSDiagnostics: &methods.NUTSDiagnostics{StepSize: 0.5, AcceptRate: 0.8, ESSBulk: 900, Rhat: 1}}}
	var first bytes.Buffer
	printInferSummary(&first, res)
	text := first.String()
	keys := []string{"accept_rate:", "divergences:", "ess_bulk:", "rhat:", "step_size:"}
	last := -1
	for _, k := range keys {
		i := strings.Index(text, k)
		if i <= last {
			t.Fatalf("%s out of order in %q", k, text)
		}
		last = i
	}
	for range 20 {
		var again bytes.Buffer
		printInferSummary(&again, res)
		if again.String() != text {
			t.Fatalf("summary changed between calls:\n%s\n%s", text, again.String())
		}
	}
}

// TestEarlyInputErrors checks input problems that are found before any
// work starts: an empty task file, and a --draws-out path that cannot be
// written (found before a long run, not after it).
func TestEarlyInputErrors(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[]}`)
	empty := fdWrite(t, "empty.json", " \n")
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "dir", "d.csv")
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"empty task", []string{"infer", "--method", "nuts", "--task", empty}, "reading task: " + empty + " is empty"},
		{"empty reference task", []string{"reference", "--task", empty}, "is empty"},
		{"draws-out is a directory", []string{"infer", "--method", "nuts", "--task", task, "--draws-out", dir}, "--draws-out: " + dir + " is a directory"},
		{"draws-out directory missing", []string{"infer", "--method", "frvi", "--task", task, "--draws-out", missing},
			"--draws-out: directory " + filepath.Dir(missing) + " does not exist"},
		{"reference draws-out", []string{"reference", "--task", task, "--no-cache", "--draws-out", missing}, "does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := cliRun(t, tc.args...)
			if code != 2 || out != "" || !strings.Contains(errs, tc.msg) || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, out, errs, tc.msg)
			}
		})
	}
}

// TestInferNonFiniteMoments: a task scaled beyond float64 (its
// covariance would overflow) is refused before any work, exit 2 with one
// line naming the field and the limit; it used to run and fail on the
// non-finite moments (exit 1), and checkMomentsFinite stays as the guard
// behind the limit.
func TestInferNonFiniteMoments(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[1e300,0],"scale":[1e300,1]},"factors":[]}`)
	for _, args := range [][]string{
		{"--method", "frvi", "--steps", "50", "--json"},
		{"--method", "frvi", "--steps", "50"},
		{"--method", "nuts", "--warmup", "50", "--draws", "50", "--chains", "1", "--json"},
	} {
		code, out, errs := cliRun(t, append(append([]string{"infer", "--task", task}, args...), "--seed", "1")...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "prior.loc[0]: must be finite with |value| ≤ 1e+150") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, no output and one line naming prior.loc[0]", args, code, out, errs)
		}
	}
}

// TestTaskWithByteOrderMark checks that a task file saved with a UTF-8
// byte-order mark (as some editors write) is read like one without.
func TestTaskWithByteOrderMark(t *testing.T) {
	task := `{"d":1,"prior":{"type":"diag_gaussian","loc":[0.5],"scale":[2]},"factors":[]}`
	for _, prefix := range []string{"", "\xef\xbb\xbf"} {
		path := fdWrite(t, "task.json", prefix+task)
		code, out, errs := cliRun(t, "infer", "--method", "exact", "--task", path, "--json")
		if code != 0 || !strings.Contains(out, `"mean":[0.5]`) {
			t.Errorf("prefix %q: exit %d, stdout %q, stderr %q", prefix, code, out, errs)
		}
	}
}

// TestDrawCountLimit checks that a request for more draws than fit in
// memory is refused before the run, including when the product of the
// flags overflows int.
func TestDrawCountLimit(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[]}`)
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"infer", "--method", "nuts", "--draws", "100000000"}, "--draws: 1e+08 draws of d = 2 would keep 2e+08 numbers"},
		{[]string{"infer", "--method", "nuts", "--draws", "9223372036854775807", "--chains", "9223372036854775807"}, "--draws: 9.223e+18 draws"},
		{[]string{"infer", "--method", "frvi", "--draws", "100000000"}, "--draws: 1e+08 draws of d = 2"},
		{[]string{"infer", "--method", "frvi-snis", "--proposals", "100000000"}, "--proposals: 1e+08 draws"},
		{[]string{"infer", "--method", "nsf", "--draws", "100000000"}, "--draws: 1e+08 draws"},
		{[]string{"infer", "--method", "exact", "--draws", "100000000"}, "--draws: 1e+08 draws"},
		{[]string{"infer", "--method", "afin-snis", "--proposals", "100000000"}, "--proposals: 1e+08 draws"},
		{[]string{"reference", "--no-cache", "--subsample", "100000000"}, "--subsample: 1e+08 draws"},
	}
	for _, tc := range tests {
		code, out, errs := cliRun(t, append(tc.args, "--task", task)...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errs, tc.msg)
		}
	}
}

// A warning reaches a person and a program in every output mode: stderr
// always, and diagnostics.warnings with --json. Cases: a run of 16 NUTS
// draws (no bulk ESS of 100), and AFIN on a task beyond its checkpoint's
// training support (d=9 against d ≤ 8), whose warning reached neither
// stderr nor a list with --json before.
func TestInferWarningsInEveryMode(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[]}`)
	wide := fdWrite(t, "task9.json", `{"d":9,"prior":{"type":"diag_gaussian","loc":[0,0,0,0,0,0,0,0,0],"scale":[1,1,1,1,1,1,1,1,1]},"factors":[]}`)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nuts", []string{"--method", "nuts", "--task", task, "--draws", "16", "--warmup", "20", "--chains", "4"}, "min bulk ESS"},
		{"afin", []string{"--method", "afin", "--task", wide, "--checkpoint", filepath.Join("..", "..", "checkpoints", "small-gaussian")}, "outside the checkpoint's training support"},
	} {
		for _, asJSON := range []bool{false, true} {
			args := append([]string{"infer"}, tc.args...)
			if asJSON {
				args = append(args, "--json")
			}
			code, stdout, stderr := cliRun(t, args...)
			if code != 0 {
				t.Fatalf("%s, json %v: exit %d: %s", tc.name, asJSON, code, stderr)
			}
			if !strings.Contains(stderr, "afin infer: warning: ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s, json %v: stderr %q lacks the warning", tc.name, asJSON, stderr)
			}
			if !asJSON {
				continue
			}
			var out struct {
				Diagnostics struct {
					Warnings []string `json:"warnings"`
				} `json:"diagnostics"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			w := out.Diagnostics.Warnings
			if len(w) == 0 || !strings.Contains(strings.Join(w, "\n"), tc.want) || !strings.Contains(stderr, w[0]) {
				t.Errorf("%s: diagnostics.warnings %q, stderr %q", tc.name, w, stderr)
			}
		}
	}
}

// TestInferNoLikelihood runs methods of every kind on a task with no
// factors: each answers (the prior), and each says so alike, on stderr
// and as the no_likelihood flag of the JSON answer (methods.Run raises
// it, not the methods).
func TestInferNoLikelihood(t *testing.T) {
	task := fdWrite(t, "prior.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,1],"scale":[1,2]},"factors":[]}`)
	for _, args := range [][]string{
		{"--method", "exact"},
		{"--method", "nuts", "--draws", "200", "--warmup", "100", "--chains", "2"},
		{"--method", "frvi", "--steps", "100", "--lr", "0.01", "--draws", "200"},
		{"--method", "frvi-snis", "--steps", "100", "--lr", "0.01", "--proposals", "200"},
		{"--method", "afin", "--draws", "200", "--checkpoint", filepath.Join("..", "..", "checkpoints", "small-gaussian")},
	} {
		t.Run(args[1], func(t *testing.T) {
			code, stdout, stderr := cliRun(t, append([]string{"infer", "--task", task, "--json"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, "afin infer: warning: "+methods.NoLikelihoodWarning) {
				t.Errorf("stderr %q lacks the no-likelihood warning", stderr)
			}
			var out struct {
				Diagnostics struct {
					NoLikelihood string `json:"no_likelihood"`
				} `json:"diagnostics"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			if out.Diagnostics.NoLikelihood != methods.NoLikelihoodWarning {
				t.Errorf("diagnostics.no_likelihood = %q, want %q", out.Diagnostics.NoLikelihood, methods.NoLikelihoodWarning)
			}
		})
	}
}
