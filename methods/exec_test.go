package methods_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/afin-bench/afin/methods"
)

var (
	extOnce sync.Once
	extBin  string
	extErr  error
)

// buildExtExact builds the test's external method (testdata/extexact)
// once per test binary.
func buildExtExact(t *testing.T) string {
	t.Helper()
	extOnce.Do(func() {
		dir, err := os.MkdirTemp("", "afin-extexact-")
		if err != nil {
			extErr = err
			return
		}
		extBin = filepath.Join(dir, "extexact")
		out, err := exec.Command("go", "build", "-o", extBin, "./testdata/extexact").CombinedOutput()
		if err != nil {
			extErr = errors.New(string(out))
		}
	})
	if extErr != nil {
		t.Fatalf("building testdata/extexact: %v", extErr)
	}
	return extBin
}

// writeMethodsFile writes a methods file with one entry per mode of
// extexact, plus the given extra entries.
func writeMethodsFile(t *testing.T, bin string) string {
	t.Helper()
	entry := func(mode string, weighted bool, timeout string) methods.ExecSpec {
		return methods.ExecSpec{Command: []string{bin, "-mode", mode}, Weighted: weighted, Timeout: timeout}
	}
	mf := methods.MethodsFile{Methods: map[string]methods.ExecSpec{
		"exact":         entry("exact", false, "60s"),
		"crash":         entry("crash", false, ""),
		"hang":          entry("hang", false, "1s"),
		"garbage":       entry("garbage", false, ""),
		"wrongdim":      entry("wrongdim", false, ""),
		"undeclared-w":  entry("weighted", false, ""),
		"weighted":      entry("weighted", true, ""),
		"missing-w":     entry("exact", true, ""),
		"no-such-prog":  {Command: []string{"./does-not-exist"}},
		"placeholders":  {Command: []string{"/bin/sh", "-c", `AFIN_BUDGET={budget} AFIN_DRAWS_OUT={draws} exec "$0" -mode exact`, bin}},
		"budget-flag":   {Command: []string{"/bin/sh", "-c", `test "$1" = --n && AFIN_BUDGET="$2" exec "$0"`, bin}, BudgetFlag: "--n"},
		"steps-counted": {Command: []string{bin}, BudgetKind: methods.KindSteps},
	}}
	data, err := json.Marshal(mf)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "methods.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExecMatchesExact: an external method that draws from the exact
// posterior with exact's random stream returns exactly exact's draws, so
// everything downstream scores it like exact; its own seconds and
// diagnostics come through.
func TestExecMatchesExact(t *testing.T) {
	file := writeMethodsFile(t, buildExtExact(t))
	task, _ := conjugateTask(t)
	ladder := []int{50, 300}
	exact, err := methods.New("exact", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := run(t, exact, &methods.Job{Task: task, Seed: 11, Ladder: ladder})
	for _, name := range []string{"exec:exact", "exec:placeholders", "exec:budget-flag"} {
		t.Run(name, func(t *testing.T) {
			m, err := methods.New(name, &methods.Env{MethodsFile: file})
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, m, &methods.Job{Task: task, Seed: 11, Ladder: ladder})
			for slot, w := range want {
				g, ok := got[slot]
				if !ok {
					t.Fatalf("no point at %+v", slot)
				}
				if len(g.Draws.Z) != len(w.Draws.Z) || g.Draws.D != w.Draws.D || g.Draws.Weighted() {
					t.Fatalf("%+v: draws shape %d×%d", slot, g.Draws.Len(), g.Draws.D)
				}
				for i := range w.Draws.Z {
					if g.Draws.Z[i] != w.Draws.Z[i] {
						t.Fatalf("%+v: draw entry %d = %v, exact gives %v", slot, i, g.Draws.Z[i], w.Draws.Z[i])
					}
				}
				dg := g.Diagnostics.ExecDiagnostics
				if dg == nil || !(dg.WallSeconds > 0) {
					t.Fatalf("%+v: diagnostics %+v", slot, dg)
				}
				if name == "exec:exact" && (dg.ReportedSeconds == nil || g.Seconds != float64(*dg.ReportedSeconds) || float64(dg.Reported["ext_draws"]) != float64(slot.Budget)) {
					t.Errorf("%+v: reported seconds/diagnostics not used: %+v, seconds %v", slot, dg, g.Seconds)
				}
			}
		})
	}
}

// TestExecFailures: every way an external method can fail is an
// ErrExternal (or, for a broken configuration, ErrBadInput) naming the
// reason, and a hanging command is killed at its timeout (the error
// says so; were it not killed, the test would run into go test's
// -timeout: no clock is read here).
func TestExecFailures(t *testing.T) {
	file := writeMethodsFile(t, buildExtExact(t))
	task, _ := conjugateTask(t)
	cases := []struct {
		name, want string
		sentinel   error
	}{
		{"crash", "the sampler diverged at iteration 17", methods.ErrExternal},
		{"hang", "timed out after 1s", methods.ErrExternal},
		{"garbage", "draw CSV", methods.ErrExternal},
		{"wrongdim", "1 coordinates, the task has d = 4", methods.ErrExternal},
		{"undeclared-w", "does not say weighted", methods.ErrExternal},
		{"missing-w", "no w column", methods.ErrExternal},
		{"no-such-prog", "does-not-exist", methods.ErrExternal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := methods.New("exec:"+tc.name, &methods.Env{MethodsFile: file})
			if err != nil {
				t.Fatal(err)
			}
			err = m.Run(context.Background(), &methods.Job{Task: task, Seed: 1, Ladder: []int{20}}, func(methods.Point) error { return nil })
			if !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %v containing %q", err, tc.sentinel, tc.want)
			}
		})
	}
}

