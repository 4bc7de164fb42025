package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInferRejectsBadTasks feeds one bad task per validation rule of
// DESIGN.md to `afin infer` and checks exit status 2 and the one-line
// message naming the path, the rule and the value.
func TestInferRejectsBadTasks(t *testing.T) {
	const prior1 = `"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]}`
	tests := []struct {
		rule, task, msg string
	}{
		{"unknown type",
			`{"d":1,` + prior1 + `,"factors":[{"type":"poisson","x":[1],"y":2}]}`,
			`factors[0].type: must be one of lin_gaussian, bernoulli_logit, binomial_logit, lin_student_t, gaussian, got "poisson"`},
		{"unknown prior type",
			`{"d":1,"prior":{"type":"normal","loc":[0],"scale":[1]},"factors":[]}`,
			`prior.type: must be one of diag_gaussian, fullrank_gaussian, diag_student_t, diag_laplace, got "normal"`},
		{"wrong vector length",
			`{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[{"type":"gaussian","y":[1,2,3],"sigma":1}]}`,
			`factors[0].y: must have length d = 2, got length 3`},
		{"NaN/Inf",
			`{"d":1,` + prior1 + `,"factors":[{"type":"lin_gaussian","x":[-1e400],"y":0,"sigma":1}]}`,
			`factors[0].x[0]: must be finite, got -1e400`},
		{"non-positive sigma",
			`{"d":1,` + prior1 + `,"factors":[{"type":"lin_gaussian","x":[1],"y":0,"sigma":-1}]}`,
			`factors[0].sigma: must be > 0, got -1`},
		{"non-positive scale",
			`{"d":1,"prior":{"type":"diag_laplace","loc":[0],"scale":[-0.5]},"factors":[]}`,
			`prior.scale[0]: must be > 0, got -0.5`},
		{"non-positive df",
			`{"d":1,` + prior1 + `,"factors":[{"type":"lin_student_t","x":[1],"y":0,"sigma":1,"df":0}]}`,
			`factors[0].df: must be > 0, got 0`},
		{"non-positive trials",
			`{"d":1,` + prior1 + `,"factors":[{"type":"binomial_logit","x":[1],"y":0,"trials":-2}]}`,
			`factors[0].trials: must be an integer in [1, 1073741824], got -2`},
		{"y outside {0,1}",
			`{"d":1,` + prior1 + `,"factors":[{"type":"bernoulli_logit","x":[1],"y":0.5}]}`,
			`factors[0].y: must be 0 or 1, got 0.5`},
		{"y outside [0, trials]",
			`{"d":1,` + prior1 + `,"factors":[{"type":"binomial_logit","x":[1],"y":5,"trials":4}]}`,
			`factors[0].y: must be in [0, trials] = [0, 4], got 5`},
		{"non-integer count",
			`{"d":1,` + prior1 + `,"factors":[{"type":"binomial_logit","x":[1],"y":1.5,"trials":4}]}`,
			`factors[0].y: must be an integer count, got 1.5`},
		{"precision not symmetric",
			`{"d":2,"prior":{"type":"fullrank_gaussian","loc":[0,0],"precision":[[1,0.1],[0,1]]},"factors":[]}`,
			`prior.precision[1][0]: must be symmetric positive definite (equal to prior.precision[0][1] = 0.1), got 0`},
		{"precision not positive definite",
			`{"d":2,"prior":{"type":"fullrank_gaussian","loc":[0,0],"precision":[[-1,0],[0,1]]},"factors":[]}`,
			`prior.precision: must be symmetric positive definite, got a matrix whose leading 1×1 block is not positive definite`},
		{"d < 1",
			`{"d":-4,"prior":{"type":"diag_gaussian","loc":[],"scale":[]},"factors":[]}`,
			`d: must be an integer in [1, 65536], got -4`},
		{"missing field",
			`{"d":1,` + prior1 + `,"factors":[{"type":"binomial_logit","x":[1],"y":1}]}`,
			`factors[0].trials: missing required field for type binomial_logit`},
		{"missing prior",
			`{"d":1,"factors":[]}`,
			`prior: missing required field`},
		{"unknown field",
			`{"d":1,` + prior1 + `,"factors":[],"extra":1}`,
			`extra: unknown field (valid fields: name, d, prior, factors, true_z)`},
		{"true_z length",
			`{"d":1,` + prior1 + `,"factors":[],"true_z":[0,1]}`,
			`true_z: must have length d = 1, got length 2`},
		{"not JSON",
			`d=1`,
			`task file $PATH is not JSON (it starts "d=1"); --task wants a task JSON object, {"d": ..., "prior": {...}, "factors": [...]}, as ` + "`afin simulate`" + ` writes`},
		{"YAML",
			"d: 1\nprior: {type: diag_gaussian}\n",
			`task file $PATH is not JSON (it starts "d: 1"); --task wants a task JSON object, {"d": ..., "prior": {...}, "factors": [...]}, as ` + "`afin simulate`" + ` writes`},
		{"broken JSON",
			`{"d":1,`,
			`task file $PATH is not valid JSON: task JSON: unexpected end of input`},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			path := fdWrite(t, "task.json", tc.task)
			code, out, errs := cliRun(t, "infer", "--method", "exact", "--task", path)
			want := "afin infer: " + strings.ReplaceAll(tc.msg, "$PATH", path) + "\n"
			if code != 2 || out != "" || errs != want {
				t.Errorf("exit %d, stdout %q\nstderr %q\n  want %q", code, out, errs, want)
			}
		})
	}
	code, _, errs := cliRun(t, "infer", "--method", "exact", "--task", "/nonexistent/task.json")
	if code != 2 || errs == "" {
		t.Errorf("missing file: exit %d, %q", code, errs)
	}
}

