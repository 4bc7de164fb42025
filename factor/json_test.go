package factor

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// validTaskJSON has every prior field and every factor type once.
const validTaskJSON = `{
  "name": "all families",
  "d": 3,
  "prior": {"type": "diag_gaussian", "loc": [0, 0, 0], "scale": [1, 1, 1]},
  "factors": [
    {"type": "lin_gaussian",    "x": [0.1, -0.2, 0.3], "y": 0.7, "sigma": 0.5},
    {"type": "lin_student_t",   "x": [0.1, -0.2, 0.3], "y": 0.7, "sigma": 0.5, "df": 4},
    {"type": "bernoulli_logit", "x": [0.1, -0.2, 0.3], "y": 1},
    {"type": "binomial_logit",  "x": [0.1, -0.2, 0.3], "y": 3, "trials": 8},
    {"type": "gaussian",        "y": [0.2, 0.1, -0.4], "sigma": 0.5}
  ],
  "true_z": [0.1, 0.2, 0.3]
}`

// BadTaskCases lists one bad task per validation rule with the exact
// message ParseTask must give. The CLI tests reuse the same inputs.
var badTaskCases = []struct {
	name, json, msg string
}{
	{"unknown factor type",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"poisson","x":[1],"y":2}]}`,
		`factors[0].type: must be one of lin_gaussian, bernoulli_logit, binomial_logit, lin_student_t, gaussian, got "poisson"`},
	{"unknown prior type",
		`{"d":1,"prior":{"type":"cauchy","loc":[0],"scale":[1]},"factors":[]}`,
		`prior.type: must be one of diag_gaussian, fullrank_gaussian, diag_student_t, diag_laplace, got "cauchy"`},
	{"wrong vector length",
		`{"d":3,"prior":{"type":"diag_gaussian","loc":[0,0,0],"scale":[1,1,1]},"factors":[{"type":"lin_gaussian","x":[1,2],"y":0,"sigma":1}]}`,
		`factors[0].x: must have length d = 3, got length 2`},
	{"wrong loc length",
		`{"d":2,"prior":{"type":"diag_laplace","loc":[0],"scale":[1,1]},"factors":[]}`,
		`prior.loc: must have length d = 2, got length 1`},
	{"wrong true_z length",
		`{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[],"true_z":[1]}`,
		`true_z: must have length d = 2, got length 1`},
	{"infinite number",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[1e999],"scale":[1]},"factors":[]}`,
		`prior.loc[0]: must be finite, got 1e999`},
	{"NaN literal",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[NaN],"scale":[1]},"factors":[]}`,
		`task JSON: invalid syntax at line 1, column 47: invalid character 'N' looking for beginning of value`},
	{"NaN as string",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"lin_gaussian","x":[1],"y":"NaN","sigma":1}]}`,
		`factors[0].y: must be a number, got "NaN"`},
	{"non-positive sigma",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"lin_gaussian","x":[1],"y":0,"sigma":-1}]}`,
		`factors[0].sigma: must be > 0, got -1`},
	{"non-positive scale",
		`{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,0]},"factors":[]}`,
		`prior.scale[1]: must be > 0, got 0`},
	{"non-positive prior df",
		`{"d":1,"prior":{"type":"diag_student_t","loc":[0],"scale":[1],"df":0},"factors":[]}`,
		`prior.df: must be > 0, got 0`},
	{"non-positive factor df",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"lin_student_t","x":[1],"y":0,"sigma":1,"df":-3}]}`,
		`factors[0].df: must be > 0, got -3`},
	{"non-positive gaussian sigma",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"gaussian","y":[0],"sigma":0}]}`,
		`factors[0].sigma: must be > 0, got 0`},
	{"non-positive trials",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"binomial_logit","x":[1],"y":0,"trials":0}]}`,
		`factors[0].trials: must be an integer in [1, 1073741824], got 0`},
	{"bernoulli y outside {0,1}",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"bernoulli_logit","x":[1],"y":2}]}`,
		`factors[0].y: must be 0 or 1, got 2`},
	{"laplace scale not positive",
		`{"d":2,"prior":{"type":"diag_laplace","loc":[0,0],"scale":[1,-1]},"factors":[]}`,
		`prior.scale[1]: must be > 0, got -1`},
	{"student-t prior scale not positive",
		`{"d":1,"prior":{"type":"diag_student_t","loc":[0],"scale":[0],"df":4},"factors":[]}`,
		`prior.scale[0]: must be > 0, got 0`},
	{"bernoulli y between 0 and 1",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"bernoulli_logit","x":[1],"y":0.5}]}`,
		`factors[0].y: must be 0 or 1, got 0.5`},
	{"binomial y above trials",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"binomial_logit","x":[1],"y":9,"trials":8}]}`,
		`factors[0].y: must be in [0, trials] = [0, 8], got 9`},
	{"binomial y negative",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"binomial_logit","x":[1],"y":-1,"trials":8}]}`,
		`factors[0].y: must be in [0, trials] = [0, 8], got -1`},
	{"non-integer count",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"binomial_logit","x":[1],"y":2.5,"trials":8}]}`,
		`factors[0].y: must be an integer count, got 2.5`},
	{"non-integer trials",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"binomial_logit","x":[1],"y":2,"trials":8.5}]}`,
		`factors[0].trials: must be an integer in [1, 1073741824], got 8.5`},
	{"precision not symmetric",
		`{"d":2,"prior":{"type":"fullrank_gaussian","loc":[0,0],"precision":[[2,0.5],[0.4,2]]},"factors":[]}`,
		`prior.precision[1][0]: must be symmetric positive definite (equal to prior.precision[0][1] = 0.5), got 0.4`},
	{"precision not positive definite",
		`{"d":2,"prior":{"type":"fullrank_gaussian","loc":[0,0],"precision":[[1,2],[2,1]]},"factors":[]}`,
		`prior.precision: must be symmetric positive definite, got a matrix whose leading 2×2 block is not positive definite`},
	{"precision wrong shape",
		`{"d":2,"prior":{"type":"fullrank_gaussian","loc":[0,0],"precision":[[1,0]]},"factors":[]}`,
		`prior.precision: must have d = 2 rows, got 1 rows`},
	{"d zero",
		`{"d":0,"prior":{"type":"diag_gaussian","loc":[],"scale":[]},"factors":[]}`,
		`d: must be an integer in [1, 65536], got 0`},
	{"d fractional",
		`{"d":1.5,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[]}`,
		`d: must be an integer in [1, 65536], got 1.5`},
	{"missing d",
		`{"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[]}`,
		`d: missing required field`},
	{"missing factors",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]}}`,
		`factors: missing required field`},
	{"missing sigma",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"lin_gaussian","x":[1],"y":0}]}`,
		`factors[0].sigma: missing required field for type lin_gaussian`},
	{"missing factor type",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"x":[1],"y":0}]}`,
		`factors[0].type: missing required field (one of lin_gaussian, bernoulli_logit, binomial_logit, lin_student_t, gaussian)`},
	{"unknown field",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[{"type":"bernoulli_logit","x":[1],"y":0,"sigma":1}]}`,
		`factors[0].sigma: unknown field for type bernoulli_logit (valid fields: type, x, y)`},
	{"unknown top-level field",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[],"truez":[0]}`,
		`truez: unknown field (valid fields: name, d, prior, factors, true_z)`},
	{"duplicate field",
		`{"d":1,"d":2,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[]}`,
		`d: duplicate field`},
	{"wrong type for vector",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":0,"scale":[1]},"factors":[]}`,
		`prior.loc: must be an array of 1 numbers, got 0`},
	{"not an object",
		`[1,2]`,
		`task: must be a JSON object, got an array of length 2`},
	{"trailing data",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[]} {}`,
		`task JSON: unexpected data after the task object at line 1, column 77`},
	{"truncated",
		`{"d":1,"prior":{"type":"diag_gaussian"`,
		`task JSON: unexpected end of input`},
	{"null factor",
		`{"d":1,"prior":{"type":"diag_gaussian","loc":[0],"scale":[1]},"factors":[null]}`,
		`factors[0]: must be an object, got null`},
}

func TestParseTaskErrors(t *testing.T) {
	for _, tc := range badTaskCases {
		t.Run(tc.name, func(t *testing.T) {
			task, err := ParseTask([]byte(tc.json))
			if err == nil {
				t.Fatalf("parsed a bad task: %+v", task)
			}
			if err.Error() != tc.msg {
				t.Errorf("error\n got: %s\nwant: %s", err, tc.msg)
			}
		})
	}
}

func TestParseTaskValid(t *testing.T) {
	task, err := ParseTask([]byte(validTaskJSON))
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "all families" || task.D != 3 || task.N() != 5 {
		t.Fatalf("parsed %+v", task)
	}
	want := []string{LinGaussianFamily, LinStudentTFamily, BernoulliLogitFamily, BinomialLogitFamily, GaussianFamily}
	for i, f := range task.Factors {
		if f.Family() != want[i] {
			t.Errorf("factor %d family %s, want %s", i, f.Family(), want[i])
		}
	}
	b := task.Factors[3].(*BinomialLogit)
	if b.Trials != 8 || b.Y != 3 {
		t.Errorf("binomial parsed as %+v", b)
	}
	// A fullrank prior parses into a usable prior (normaliser from its
	// Cholesky factor): log N(0; 0, Λ⁻¹) = ½ log det Λ − log 2π for d = 2.
	fr, err := ParseTask([]byte(`{"d":2,"prior":{"type":"fullrank_gaussian","loc":[0,0],"precision":[[2,0.5],[0.5,1]]},"factors":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	want0 := 0.5*math.Log(2*1-0.25) - math.Log(2*math.Pi)
	if got := fr.LogJoint([]float64{0, 0}); math.Abs(got-want0) > 1e-12 {
		t.Errorf("fullrank log density at loc %g, want %g", got, want0)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	tasks := []*Task{}
	parsed, err := ParseTask([]byte(validTaskJSON))
	if err != nil {
		t.Fatal(err)
	}
	tasks = append(tasks, parsed)
	rng := newRNG(20)
	for _, prior := range PriorFamilies {
		for _, lik := range LikelihoodFamilies {
			task, err := Simulate(rng, SimOptions{D: 3, N: 4, Prior: prior, Likelihoods: []string{lik}})
			if err != nil {
				t.Fatal(err)
			}
			tasks = append(tasks, task)
		}
	}
	het, _ := Simulate(rng, SimOptions{D: 5, N: 30, Likelihoods: LikelihoodFamilies})
	het.Name = "heterogeneous \"quoted\" ✓"
	tasks = append(tasks, het)
	for i, task := range tasks {
		data, err := MarshalTask(task)
		if err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
		back, err := ParseTask(data)
		if err != nil {
			t.Fatalf("task %d: re-parse: %v\n%s", i, err, data)
		}
		if !reflect.DeepEqual(task, back) {
			t.Errorf("task %d: round trip differs\n%s", i, data)
		}
		z := task.TrueZ
		if z != nil && task.LogJoint(z) != back.LogJoint(z) {
			t.Errorf("task %d: log joint changed in the round trip", i)
		}
	}
}

func TestMarshalRejectsInvalid(t *testing.T) {
	task, _ := ParseTask([]byte(validTaskJSON))
	task.Factors[0].(*LinGaussian).Sigma = math.NaN()
	_, err := MarshalTask(task)
	if err == nil || !strings.Contains(err.Error(), "factors[0].sigma: must be finite, got NaN") {
		t.Errorf("MarshalTask of NaN sigma: %v", err)
	}
}

// TestValidateStructs covers rules only reachable from Go values (the
// JSON reader catches the others first).
func TestValidateStructs(t *testing.T) {
	good := func() *Task {
		task, _ := ParseTask([]byte(validTaskJSON))
		return task
	}
	tests := []struct {
		name   string
		mutate func(*Task)
		msg    string
	}{
		{"nil prior", func(t *Task) { t.Prior = nil }, "prior: is required, got nothing"},
		{"typed nil factor", func(t *Task) { t.Factors[1] = (*LinStudentT)(nil) }, "factors[1]: must be a factor object, got null"},
		{"d zero", func(t *Task) { t.D = 0 }, "d: must be an integer in [1, 65536], got 0"},
		{"d beyond MaxDim", func(t *Task) { t.D = MaxDim + 1 }, "d: must be an integer in [1, 65536], got 65537"},
		{"inf x", func(t *Task) { t.Factors[2].(*BernoulliLogit).X[1] = math.Inf(-1) }, "factors[2].x[1]: must be finite, got -Inf"},
		{"NaN true z", func(t *Task) { t.TrueZ[2] = math.NaN() }, "true_z[2]: must be finite, got NaN"},
		{"fullrank literal without Cholesky", func(t *Task) {
			t.Prior = &FullRankGaussian{Loc: []float64{0, 0, 0}, Precision: []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}}
		}, "prior: a fullrank_gaussian prior must be built with NewFullRankGaussian, got one without its Cholesky factor"},
		{"NaN precision", func(t *Task) {
			p, _ := NewFullRankGaussian([]float64{0, 0, 0}, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1})
			p.Precision[4] = math.NaN()
			t.Prior = p
		}, "prior.precision[1][1]: must be finite, got NaN"},
	}
	for _, tc := range tests {
		task := good()
		tc.mutate(task)
		err := task.Validate()
		if err == nil || err.Error() != tc.msg {
			t.Errorf("%s: Validate() = %v, want %s", tc.name, err, tc.msg)
		}
	}
	if err := good().Validate(); err != nil {
		t.Errorf("valid task: %v", err)
	}
	var nilTask *Task
	if err := nilTask.Validate(); err == nil {
		t.Error("nil task validated")
	}
}

// FuzzParseTask: the reader never panics, and whatever it accepts writes
// back and re-reads to an equal task.
func FuzzParseTask(f *testing.F) {
	f.Add([]byte(validTaskJSON))
	for _, tc := range badTaskCases {
		f.Add([]byte(tc.json))
	}
	rng := newRNG(30)
	for _, prior := range PriorFamilies {
		task, _ := Simulate(rng, SimOptions{D: 2, N: 3, Prior: prior, Likelihoods: LikelihoodFamilies[:3]})
		data, _ := MarshalTask(task)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := ParseTask(data)
		if err != nil {
			if task != nil {
				t.Fatal("non-nil task with an error")
			}
			return
		}
		out, err := MarshalTask(task)
		if err != nil {
			t.Fatalf("parsed task does not marshal: %v", err)
		}
		back, err := ParseTask(out)
		if err != nil {
			t.Fatalf("marshalled task does not re-parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(task, back) {
			t.Fatalf("round trip differs:\n%s", out)
		}
	})
}
