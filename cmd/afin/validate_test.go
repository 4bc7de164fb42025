package main

import (
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
			`task JSON: invalid syntax at line 1, column 1: invalid character 'd' looking for beginning of value`},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			path := fdWrite(t, "task.json", tc.task)
			code, out, errs := cliRun(t, "infer", "--method", "exact", "--task", path)
			want := "afin infer: " + tc.msg + "\n"
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
