package methods_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/bench"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/factor/factortest"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
)

// conjugateTask is a diag_gaussian/lin_gaussian task: its exact
// posterior is known.
func conjugateTask(t *testing.T) (*factor.Task, []float64) {
	t.Helper()
	s := bench.Setting{Suite: "synthetic", Key: "diag_gaussian/lin_gaussian/medium", Prior: factor.DiagGaussianFamily,
		Likelihood: factor.LinGaussianFamily, D: 4, N: 32, Design: "iid"}
	task, err := bench.SimTask(s, 3)
	if err != nil {
		t.Fatal(err)
	}
	mean, _, err := factor.ExactPosterior(task)
	if err != nil {
		t.Fatal(err)
	}
	return task, mean
}

func testOptions() methods.Options {
	o := methods.DefaultOptions()
	o.NUTS.Warmup, o.NUTS.Chains = 300, 1
	o.VI = methods.VIOptions{LRs: []float64{1e-3, 1e-2}, Selection: vi.SelectELBO, MCSamples: 4, Draws: 4000}
	o.Flow.Layers, o.Flow.Hidden = 2, 16
	o.FRVISteps = 500
	return o
}

// run runs a method and collects its points by slot, checking it emits
// exactly its slots.
func run(t *testing.T, m methods.Method, job *methods.Job) map[methods.Slot]methods.Point {
	t.Helper()
	got := map[methods.Slot]methods.Point{}
	err := m.Run(context.Background(), job, func(p methods.Point) error {
		if _, dup := got[p.Slot]; dup {
			t.Errorf("%s emitted %+v twice", m.Name(), p.Slot)
		}
		got[p.Slot] = p
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", m.Name(), err)
	}
	if len(got) != len(m.Slots(job.Ladder)) {
		t.Fatalf("%s emitted %d points for %d slots", m.Name(), len(got), len(m.Slots(job.Ladder)))
	}
	return got
}

// Every method lands close to the exact posterior of a conjugate task at
// its largest budget, and its seconds follow the timing rule of the
// package doc.
func TestMethodsAgainstExactPosterior(t *testing.T) {
	task, exact := conjugateTask(t)
	tests := []struct {
		name   string
		ladder []int
		tol    float64 // on M1
		// parts are the diagnostics whose sum is seconds (nil: seconds
		// is a single clock, only checked positive).
		parts func(methods.Diagnostics) []float64
	}{
		{"exact", []int{0, 4000}, 0.05, nil},
		{"nuts", []int{100, 2000}, 0.1, nil},
		{"frvi", []int{30, 2000}, 0.1, viParts},
		{"frvi-snis", []int{200, 4000}, 0.1, nil},
		{"iaf", []int{50, 1500}, 0.2, viParts},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := methods.New(tc.name, &methods.Env{})
			if err != nil {
				t.Fatal(err)
			}
			pts := run(t, m, &methods.Job{Task: task, Seed: 11, Ladder: tc.ladder, Options: testOptions()})
			last := pts[methods.Slot{Kind: m.Kind(), Budget: tc.ladder[len(tc.ladder)-1]}]
			if last.Draws == nil {
				t.Fatal("no draws at the largest budget")
			}
			if m1 := floats.Distance(last.Draws.Mean(), exact, 2); m1 > tc.tol {
				t.Errorf("M1 %.4f against the exact posterior", m1)
			}
			for _, p := range pts {
				if !(p.Seconds > 0) {
					t.Errorf("%+v: seconds %v", p.Slot, p.Seconds)
				}
				if tc.parts != nil && p.Stage == "" {
					var sum float64
					for _, v := range tc.parts(p.Diagnostics) {
						sum += v
					}
					if math.Abs(p.Seconds-sum) > 1e-9 {
						t.Errorf("%+v: seconds %.6g, parts sum to %.6g", p.Slot, p.Seconds, sum)
					}
				}
			}
		})
	}
}

