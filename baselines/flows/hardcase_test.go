package flows

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/factor/factortest"
)

// TestFlowsHardCasesConvergeOrFlag is issue 17's acceptance test for the
// flows: on the σ = 10⁻³ conjugate task and the binomial at its support
// boundary, the chosen flow's moments (from 4000 of its draws, as afin
// infer reports them) are within 4 Monte Carlo standard errors of the
// exact posterior, or the fit says it did not converge. Under the paper's
// protocol the answer is far off, so there the flag is what passes.
func TestFlowsHardCasesConvergeOrFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: fits 3 flows × 3 tasks × 2 protocols")
	}
	cases, err := factortest.HardCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, hc := range cases {
		for _, kind := range Kinds() {
			for _, proto := range []vi.Protocol{vi.ProtocolPractitioner, vi.ProtocolPaper} {
				t.Run(hc.Name+"/"+string(kind)+"/"+string(proto), func(t *testing.T) {
					checkHardCase(t, hc, kind, proto)
				})
			}
		}
	}
}

func checkHardCase(t *testing.T, hc factortest.HardCase, kind Kind, proto vi.Protocol) {
	t.Helper()
	opt := Options{Protocol: proto, Budgets: []int{2000}, Seed: 1, Arch: Arch{Hidden: 16}}
	if proto == vi.ProtocolPaper {
		opt.LRs = []float64{1e-3, 1e-2} // the top of the paper's sweep, where it always lands
	}
	res, err := Fit(context.Background(), hc.Task, kind, opt)
	if err != nil {
		t.Fatal(err)
	}
	dr, _ := vi.Draw(res.Final(), rand.New(rand.NewPCG(1, 2)), factortest.AnswerDraws)
	ok, why := hc.WithinMCSE(dr.Mean(), dr.Cov())
	c := res.FinalConvergence()
	t.Logf("within=%v (%s) start=%s %+v", ok, why, res.Start, c)
	if !ok && c.Converged {
		t.Errorf("%s, yet flagged converged", why)
	}
	if proto == vi.ProtocolPaper && ok {
		t.Errorf("paper protocol within 4 MCSE: the case no longer tests the flag")
	}
}
