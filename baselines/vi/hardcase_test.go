package vi

import (
	"context"
	"testing"

	"github.com/afin-bench/afin/factor/factortest"
)

// TestFRVIHardCasesConvergeOrFlag is issue 17's acceptance test for FRVI:
// on a posterior 10⁴ times narrower than its prior and on a binomial at
// its support boundary, each chosen fit is within 4 Monte Carlo standard
// errors of the exact posterior, or says it did not converge.
func TestFRVIHardCasesConvergeOrFlag(t *testing.T) {
	cases, err := factortest.HardCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, hc := range cases {
		for _, proto := range []Protocol{ProtocolPractitioner, ProtocolPaper} {
			t.Run(hc.Name+"/"+string(proto), func(t *testing.T) {
				res, err := RunFRVI(context.Background(), hc.Task, FRVIOptions{Protocol: proto, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				for k, q := range res.Best {
					ok, why := hc.WithinMCSE(q.Mean, q.Cov())
					c := res.Convergence[k]
					if !ok && c.Converged {
						t.Errorf("%d steps: %s, yet flagged converged (%+v)", res.Sweep.Budgets[k], why, c)
					}
					if !c.Converged && c.Reason == "" {
						t.Errorf("%d steps: not converged without a reason", res.Sweep.Budgets[k])
					}
				}
			})
		}
	}
}

// TestFRVIFlagIsLoadBearing shows what the flag prevents: under the
// paper's protocol these fits are outside 4 Monte Carlo standard errors,
// so the acceptance test above passes there only through the flag (drop
// the flag logic and it fails). And the practitioner protocol fixes the
// conjugate case outright: converged and right.
func TestFRVIFlagIsLoadBearing(t *testing.T) {
	cases, err := factortest.HardCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, hc := range cases {
		t.Run(hc.Name, func(t *testing.T) {
			res, err := RunFRVI(context.Background(), hc.Task, FRVIOptions{Protocol: ProtocolPaper, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			q := res.Final()
			if ok, _ := hc.WithinMCSE(q.Mean, q.Cov()); ok {
				t.Errorf("paper protocol is within 4 MCSE here: the case no longer tests the flag")
			}
			if res.FinalConvergence().Converged {
				t.Errorf("paper protocol's wrong fit is flagged converged")
			}
		})
	}
	conj := cases[0]
	res, err := RunFRVI(context.Background(), conj.Task, FRVIOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	q := res.Final()
	if ok, why := conj.WithinMCSE(q.Mean, q.Cov()); !ok || !res.FinalConvergence().Converged || res.Start != "laplace" {
		t.Errorf("practitioner FRVI on the σ=1e-3 task: within=%v (%s), %+v, start %q", ok, why, res.FinalConvergence(), res.Start)
	}
}
