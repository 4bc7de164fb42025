package methods

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// The NUTS checks raise the sampler flag, with every failure named on one
// line, and stay silent on a healthy run.
func TestSamplerFlag(t *testing.T) {
	tests := []struct {
		name       string
		rhat, ess  float64
		divergence int
		want       []string // empty: no flag
	}{
		{"healthy", 1.002, 3000, 0, nil},
		{"R̂", 1.0124, 3000, 0, []string{"max R̂ 1.012 ≥ 1.01"}},
		{"ESS", 1.001, 42, 0, []string{"min bulk ESS 42 < 100"}},
		{"divergences", 1.001, 3000, 7, []string{"7 divergent transitions"}},
		{"NaN diagnostics", math.NaN(), math.NaN(), 0, []string{"max R̂ cannot be computed", "min bulk ESS cannot be computed"}},
		{"all", 1.3, 10, 2, []string{"max R̂ 1.3", "min bulk ESS 10", "2 divergent", "--dense-mass"}},
	}
	for _, tc := range tests {
		p := Point{Diagnostics: Diagnostics{NUTSDiagnostics: &NUTSDiagnostics{Divergences: tc.divergence, Rhat: records.Num(tc.rhat), ESSBulk: records.Num(tc.ess)}}}
		p.Settle()
		var got string
		if f := p.Diagnostics.Flags; f != nil {
			got = f.Sampler
			if len(f.Warnings) != 1 || f.Warnings[0] != got {
				t.Errorf("%s: warnings %q, want the sampler flag alone", tc.name, f.Warnings)
			}
		}
		if len(tc.want) == 0 && got != "" {
			t.Errorf("%s: flag %q, want none", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: flag %q lacks %q", tc.name, got, w)
			}
		}
		if strings.Contains(got, "\n") {
			t.Errorf("%s: flag %q spans lines", tc.name, got)
		}
	}
}

// Weights that rest on too few draws, and an sd of exactly 0, are a flag
// and a warning; healthy draws raise none.
func TestDegenerateFlag(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	normal := func(n int) []float64 {
		z := make([]float64, 2*n)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		return z
	}
	oneHot := make([]float64, 1000)
	oneHot[17] = 1
	few := make([]float64, 1000) // 8 equal weights: ESS 8 < 10
	for s := range 8 {
		few[s*100] = 1
	}
	pct := make([]float64, 5000) // 40 equal weights: ESS 40 < 1% of 5000
	for s := range 40 {
		pct[s*100] = 1
	}
	half := make([]float64, 1000)
	for s := range half {
		half[s] = float64(s % 2)
	}
	constant := normal(100)
	for s := range 100 {
		constant[2*s+1] = 3
	}
	tests := []struct {
		name  string
		draws *posterior.Draws
		want  []string
	}{
		{"one draw carries all weight (sd 0, ESS 1)", &posterior.Draws{D: 2, Z: normal(1000), W: oneHot}, []string{"1 effective draws of 1000", "sd is exactly 0 for z1, z2"}},
		{"ESS 8", &posterior.Draws{D: 2, Z: normal(1000), W: few}, []string{"8 effective draws of 1000"}},
		{"ESS 40 of 5000", &posterior.Draws{D: 2, Z: normal(5000), W: pct}, []string{"40 effective draws of 5000"}},
		{"ESS 500", &posterior.Draws{D: 2, Z: normal(1000), W: half}, nil},
		{"unweighted", &posterior.Draws{D: 2, Z: normal(100)}, nil},
		{"constant coordinate", &posterior.Draws{D: 2, Z: constant}, []string{"sd is exactly 0 for z2"}},
	}
	for _, tc := range tests {
		p := Point{Draws: tc.draws}
		p.Settle()
		var got string
		if f := p.Diagnostics.Flags; f != nil {
			got = f.Degenerate
		}
		if (got == "") != (len(tc.want) == 0) {
			t.Errorf("%s: flag %q, want %q", tc.name, got, tc.want)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: flag %q lacks %q", tc.name, got, w)
			}
		}
	}
}

// k̂ above 0.7, of an AFIN answer's own draws or of SNIS weights, is a
// flag and a warning; the warnings reach the diagnostics JSON as a list.
func TestPoorFitFlag(t *testing.T) {
	tests := []struct {
		name string
		dg   Diagnostics
		want string
	}{
		{"AFIN k̂ 0.92", Diagnostics{FitDiagnostics: &FitDiagnostics{FitParetoK: 0.92, FitDraws: 200}}, "Pareto k̂ 0.92 > 0.7"},
		{"AFIN k̂ 0.5", Diagnostics{FitDiagnostics: &FitDiagnostics{FitParetoK: 0.5, FitDraws: 200}}, ""},
		{"AFIN not measured", Diagnostics{FitDiagnostics: &FitDiagnostics{FitParetoK: records.Num(math.NaN())}}, ""},
		{"SNIS k̂ ∞", Diagnostics{SNISDiagnostics: &SNISDiagnostics{ParetoK: records.Num(math.Inf(1)), Proposals: 100}}, "Pareto k̂ +Inf > 0.7"},
		{"SNIS k̂ 0.3", Diagnostics{SNISDiagnostics: &SNISDiagnostics{ParetoK: 0.3, Proposals: 100}}, ""},
	}
	for _, tc := range tests {
		p := Point{Diagnostics: tc.dg}
		p.Settle()
		var got string
		if f := p.Diagnostics.Flags; f != nil {
			got = f.PoorFit
		}
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: flag %q, want %q", tc.name, got, tc.want)
			continue
		}
		if tc.want == "" {
			continue
		}
		data, err := json.Marshal(p.Diagnostics)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Warnings []string `json:"warnings"`
			PoorFit  string   `json:"poor_fit"`
		}
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Warnings) != 1 || out.Warnings[0] != got || out.PoorFit != got {
			t.Errorf("%s: JSON %s lacks the warning", tc.name, data)
		}
	}
}

