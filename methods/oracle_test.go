package methods_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
)

// TestOracleSelectionBounded: an oracle selection given the SW2 moment
// bound (Job.ScoreBound, what bench gives it) chooses the same rate at
// every budget as the exhaustive selection, reports the same draws,
// scores fewer fits under the paper's protocol (whose rates differ by
// orders of magnitude), and the score it hands the chosen point (Scored)
// is Job.Score of the point's draws.
func TestOracleSelectionBounded(t *testing.T) {
	task, exact := conjugateTask(t)
	_, cov, err := factor.ExactPosterior(task)
	if err != nil {
		t.Fatal(err)
	}
	ref := exactDraws(t, exact, cov, 20000)
	tests := []struct {
		method   string
		protocol vi.Protocol
		ladder   []int
		fewer    bool // the bound must spare some scores
	}{
		{"frvi", vi.ProtocolPaper, []int{300, 3000}, true},
		{"frvi", vi.ProtocolPractitioner, []int{300, 3000}, false},
		{"frvi-snis", vi.ProtocolPaper, []int{100, 20000}, true},
		{"frvi-snis", vi.ProtocolPractitioner, []int{100, 20000}, false},
	}
	for _, tc := range tests {
		t.Run(tc.method+"/"+string(tc.protocol), func(t *testing.T) {
			m, err := methods.New(tc.method, &methods.Env{})
			if err != nil {
				t.Fatal(err)
			}
			o := testOptions()
			o.VI = methods.VIOptions{Protocol: tc.protocol, Selection: vi.SelectOracle, MCSamples: 4, Draws: 3000}
			o.FRVISteps = 3000
			var calls int
			score := func(d *posterior.Draws) float64 { calls++; return posterior.SW2(d, ref, 7) }
			bound := func(mean, cov []float64) float64 { return posterior.SW2LowerBound(mean, cov, ref, 7) }
			full := run(t, m, &methods.Job{Task: task, Seed: 5, Ladder: tc.ladder, Options: o, Score: score})
			fullCalls := calls
			calls = 0
			got := run(t, m, &methods.Job{Task: task, Seed: 5, Ladder: tc.ladder, Options: o, Score: score, ScoreBound: bound})
			t.Logf("%d scores with the bound, %d without", calls, fullCalls)
			if calls > fullCalls || (tc.fewer && calls == fullCalls) {
				t.Errorf("%d scores with the bound, %d without", calls, fullCalls)
			}
			for slot, p := range got {
				f := full[slot]
				if p.Diagnostics.VIDiagnostics.LR != f.Diagnostics.VIDiagnostics.LR || !sameDraws(p.Draws, f.Draws) {
					t.Errorf("%+v: rate %g with the bound, %g without (or other draws)", slot, p.Diagnostics.VIDiagnostics.LR, f.Diagnostics.VIDiagnostics.LR)
				}
				if p.Scored != nil {
					if want := posterior.SW2(p.Draws, ref, 7); *p.Scored != want {
						t.Errorf("%+v: Scored %.17g, SW2 of its draws %.17g", slot, *p.Scored, want)
					}
				} else if tc.method == "frvi" {
					t.Errorf("%+v: no Scored on a point whose draws the selection scored", slot)
				}
			}
		})
	}
}

// TestFRVISNISProposalIsFRVIFit: frvi-snis's proposal after FRVISteps
// steps is the fit frvi reports at that step count. Its oracle scores
// each rate on Options.VI.Draws draws, as frvi's does, never on the
// star's (the largest budget, 10⁷ under the paper profile), and chooses
// the same rate. The star is the largest point's proposals, unweighted.
func TestFRVISNISProposalIsFRVIFit(t *testing.T) {
	task, exact := conjugateTask(t)
	_, cov, err := factor.ExactPosterior(task)
	if err != nil {
		t.Fatal(err)
	}
	ref := exactDraws(t, exact, cov, 20000)
	for _, protocol := range []vi.Protocol{vi.ProtocolPaper, vi.ProtocolPractitioner} {
		t.Run(string(protocol), func(t *testing.T) {
			o := testOptions()
			o.VI = methods.VIOptions{Protocol: protocol, Selection: vi.SelectOracle, MCSamples: 4, Draws: 3000}
			o.FRVISteps = 2000
			sizes := map[int]int{}
			score := func(d *posterior.Draws) float64 { sizes[d.Len()]++; return posterior.SW2(d, ref, 7) }
			frvi, err := methods.New("frvi", &methods.Env{})
			if err != nil {
				t.Fatal(err)
			}
			snis, err := methods.New("frvi-snis", &methods.Env{})
			if err != nil {
				t.Fatal(err)
			}
			fit := run(t, frvi, &methods.Job{Task: task, Seed: 5, Ladder: []int{o.FRVISteps}, Options: o, Score: score})
			clear(sizes)
			got := run(t, snis, &methods.Job{Task: task, Seed: 5, Ladder: []int{100, 20000}, Options: o, Score: score})
			if len(sizes) != 1 || sizes[o.VI.Draws] == 0 {
				t.Errorf("the selection scored sets of these sizes (size: count) %v, want only %d", sizes, o.VI.Draws)
			}
			var want float64
			for _, p := range fit {
				want = p.Diagnostics.VIDiagnostics.LR
			}
			for slot, p := range got {
				if lr := p.Diagnostics.VIDiagnostics.LR; lr != want {
					t.Errorf("%+v: rate %g, frvi chose %g at %d steps", slot, lr, want, o.FRVISteps)
				}
				top := got[methods.Slot{Kind: methods.KindProposals, Budget: 20000}].Draws
				if slot.Stage != "" && (!slices.Equal(p.Draws.Z, top.Z) || p.Twin != top) {
					t.Errorf("the star is not the largest point's 20000 proposals, or not its twin")
				}
			}
		})
	}
}

// exactDraws are n draws from N(mean, cov).
func exactDraws(t *testing.T, mean, cov []float64, n int) *posterior.Draws {
	t.Helper()
	d := len(mean)
	l, ok := posterior.Cholesky(cov, d, 0)
	if !ok {
		t.Fatal("covariance not positive definite")
	}
	g := &posterior.Gaussian{Mean: mean, L: l}
	draws, _ := posterior.DrawsOf(g, rand.New(rand.NewPCG(9, 9)), n)
	return draws
}

func sameDraws(a, b *posterior.Draws) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Z {
		if a.Z[i] != b.Z[i] {
			return false
		}
	}
	return true
}
