package methods

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
)

// The flags reach `afin infer --json` as diagnostics fields.
func TestFlagsInDiagnosticsJSON(t *testing.T) {
	d := Diagnostics{Flags: &Flags{OutsideSupport: "d=16 > 8"}}
	d.Flags.Converged = NotConverged("x").Converged
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); !strings.Contains(s, `"outside_support":"d=16 \u003e 8"`) || !strings.Contains(s, `"converged":false`) {
		t.Errorf("diagnostics JSON %s lacks the flags", s)
	}
}

// AFIN on a task beyond the shipped checkpoint's training support (d=16,
// N=256 against d ≤ 8, N ≤ 64) marks every point it emits, and a task
// inside it is not marked.
func TestAFINMarksTasksOutsideSupport(t *testing.T) {
	env := &Env{Checkpoint: filepath.Join("..", "checkpoints", "small-gaussian")}
	tests := []struct {
		name    string
		d, n    int
		outside bool
	}{
		{"inside", 4, 32, false},
		{"d=16, N=256", 16, 256, true},
	}
	for _, name := range []string{"afin", "afin-snis"} {
		m, err := New(name, env)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests {
			task, err := factor.Simulate(rand.New(rand.NewPCG(1, 2)), factor.SimOptions{D: tc.d, N: tc.n,
				Prior: "diag_gaussian", Likelihoods: []string{"gaussian"}, Design: factor.DesignIID})
			if err != nil {
				t.Fatal(err)
			}
			job := &Job{Task: task, Seed: 1, Ladder: []int{100}, SkipProposal: true}
			err = m.Run(context.Background(), job, func(p Point) error {
				got := p.Diagnostics.Flags != nil && p.Diagnostics.Flags.OutsideSupport != ""
				if got != tc.outside {
					t.Errorf("%s on %s: outside flag %v, want %v (%+v)", name, tc.name, got, tc.outside, p.Diagnostics.Flags)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A task outside the ranges that a change of prior scale brings inside is
// answered on the rescaled task: not flagged, marked rescaled, and its
// moments are the rescaled answer mapped back exactly.
func TestAFINAnswersRescaledTask(t *testing.T) {
	dir := filepath.Join("..", "checkpoints", "small-gaussian")
	env := &Env{Checkpoint: dir}
	rng := rand.New(rand.NewPCG(3, 5))
	// Covariates in units 50 and 0.02 times their spread, the prior on
	// each coefficient scaled to match.
	sd := []float64{50, 0.02}
	task := &factor.Task{D: 2, Prior: &factor.DiagGaussian{Loc: []float64{0, 10}, Scale: []float64{0.5 / sd[0], 0.5 / sd[1]}}}
	for range 30 {
		x := []float64{sd[0] * rng.NormFloat64(), sd[1] * rng.NormFloat64()}
		task.Factors = append(task.Factors, &factor.LinGaussian{X: x, Y: 0.01*x[0] + 20*x[1] + 0.7*rng.NormFloat64(), Sigma: 0.7})
	}
	m, err := afin.Load(dir, afin.EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	outside, r, whyNot := m.Assess(task)
	if outside == "" || r == nil {
		t.Fatalf("outside %q, rescaled %v (%s)", outside, r != nil, whyNot)
	}
	gs, err := m.Forward([]*factor.Task{r.Task})
	if err != nil {
		t.Fatal(err)
	}
	wantMean, _, _ := r.Reparam.Gaussian(gs[0].Mean, nil, nil)
	meth, err := New("afin", env)
	if err != nil {
		t.Fatal(err)
	}
	job := &Job{Task: task, Seed: 1, Ladder: []int{200}}
	err = meth.Run(context.Background(), job, func(p Point) error {
		if p.Diagnostics.Flags != nil {
			t.Errorf("rescaled task flagged: %+v", p.Diagnostics.Flags)
		}
		if ad := p.Diagnostics.AFINDiagnostics; ad == nil || !ad.Rescaled || !strings.Contains(ad.Rescaling, "θ = ") {
			t.Errorf("diagnostics do not say the task was rescaled: %+v", ad)
		}
		for i := range wantMean {
			if math.Abs(p.Mean[i]-wantMean[i]) > 1e-9*math.Max(1, math.Abs(wantMean[i])) {
				t.Errorf("mean[%d] %v, want the rescaled answer mapped back %v", i, p.Mean[i], wantMean[i])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// With a flow decoder the draws of a rescaled task map back coordinate by
// coordinate: they are the flow's draws on the rescaled task, θ = a + s⊙θ′.
func TestAFINFlowRescaledDraws(t *testing.T) {
	dir := t.TempDir()
	net := arch.MustNew(arch.SmallConfig("flow"))
	net.Init(rand.New(rand.NewPCG(4, 4)))
	sup := checkpoint.FullSupport(1, 8, 1, 64)
	r, err := factor.TrainingRanges(sup.SimOptions())
	if err != nil {
		t.Fatal(err)
	}
	sup.Ranges = r
	if err := checkpoint.WriteInference(dir, checkpoint.Manifest{Support: sup, Weights: "ema", Source: "test"}, net); err != nil {
		t.Fatal(err)
	}
	task := &factor.Task{D: 2, Prior: &factor.DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{10, 10}}}
	rng := rand.New(rand.NewPCG(9, 9))
	for range 20 {
		x := []float64{0.05 * rng.NormFloat64(), 0.05 * rng.NormFloat64()}
		task.Factors = append(task.Factors, &factor.BernoulliLogit{X: x, Y: float64(rng.IntN(2))})
	}
	m, err := afin.Load(dir, afin.EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	_, res, whyNot := m.Assess(task)
	if res == nil {
		t.Fatalf("not rescaled: %s", whyNot)
	}
	const n = 50
	z, _, err := m.SampleFlow(res.Task, n, streams.New(1, streams.AFINLadder.At(0)))
	if err != nil {
		t.Fatal(err)
	}
	meth, err := New("afin", &Env{Checkpoint: dir})
	if err != nil {
		t.Fatal(err)
	}
	err = meth.Run(context.Background(), &Job{Task: task, Seed: 1, Ladder: []int{n}}, func(p Point) error {
		if p.Draws == nil || len(p.Draws.Z) != n*2 {
			t.Fatalf("draws %v", p.Draws)
		}
		for i, v := range p.Draws.Z {
			want := res.Reparam.Shift[i%2] + res.Reparam.Scale[i%2]*z[i]
			if math.Abs(v-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("draw coordinate %d: %v, want %v", i, v, want)
			}
		}
		if ad := p.Diagnostics.AFINDiagnostics; ad == nil || !ad.Rescaled {
			t.Errorf("not marked rescaled: %+v", ad)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// emitOne is a Method that emits one point with the given flags: Run's
// task-level flags must not depend on what a method does.
type emitOne struct{ flags *Flags }

func (emitOne) Name() string       { return "emit-one" }
func (emitOne) Kind() string       { return KindDraws }
func (emitOne) Slots([]int) []Slot { return nil }
func (m emitOne) Run(_ context.Context, _ *Job, emit func(Point) error) error {
	return emit(Point{Diagnostics: Diagnostics{Flags: m.flags}})
}

// TestRunNoLikelihood checks Run raises the no-likelihood flag, in words
// too, on a task without factors whatever flags the method raised, and
// not on a task with one.
func TestRunNoLikelihood(t *testing.T) {
	prior := &factor.DiagGaussian{Loc: []float64{0}, Scale: []float64{1}}
	withLik := &factor.Task{D: 1, Prior: prior, Factors: []factor.Likelihood{&factor.LinGaussian{X: []float64{1}, Y: 0.5, Sigma: 1}}}
	for _, tc := range []struct {
		name  string
		task  *factor.Task
		flags *Flags
		want  bool
	}{
		{"no factors, no flags", &factor.Task{D: 1, Prior: prior}, nil, true},
		{"no factors, other flags", &factor.Task{D: 1, Prior: prior}, &Flags{PoorFit: "k̂ 0.9"}, true},
		{"a factor", withLik, nil, false},
	} {
		var got Point
		if err := Run(context.Background(), emitOne{tc.flags}, &Job{Task: tc.task}, func(p Point) error { got = p; return nil }); err != nil {
			t.Fatal(err)
		}
		raised := got.Diagnostics.Flags.Raised()["no_likelihood"] != ""
		inWords := got.Diagnostics.Flags != nil && slices.Contains(got.Diagnostics.Flags.Warnings, NoLikelihoodWarning)
		if raised != tc.want || inWords != tc.want {
			t.Errorf("%s: raised %v, in warnings %v, want %v", tc.name, raised, inWords, tc.want)
		}
	}
}