// auto returns its SNIS answer only when no flag is raised: a degenerate
// answer or one outside the training support goes to NUTS even with a
// small k̂.
func TestAutoRefusesFlaggedSNIS(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	z := make([]float64, 2000)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	even := make([]float64, 1000)
	oneHot := make([]float64, 1000)
	for i := range even {
		even[i] = 1
	}
	oneHot[3] = 1
	// 50 effective draws of 1,000: above the 1% floor of any weighted
	// answer, below an SNIS answer's MinSNISESS.
	fifty := make([]float64, 1000)
	for i := range 50 {
		fifty[i] = 1
	}
	tests := []struct {
		name    string
		w       []float64
		outside string
		k       float64
		want    string // "" when auto may answer
	}{
		{"healthy", even, "", 0.3, ""},
		{"k̂ 0.8", even, "", 0.8, "pareto_k 0.8 > 0.7"},
		{"k̂ NaN", even, "", math.NaN(), "pareto_k NaN > 0.7"},
		{"degenerate with a small k̂", oneHot, "", 0.3, "effective draws"},
		{"50 effective draws with a small k̂", fifty, "", 0.3, "rests on 50 effective draws of 1000 proposals (floor 100"},
		{"outside the support", even, "d=16 > 8", 0.3, "outside the checkpoint's training support"},
	}
	for _, tc := range tests {
		cand := Point{Draws: &posterior.Draws{D: 2, Z: z, W: tc.w},
			Diagnostics: Diagnostics{SNISDiagnostics: &SNISDiagnostics{ParetoK: records.Num(tc.k), Proposals: 1000}}}
		if tc.outside != "" {
			cand.Diagnostics.Flags = &Flags{OutsideSupport: tc.outside}
		}
		why := strings.Join(refuseSNIS(&cand, tc.k, 0.7), "; ")
		if (why == "") != (tc.want == "") || !strings.Contains(why, tc.want) {
			t.Errorf("%s: refused for %q, want %q", tc.name, why, tc.want)
		}
	}
}

// Both AFIN decoders measure their own answer against the defensive
// mixture: 2·fitDraws weights (the network's draws and as many
// Student-t's), a finite k̂ and ESS, and the answer's own draws unchanged
// by it.
func TestAFINMeasuresItsFit(t *testing.T) {
	flowDir := t.TempDir()
	cfg := afin.Config{Name: "tiny", Decoder: "flow", C: 8, AdapterH: 8, AdapterL: 2, EncLayers: 1, BoxH: 8, BoxL: 3, Blocks: 1,
		Heads: 2, MergeH: 8, MergeL: 3, DecH: 8, DecL: 2, OffdiagMul: 0.1, FlowG: 6, FlowH: 8, FlowL: 3, FlowSteps: 4}
	o := afin.DefaultTrainOptions()
	o.Steps, o.BatchTasks, o.Warmup, o.LR, o.DMax, o.NMax, o.EMAStart = 2, 2, 2, 1e-3, 3, 4, 1
	o.CheckpointEvery, o.CheckpointSeconds, o.EvalEvery, o.LogEvery = 0, 0, 0, 1
	if err := (&afin.Trainer{Dir: flowDir}).Train(t.Context(), cfg, o, false); err != nil {
		t.Fatal(err)
	}
	task, err := factor.Simulate(rand.New(rand.NewPCG(1, 2)), factor.SimOptions{D: 3, N: 4,
		Prior: "diag_gaussian", Likelihoods: []string{"gaussian"}, Design: factor.DesignIID})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		decoder, dir string
		ladder       []int
	}{
		{"gaussian", filepath.Join("..", "checkpoints", "small-gaussian"), []int{0, 10, 300}},
		{"flow", flowDir, []int{10, 300}},
	} {
		m, err := New("afin", &Env{Checkpoint: tc.dir})
		if err != nil {
			t.Fatal(err)
		}
		var pts []Point
		job := &Job{Task: task, Seed: 4, Ladder: tc.ladder}
		if err := Run(context.Background(), m, job, func(p Point) error { pts = append(pts, p); return nil }); err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			a := p.Diagnostics.FitDiagnostics
			want := 2 * fitDraws
			t.Logf("%s, %d draws: k̂ %.3f, ESS %.1f of %d weights, %.2g s", tc.decoder, p.Budget, float64(a.FitParetoK), float64(a.FitESS), a.FitDraws, float64(a.FitSeconds))
			if dec := p.Diagnostics.AFINDiagnostics.Decoder; dec != tc.decoder || a.FitDraws != want || math.IsNaN(float64(a.FitParetoK)) || !(a.FitESS > 1) {
				t.Errorf("%s, %d draws: decoder %s, %d weights (want %d), k̂ %v, ESS %v", tc.decoder, p.Budget, dec, a.FitDraws, want, a.FitParetoK, a.FitESS)
			}
		}
		// The check draws from its own stream: the answer is the one an
		// unmeasured pass gives.
		p, err := m.(afinMethod).net.run(context.Background(), task, 300, streams.New(4, streams.AFINLadder.At(len(tc.ladder)-1)))
		if err != nil {
			t.Fatal(err)
		}
		if last := pts[len(pts)-1].Draws; last.Z[0] != p.draws.Z[0] || last.Z[len(last.Z)-1] != p.draws.Z[len(p.draws.Z)-1] {
			t.Errorf("%s: measuring the fit changed the answer's draws", tc.decoder)
		}
	}
}