// TestExecWeightedAndKinds: declared weights are read and normalised, and
// an entry's budget kind is the method's.
func TestExecWeightedAndKinds(t *testing.T) {
	file := writeMethodsFile(t, buildExtExact(t))
	task, _ := conjugateTask(t)
	m, err := methods.New("exec:weighted", &methods.Env{MethodsFile: file})
	if err != nil {
		t.Fatal(err)
	}
	pts := run(t, m, &methods.Job{Task: task, Seed: 1, Ladder: []int{40}})
	for _, p := range pts {
		if !p.Draws.Weighted() || math.Abs(p.Draws.W[0]-1.0/40) > 1e-15 {
			t.Errorf("weights not normalised: %v", p.Draws.W[:3])
		}
	}
	m, err = methods.New("exec:steps-counted", &methods.Env{MethodsFile: file})
	if err != nil || m.Kind() != methods.KindSteps || m.Name() != "exec:steps-counted" {
		t.Errorf("steps-counted: %v kind %q", err, m.Kind())
	}
}

// TestExecBadConfig: a missing file, an unknown entry or a broken entry
// is bad input, reported when the method is built.
func TestExecBadConfig(t *testing.T) {
	dir := t.TempDir()
	n := 0
	write := func(body string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("methods-%d.json", n))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct{ name, file, method, want string }{
		{"no file", "", "exec:x", "no methods file"},
		{"unreadable", filepath.Join(dir, "absent.json"), "exec:x", "absent.json"},
		{"unknown key", write(`{"methods": {"x": {"command": ["a"], "comand": 1}}}`), "exec:x", "unknown field"},
		{"empty command", write(`{"methods": {"x": {"command": []}}}`), "exec:x", "methods.x.command"},
		{"bad kind", write(`{"methods": {"x": {"command": ["a"], "budget_kind": "hours"}}}`), "exec:x", "budget_kind"},
		{"bad timeout", write(`{"methods": {"x": {"command": ["a"], "timeout": "soon"}}}`), "exec:x", "timeout"},
		{"no entry", write(`{"methods": {"x": {"command": ["a"]}}}`), "exec:y", `has no method "y" (it has: x)`},
		{"no methods", write(`{"methods": {}}`), "exec:x", "no external methods"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := methods.New(tc.method, &methods.Env{MethodsFile: tc.file})
			if !errors.Is(err, methods.ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want bad input containing %q", err, tc.want)
			}
		})
	}
}