// Extreme but finite task values at the CLI: what float64 cannot carry is
// refused before any work (exit 2, one line naming the field and quoting
// the limit), for a network method as for the exact posterior (x = 1e300
// used to fail only after AFIN's forward pass, with exit 1); what is
// legal but far outside the tested range runs, with a warning on stderr
// and task_warnings in the JSON.
func TestInferExtremeTaskValues(t *testing.T) {
	const prior1 = `"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]}`
	tests := []struct {
		name, method, task string
		code               int
		msg                string
	}{
		{"x 1e300, afin", "afin", `{"d":1,` + prior1 + `,"factors":[{"type":"bernoulli_logit","x":[1e300],"y":1}]}`, 2,
			"factors[0].x[0]: must be finite with |value| ≤ 1e+150 (factor.MaxAbs: its square must fit in float64), got 1e+300"},
		{"y 1e300", "exact", `{"d":1,` + prior1 + `,"factors":[{"type":"lin_gaussian","x":[1],"y":1e300,"sigma":1}]}`, 2,
			"factors[0].y: must be finite with |value| ≤ 1e+150"},
		{"sigma 1e-300", "exact", `{"d":1,` + prior1 + `,"factors":[{"type":"lin_gaussian","x":[1],"y":0,"sigma":1e-300}]}`, 2,
			"factors[0].sigma: must be in [1e-150, 1e+150]"},
		{"prior scale 1e-320", "exact", `{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1e-320]},"factors":[]}`, 2,
			"prior.scale[0]: must be in [1e-150, 1e+150]"},
		{"precision 1e308", "exact", `{"d":1,"prior":{"type":"fullrank_gaussian","loc":[0],"precision":[[1e308]]},"factors":[]}`, 2,
			"prior.precision[0][0]: must be finite with |value| ≤ 1e+300"},
		{"y 1e6, warned", "exact", `{"d":1,` + prior1 + `,"factors":[{"type":"lin_gaussian","x":[1],"y":1e6,"sigma":1}]}`, 0,
			"factors[0].y = 1e+06 is far outside the range every method was tested on"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := fdWrite(t, "task.json", tc.task)
			code, out, errs := cliRun(t, "infer", "--method", tc.method, "--task", path, "--json")
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %q\nstderr %q", code, tc.code, out, errs)
			}
			if tc.code == 2 {
				if out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "afin infer: "+tc.msg) {
					t.Errorf("stdout %q, stderr %q; want one line starting %q", out, errs, tc.msg)
				}
				return
			}
			if !strings.Contains(errs, "warning: task: "+tc.msg) {
				t.Errorf("stderr %q lacks the warning %q", errs, tc.msg)
			}
			var res struct {
				Diagnostics struct {
					TaskWarnings []string `json:"task_warnings"`
				} `json:"diagnostics"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Diagnostics.TaskWarnings) != 1 || !strings.HasPrefix(res.Diagnostics.TaskWarnings[0], tc.msg) {
				t.Errorf("JSON task_warnings %q (%v), want one starting %q", res.Diagnostics.TaskWarnings, err, tc.msg)
			}
		})
	}
}