// viParts are the charged parts of a VI point's seconds: the protocol's
// start, the chosen rate's optimisation and drawing; the convergence
// checks (check_seconds) are not among them.
func viParts(d methods.Diagnostics) []float64 {
	return []float64{float64(d.StartSeconds), float64(d.OptimizeSeconds), float64(d.SampleSeconds)}
}

// The VI adapters run either protocol, label their points with it and
// carry the convergence verdict: a fit the checks pass on a conjugate
// task, and one they must flag (the paper's start, a rate far too small
// for the budget: the ELBO is still rising and the moments are off).
func TestVIProtocols(t *testing.T) {
	task, _ := conjugateTask(t)
	tests := []struct {
		method    string
		protocol  vi.Protocol
		lrs       []float64
		steps     int
		converged bool
		start     string
	}{
		{"frvi", vi.ProtocolPractitioner, nil, 2000, true, "laplace"},
		{"frvi", vi.ProtocolPaper, []float64{1e-6}, 200, false, "prior"},
		{"iaf", vi.ProtocolPractitioner, []float64{1e-3}, 1000, true, "laplace"},
		{"iaf", vi.ProtocolPaper, []float64{1e-6}, 200, false, "prior"},
	}
	for _, tc := range tests {
		t.Run(tc.method+"/"+string(tc.protocol), func(t *testing.T) {
			o := testOptions()
			o.VI.Protocol, o.VI.LRs = tc.protocol, tc.lrs
			m, err := methods.New(tc.method, &methods.Env{})
			if err != nil {
				t.Fatal(err)
			}
			pts := run(t, m, &methods.Job{Task: task, Seed: 5, Ladder: []int{tc.steps}, Options: o})
			p := pts[methods.Slot{Kind: methods.KindSteps, Budget: tc.steps}]
			dg := p.Diagnostics
			if dg.VIDiagnostics == nil || dg.Flags == nil || dg.Converged == nil {
				t.Fatalf("diagnostics without the VI part or the verdict: %+v", dg)
			}
			if dg.Protocol != string(tc.protocol) || p.Settings.Protocol != string(tc.protocol) || dg.Start != tc.start {
				t.Errorf("protocol %q, settings %q, start %q; want %q, %q", dg.Protocol, p.Settings.Protocol, dg.Start, tc.protocol, tc.start)
			}
			if *dg.Converged != tc.converged || (dg.ConvergenceReason == "") == !tc.converged {
				t.Errorf("converged %v (%q), want %v", *dg.Converged, dg.ConvergenceReason, tc.converged)
			}
			if !(dg.CheckSeconds > 0) {
				t.Errorf("check seconds %v", dg.CheckSeconds)
			}
			var sum float64
			for _, v := range viParts(dg) {
				sum += v
			}
			if math.Abs(p.Seconds-sum) > 1e-9 {
				t.Errorf("seconds %.6g, charged parts %.6g", p.Seconds, sum)
			}
		})
	}
}

