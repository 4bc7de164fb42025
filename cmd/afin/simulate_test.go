package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// fdWrite writes content to a file in a fresh temp dir.
func fdWrite(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSimulateCLI(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		prior string
		fams  []string // families that must all appear, and nothing else
		d, n  int
	}{
		{"homogeneous", []string{"--prior", "diag_student_t", "--likelihood", "binomial_logit", "--d", "4", "--n", "30", "--seed", "3"},
			"diag_student_t", []string{"binomial_logit"}, 4, 30},
		{"heterogeneous", []string{"--prior", "fullrank_gaussian", "--likelihood", "lin_gaussian,gaussian,lin_student_t", "--d", "3", "--n", "12", "--design", "correlated"},
			"fullrank_gaussian", []string{"lin_gaussian", "gaussian", "lin_student_t"}, 3, 12},
		{"every design", []string{"--prior", "diag_laplace", "--likelihood", "bernoulli_logit", "--d", "2", "--n", "5", "--design", "student_t", "--kappa-max", "100"},
			"diag_laplace", []string{"bernoulli_logit"}, 2, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := cliRun(t, append([]string{"simulate"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			task, err := factor.ParseTask([]byte(out))
			if err != nil {
				t.Fatalf("output does not parse: %v", err)
			}
			if task.D != tc.d || task.N() != tc.n || task.Prior.Family() != tc.prior || len(task.TrueZ) != tc.d {
				t.Fatalf("got d=%d n=%d prior=%s true_z=%v", task.D, task.N(), task.Prior.Family(), task.TrueZ)
			}
			seen := map[string]bool{}
			for _, f := range task.Factors {
				seen[f.Family()] = true
				if !slices.Contains(tc.fams, f.Family()) {
					t.Errorf("unexpected family %s", f.Family())
				}
			}
			if len(seen) != len(tc.fams) {
				t.Errorf("families %v, want all of %v", seen, tc.fams)
			}
			// Same seed, same bytes.
			_, again, _ := cliRun(t, append([]string{"simulate"}, tc.args...)...)
			if again != out {
				t.Error("same flags gave different output")
			}
		})
	}
	_, a, _ := cliRun(t, "simulate", "--seed", "1")
	_, b, _ := cliRun(t, "simulate", "--seed", "2")
	if a == b || a == "" {
		t.Error("different seeds gave the same task")
	}
	if code, _, _ := cliRun(t, "simulate", "--help"); code != 0 {
		t.Errorf("--help exit %d", code)
	}
}

func TestSimulateCLIErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--prior", "cauchy"}, `unknown prior "cauchy" (valid: diag_gaussian, fullrank_gaussian, diag_student_t, diag_laplace)`},
		{[]string{"--likelihood", "lin_gaussian,poisson"}, `unknown likelihood "poisson" (valid: lin_gaussian, bernoulli_logit, binomial_logit, lin_student_t, gaussian)`},
		{[]string{"--likelihood", "gaussian,gaussian"}, `likelihood "gaussian" listed twice`},
		{[]string{"--design", "banded"}, `unknown design "banded" (valid: iid, diag_scale, correlated, student_t, mixture)`},
		{[]string{"--d", "0"}, "--d: must be ≥ 1, got 0"},
		{[]string{"--n", "-3"}, "--n: must be ≥ 1, got -3"},
		{[]string{"--likelihood", "gaussian,lin_gaussian,bernoulli_logit", "--n", "2"}, "--n: a heterogeneous task over 3 likelihoods needs n ≥ 3, got 2"},
		{[]string{"--kappa-max", "0.5"}, "kappa max must be a finite number ≥ 1, got 0.5"},
		{[]string{"--d", "x"}, `invalid value "x" for flag -d`},
		{[]string{"stray"}, `unexpected argument "stray"`},
		// Sizes the task JSON allows but that would exhaust memory.
		{[]string{"--d", "4097"}, "--d: must be ≤ 4096 (infer and reference refuse larger tasks), got 4097"},
		{[]string{"--d", "1", "--n", "2000000000"}, "--n: n·d must be ≤ 16777216 (design entries), got n=2000000000 with d up to 1"},
		{[]string{"--n", "2000000000"}, "--n: n·d must be ≤ 16777216 (design entries), got n=2000000000 with d up to 16"},
		{[]string{"--d", "4096", "--n", "4097"}, "got n=4097 with d up to 4096"},
	}
	for _, tc := range tests {
		code, out, errs := cliRun(t, append([]string{"simulate"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errs, tc.msg)
		}
	}
}

// TestSimulateInterrupted: a cancelled context (SIGTERM, Ctrl-C) stops
// a simulation in its design and prior stages with status 130 and no
// task on stdout (it used to run to the end, 347 s at d = 4096).
func TestSimulateInterrupted(t *testing.T) {
	for _, args := range [][]string{
		{"--design", "correlated", "--d", "40", "--n", "30", "--prior", "diag_gaussian"},
		{"--design", "student_t", "--d", "600", "--n", "20", "--prior", "diag_gaussian"},
		{"--design", "iid", "--d", "600", "--n", "2", "--prior", "fullrank_gaussian"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errb bytes.Buffer
		code := run(ctx, &cliEnv{stdout: &out, stderr: &errb}, append([]string{"simulate"}, args...))
		if code != 130 || out.Len() != 0 || !strings.Contains(errb.String(), "interrupted") {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want 130, nothing, \"interrupted\"", args, code, out.Len(), errb.String())
		}
	}
}

// simulate's usage line brackets every flag, as all are optional (what is
// left out is drawn as in training), and names every flag it has; with no
// flag at all it writes a valid task.
func TestSimulateUsageMarksOptionalFlags(t *testing.T) {
	code, _, errs := runCLI("simulate", "--help")
	usage, _, _ := strings.Cut(errs, "\n")
	if code != 0 || !strings.HasPrefix(usage, "usage: afin simulate ") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// The flags as --help lists them ("  -name type" lines).
	var names []string
	for _, line := range strings.Split(errs, "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "-"); ok && !strings.HasPrefix(line, "    ") {
			name, _, _ := strings.Cut(f, " ")
			names = append(names, name)
		}
	}
	if len(names) < 8 {
		t.Fatalf("read %d flags from --help: %q", len(names), errs)
	}
	for _, name := range names {
		if !strings.Contains(usage, "[--"+name+" ") && !strings.Contains(usage, "[--"+name+"]") {
			t.Errorf("usage %q does not show --%s as optional", usage, name)
		}
	}
	if outside := regexp.MustCompile(`\[[^\]]*\]`).ReplaceAllString(usage, ""); strings.Contains(outside, "--") {
		t.Errorf("usage %q has a flag outside brackets (shown as required)", usage)
	}
	code, out, errs := runCLI("simulate", "--seed", "3")
	if code != 0 {
		t.Fatalf("simulate with no family or size: exit %d, %q", code, errs)
	}
	if _, err := factor.ParseTask([]byte(out)); err != nil {
		t.Errorf("simulate with no family or size wrote an invalid task: %v", err)
	}
}
