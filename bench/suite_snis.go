package bench

import (
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/suite"
)

// The snis suite (paper Fig. 3, Table 9): AFIN+SNIS against FRVI+SNIS
// proposals on the synthetic suite's tasks, along the SNIS proposal
// ladder.
type snisSuite struct {
	BaseSuite
	info suite.Info
}

func init() { Register(snisSuite{info: builtinInfo(suite.SNIS)}) }

func (s snisSuite) Info() suite.Info { return s.info }

func (s snisSuite) Settings(*Profile) ([]Setting, error) { return syntheticGrid(s.info.Name), nil }

// Plans: AFIN single shot is the AFIN+SNIS proposal star, so it has no
// unit of its own; FRVI+SNIS runs once per proposal's FRVI step count.
func (snisSuite) Plans(p *Profile) []Plan {
	opts := p.options(p.FRVIDraws)
	_, afinSNIS, _, _ := p.mainPlans()
	plans := []Plan{afinSNIS}
	for _, steps := range p.FRVISNISSteps {
		o := opts
		o.FRVISteps = steps
		plans = append(plans, Plan{Method: methods.FRVISNIS, Variant: stepsLabel(steps), Ladder: p.SNISProposals, Options: o})
	}
	return plans
}
