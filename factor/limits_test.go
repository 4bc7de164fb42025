package factor

import (
	"strings"
	"testing"
)

// extremeTask is a valid one-dimensional task with one field replaced.
func extremeTask(prior, factor string) string {
	if prior == "" {
		prior = `{"type":"diag_gaussian","loc":[0],"scale":[1]}`
	}
	if factor == "" {
		factor = `{"type":"lin_gaussian","x":[1],"y":0.5,"sigma":1}`
	}
	return `{"d":1,"prior":` + prior + `,"factors":[` + factor + `]}`
}

// Extreme but finite values: what no float64 computation carries is
// refused by ParseTask with one line naming the field (before, each of
// these ran with no warning and a meaningless answer, or failed after the
// forward pass); what is legal but far outside the tested range passes
// with a warning naming the field.
func TestExtremeValues(t *testing.T) {
	tests := []struct {
		name, json string
		err        string // "" when accepted
		warn       string // the warning an accepted task carries ("" none)
	}{
		{"precision 1e308", extremeTask(`{"type":"fullrank_gaussian","loc":[0],"precision":[[1e308]]}`, ""),
			"prior.precision[0][0]: must be finite with |value| ≤ 1e+300 (factor.MaxPrecision", ""},
		{"precision 1e-310", extremeTask(`{"type":"fullrank_gaussian","loc":[0],"precision":[[1e-310]]}`, ""),
			"prior.precision[0][0]: must be in [1e-300, 1e+300] (factor.MinPrecision, MaxPrecision", ""},
		{"y 1e300", extremeTask("", `{"type":"lin_gaussian","x":[1],"y":1e300,"sigma":1}`),
			"factors[0].y: must be finite with |value| ≤ 1e+150 (factor.MaxAbs", ""},
		{"gaussian y 1e300", extremeTask("", `{"type":"gaussian","y":[-1e300],"sigma":1}`),
			"factors[0].y[0]: must be finite with |value| ≤ 1e+150", ""},
		{"sigma 1e-300", extremeTask("", `{"type":"lin_gaussian","x":[1],"y":0.5,"sigma":1e-300}`),
			"factors[0].sigma: must be in [1e-150, 1e+150] (factor.MinScale, MaxScale", ""},
		{"sigma 1e300", extremeTask("", `{"type":"lin_gaussian","x":[1],"y":0.5,"sigma":1e300}`),
			"factors[0].sigma: must be in [1e-150, 1e+150]", ""},
		{"prior scale 1e-320", extremeTask(`{"type":"diag_gaussian","loc":[0],"scale":[1e-320]}`, ""),
			"prior.scale[0]: must be in [1e-150, 1e+150]", ""},
		{"laplace scale 1e-200", extremeTask(`{"type":"diag_laplace","loc":[0],"scale":[1e-200]}`, ""),
			"prior.scale[0]: must be in [1e-150, 1e+150]", ""},
		{"student-t df 1e-300", extremeTask(`{"type":"diag_student_t","loc":[0],"scale":[1],"df":1e-300}`, ""),
			"prior.df: must be in [1e-150, 1e+150]", ""},
		{"factor df 1e200", extremeTask("", `{"type":"lin_student_t","x":[1],"y":0.5,"sigma":1,"df":1e200}`),
			"factors[0].df: must be in [1e-150, 1e+150]", ""},
		{"x 1e300", extremeTask("", `{"type":"bernoulli_logit","x":[1e300],"y":1}`),
			"factors[0].x[0]: must be finite with |value| ≤ 1e+150", ""},
		{"loc -1e200", extremeTask(`{"type":"diag_gaussian","loc":[-1e200],"scale":[1]}`, ""),
			"prior.loc[0]: must be finite with |value| ≤ 1e+150", ""},
		{"true_z 1e160", `{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[],"true_z":[1e160]}`,
			"true_z[0]: must be finite with |value| ≤ 1e+150", ""},
		// Legal, far outside the tested range: warned.
		{"y 1e6", extremeTask("", `{"type":"lin_gaussian","x":[1],"y":1e6,"sigma":1}`),
			"", "factors[0].y = 1e+06 is far outside the range every method was tested on (|value| ≤ 10000"},
		{"x 1e100", extremeTask("", `{"type":"binomial_logit","x":[1e100],"y":1,"trials":3}`),
			"", "factors[0].x[0] = 1e+100 is far outside"},
		{"sigma 1e-100", extremeTask("", `{"type":"lin_gaussian","x":[1],"y":0.5,"sigma":1e-100}`),
			"", "factors[0].sigma = 1e-100 is far outside the range every method was tested on (scales in [0.0001, 10000]"},
		{"prior scale 1e-10", extremeTask(`{"type":"diag_student_t","loc":[0],"scale":[1e-10],"df":4}`, ""),
			"", "prior.scale[0] = 1e-10 is far outside"},
		{"df 0.01", extremeTask("", `{"type":"lin_student_t","x":[1],"y":0.5,"sigma":1,"df":0.01}`),
			"", "factors[0].df = 0.01 is far outside"},
		{"precision 1e200", extremeTask(`{"type":"fullrank_gaussian","loc":[0],"precision":[[1e200]]}`, ""),
			"", "prior.precision[0][0] = 1e+200 is far outside"},
		// At the edges: accepted, and inside the tested range no warning.
		{"y at MaxAbs", extremeTask("", `{"type":"lin_gaussian","x":[1],"y":1e150,"sigma":1}`), "", "factors[0].y = 1e+150"},
		{"sigma at MinScale", extremeTask("", `{"type":"lin_gaussian","x":[1],"y":0.5,"sigma":1e-150}`), "", "factors[0].sigma = 1e-150"},
		{"ordinary", extremeTask("", ""), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			task, err := ParseTask([]byte(tc.json))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("ParseTask: %v; want one line starting %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTask: %v", err)
			}
			w := task.Warnings()
			if tc.warn == "" {
				if len(w) != 0 {
					t.Errorf("warnings %q, want none", w)
				}
				return
			}
			if len(w) != 1 || !strings.HasPrefix(w[0], tc.warn) {
				t.Errorf("warnings %q, want one starting %q", w, tc.warn)
			}
		})
	}
}

// The paper's simulator stays inside the tested range: a bench run never
// warns.
func TestSimulatedTasksDoNotWarn(t *testing.T) {
	rng := newRNG(3)
	for i := range 300 {
		task, err := Simulate(rng, SimOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if w := task.Warnings(); len(w) > 0 {
			t.Fatalf("task %d: %q", i, w)
		}
	}
}