// The AFIN adapters on the shipped checkpoint: single-shot draws follow
// the network's Gaussian and carry its closed-form moments; SNIS points
// are weighted with diagnostics, the star is the largest point's proposals
// unweighted; and
// seconds are forward + sampling (+ SNIS), compilation excluded.
func TestAFINAdapters(t *testing.T) {
	env := &methods.Env{}
	a, err := methods.New("afin", env)
	if errors.Is(err, methods.ErrUnavailable) {
		t.Fatal(err) // the checkpoint ships with the module
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := methods.New("afin-snis", env)
	if err != nil {
		t.Fatal(err)
	}
	ha, hb := a.(methods.Provenancer).CheckpointHash(), b.(methods.Provenancer).CheckpointHash()
	if len(ha) != 64 || ha != hb {
		t.Fatalf("checkpoint hashes %q and %q", ha, hb)
	}
	task, _ := conjugateTask(t)
	single := run(t, a, &methods.Job{Task: task, Seed: 3, Ladder: []int{20000}})[methods.Slot{Kind: methods.KindDraws, Budget: 20000}]
	mu, c := single.Draws.Mean(), single.Draws.Cov()
	d := task.D
	for i := range d {
		sd := math.Sqrt(single.Cov[i*d+i])
		if math.Abs(mu[i]-single.Mean[i]) > 5*sd/math.Sqrt(20000) || math.Abs(c[i*d+i]/single.Cov[i*d+i]-1) > 0.05 {
			t.Fatalf("coordinate %d: draws mean %.4f var %.4f, network %.4f %.4f", i, mu[i], c[i*d+i], single.Mean[i], single.Cov[i*d+i])
		}
	}
	ad := single.Diagnostics.AFINDiagnostics
	if got := float64(ad.ForwardSeconds + ad.SamplingSeconds); !(ad.ForwardSeconds > 0) || math.Abs(single.Seconds-got) > 1e-9 {
		t.Errorf("seconds %v, forward + sampling %v", single.Seconds, got)
	}
	pts := run(t, b, &methods.Job{Task: task, Seed: 3, Ladder: []int{100, 1000}})
	star := pts[methods.Slot{Stage: methods.StageProposal, Kind: methods.KindProposals, Budget: 1000}]
	if star.Draws.Weighted() || star.Draws.Len() != 1000 {
		t.Error("the proposal star must be 1000 unweighted proposal draws")
	}
	// The star is the largest point's proposals, unweighted: the two
	// differ by the weights alone.
	if top := pts[methods.Slot{Kind: methods.KindProposals, Budget: 1000}]; !slices.Equal(star.Draws.Z, top.Draws.Z) || star.Twin != top.Draws {
		t.Error("the star's draws are not the 1000-proposal point's, or it does not name that point's draws as its twin")
	}
	for _, n := range []int{100, 1000} {
		pt := pts[methods.Slot{Kind: methods.KindProposals, Budget: n}]
		sd := pt.Diagnostics.SNISDiagnostics
		if !pt.Draws.Weighted() || pt.Draws.Len() != n || sd == nil || sd.Proposals != n {
			t.Fatalf("SNIS at %d: weighted %v, %d draws, diagnostics %+v", n, pt.Draws.Weighted(), pt.Draws.Len(), sd)
		}
		ad := pt.Diagnostics.AFINDiagnostics
		if want := float64(ad.ForwardSeconds + ad.SamplingSeconds + sd.SNISSeconds); math.Abs(pt.Seconds-want) > 1e-9 {
			t.Errorf("SNIS at %d: seconds %v, forward + sampling + snis %v", n, pt.Seconds, want)
		}
	}
}

// Options and budgets outside their domain are ErrBadInput, the exact
// method on a non-conjugate task ErrNotConjugate, an unknown method
// ErrBadInput; nothing is silently replaced by a default.
func TestSentinelErrors(t *testing.T) {
	task, _ := conjugateTask(t)
	nonConj, err := factor.ParseTask([]byte(`{"d":1,"prior":{"type":"diag_laplace","loc":[0],"scale":[1]},"factors":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	mod := func(f func(*methods.Options)) methods.Options {
		o := testOptions()
		f(&o)
		return o
	}
	tests := []struct {
		name, method string
		task         *factor.Task
		ladder       []int
		opts         methods.Options
		is           error
	}{
		{"exact on a non-conjugate task", "exact", nonConj, []int{10}, testOptions(), methods.ErrNotConjugate},
		{"negative draws", "exact", task, []int{-1}, testOptions(), methods.ErrBadInput},
		{"empty ladder", "nuts", task, nil, testOptions(), methods.ErrBadInput},
		{"decreasing ladder", "nuts", task, []int{200, 100}, testOptions(), methods.ErrBadInput},
		{"draws not a multiple of chains", "nuts", task, []int{101}, mod(func(o *methods.Options) { o.NUTS.Chains = 2 }), methods.ErrBadInput},
		{"zero max depth", "nuts", task, []int{100}, mod(func(o *methods.Options) { o.NUTS.MaxDepth = 0 }), methods.ErrBadInput},
		{"no learning rates", "frvi", task, []int{10}, mod(func(o *methods.Options) { o.VI.LRs = []float64{} }), methods.ErrBadInput},
		{"unknown protocol", "iaf", task, []int{10}, mod(func(o *methods.Options) { o.VI.Protocol = "careful" }), methods.ErrBadInput},
		{"oracle without a reference", "frvi", task, []int{10}, mod(func(o *methods.Options) { o.VI.Selection = vi.SelectOracle }), methods.ErrBadInput},
		{"zero Monte Carlo draws", "frvi-snis", task, []int{10}, mod(func(o *methods.Options) { o.VI.MCSamples = 0 }), methods.ErrBadInput},
		{"one proposal", "frvi-snis", task, []int{1}, testOptions(), methods.ErrBadInput},
		{"zero flow layers", "maf", task, []int{10}, mod(func(o *methods.Options) { o.Flow.Layers = 0 }), methods.ErrBadInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := methods.New(tc.method, &methods.Env{})
			if err != nil {
				t.Fatal(err)
			}
			err = m.Run(context.Background(), &methods.Job{Task: tc.task, Ladder: tc.ladder, Options: tc.opts}, func(methods.Point) error { return nil })
			if !errors.Is(err, tc.is) {
				t.Errorf("got %v, want %v", err, tc.is)
			}
		})
	}
	if _, err := methods.New("hmc", &methods.Env{}); !errors.Is(err, methods.ErrBadInput) {
		t.Errorf("unknown method: %v", err)
	}
	if _, err := methods.New("afin", &methods.Env{Checkpoint: t.TempDir()}); !errors.Is(err, methods.ErrUnavailable) {
		t.Errorf("missing checkpoint: %v", err)
	}
}

// Diagnostics keep non-finite numbers as themselves for records (an
// infinite k̂ stays +Inf, not NaN) and leave out the parts a method does
// not fill.
func TestDiagnosticsNumbers(t *testing.T) {
	info := posterior.SNISInfo{ParetoK: math.Inf(1), MaxWeight: 0.5, EntropyRatio: 0.9, ESS: 2}
	d := methods.Diagnostics{SNISDiagnostics: methods.NewSNISDiagnosticsForTest(10, info, 0.1)}
	nums, err := d.Numbers()
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(nums["pareto_k"], 1) || nums["max_weight"] != 0.5 || nums["proposals"] != 10 {
		t.Errorf("numbers %v", nums)
	}
	if _, ok := nums["divergences"]; ok {
		t.Error("NUTS entries present without a NUTS part")
	}
}

// Issue 17's acceptance through the adapter, as `afin infer --method frvi`
// runs it (default options, either protocol): on the σ = 10⁻³ conjugate
// task and the binomial at its support boundary, the point's moments are
// within 4 Monte Carlo standard errors of the exact posterior or its
// diagnostics say it did not converge, with a reason.
func TestFRVIHardCasesThroughAdapter(t *testing.T) {
	cases, err := factortest.HardCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, hc := range cases {
		for _, proto := range []vi.Protocol{vi.ProtocolPractitioner, vi.ProtocolPaper} {
			t.Run(hc.Name+"/"+string(proto), func(t *testing.T) {
				o := methods.DefaultOptions()
				o.VI.Protocol, o.VI.Draws = proto, 100
				m, err := methods.New("frvi", &methods.Env{})
				if err != nil {
					t.Fatal(err)
				}
				pts := run(t, m, &methods.Job{Task: hc.Task, Seed: 1, Ladder: []int{2000}, Options: o})
				p := pts[methods.Slot{Kind: methods.KindSteps, Budget: 2000}]
				f := p.Diagnostics.Flags
				if f == nil || f.Converged == nil {
					t.Fatal("no convergence verdict")
				}
				ok, why := hc.WithinMCSE(p.Mean, p.Cov)
				if !ok && *f.Converged {
					t.Errorf("%s, yet flagged converged", why)
				}
				if !*f.Converged && f.ConvergenceReason == "" {
					t.Error("not converged without a reason")
				}
			})
		}
	}
}
