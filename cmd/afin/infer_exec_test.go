package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInferExec drives `afin infer --method exec:NAME` in-process with
// /bin/sh commands standing in for external methods: a good one is run
// and reported like a built-in; configuration mistakes are bad input
// (exit 2, one line); a failing command exits 1 with its output's tail.
func TestInferExec(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[]}`)
	// Writes AFIN_BUDGET rows of (i, -i) and reports 0.5 s of its own.
	good := `printf 'z1,z2\n' > "$AFIN_DRAWS_OUT"; i=0; while [ $i -lt $AFIN_BUDGET ]; do echo "$i,-$i" >> "$AFIN_DRAWS_OUT"; i=$((i+1)); done; echo '{"seconds": 0.5}' > "$AFIN_DIAGNOSTICS_OUT"`
	file := fdWrite(t, "methods.json", mustJSON(t, map[string]any{"methods": map[string]any{
		"good":  map[string]any{"command": []string{"/bin/sh", "-c", good}},
		"fails": map[string]any{"command": []string{"/bin/sh", "-c", "echo cannot find my license server >&2; exit 4"}},
		"steps": map[string]any{"command": []string{"/bin/sh", "-c", good}, "budget_kind": "steps"},
	}}))
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"runs", []string{"--method", "exec:good", "--draws", "5", "--json"}, 0, ""},
		{"steps budget", []string{"--method", "exec:steps", "--steps", "4", "--json"}, 0, ""},
		{"wrong budget flag", []string{"--method", "exec:good", "--steps", "5"}, 2, "exec:good counts draws (methods file); --steps does not apply, use --draws"},
		{"unknown entry", []string{"--method", "exec:nope"}, 2, `has no method "nope" (it has: fails, good, steps)`},
		{"command fails", []string{"--method", "exec:fails", "--draws", "3"}, 1, "exit status 4; output tail: cannot find my license server"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"infer", "--task", task, "--methods-file", file}, tc.args...)
			code, out, errs := cliRun(t, args...)
			if code != tc.code || !strings.Contains(errs, tc.msg) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, tc.code, tc.msg)
			}
			if code != 0 {
				if strings.Count(strings.TrimSpace(errs), "\n") != 0 {
					t.Errorf("want one line on stderr, got %q", errs)
				}
				return
			}
			var res inferResult
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			if res.Seconds != 0.5 || res.D != 2 || res.NDraws < 4 || res.Diagnostics.ExecDiagnostics == nil {
				t.Errorf("result %+v", res)
			}
		})
	}
	// The library reads no environment: the CLI passes $AFIN_METHODS_FILE
	// down when --methods-file is absent, and the flag wins over it.
	t.Run("methods file from the environment", func(t *testing.T) {
		t.Setenv("AFIN_METHODS_FILE", file)
		if code, _, errs := cliRun(t, "infer", "--task", task, "--method", "exec:good", "--draws", "3"); code != 0 {
			t.Errorf("exit %d, stderr %q", code, errs)
		}
		t.Setenv("AFIN_METHODS_FILE", fdWrite(t, "other.json", `{"methods": {"x": {"command": ["true"]}}}`))
		if code, _, errs := cliRun(t, "infer", "--task", task, "--methods-file", file, "--method", "exec:good", "--draws", "3"); code != 0 {
			t.Errorf("flag over environment: exit %d, stderr %q", code, errs)
		}
	})
	t.Run("no methods file", func(t *testing.T) {
		t.Setenv("AFIN_METHODS_FILE", "")
		code, _, errs := cliRun(t, "infer", "--task", task, "--method", "exec:good")
		if code != 2 || !strings.Contains(errs, "no methods file (give --methods-file FILE or set AFIN_METHODS_FILE)") {
			t.Errorf("exit %d, stderr %q", code, errs)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
