package bench

import "github.com/afin-bench/afin/methods"

// execPlans gives every method named in want that runs in any suite (an
// external exec:NAME, see package methods, or a researcher's own
// registered with AnySuite) a plan in the suite: the profile's ladder of the
// built-in methods that count the same budget, so an external sampler is
// scored at the budgets NUTS is, an external optimiser at FRVI's steps
// and an external importance sampler at the SNIS proposals.
func execPlans(p *Profile, suite string, want []string, env *methods.Env, build MethodFactory) ([]Plan, error) {
	if build == nil {
		build = methods.New
	}
	var out []Plan
	for _, name := range want {
		if d, ok := methods.Lookup(name); !ok || !d.AnySuite {
			continue
		}
		m, err := build(name, env)
		if err != nil {
			return nil, err
		}
		out = append(out, Plan{Method: name, Ladder: p.ladderOfKind(suite, m.Kind())})
	}
	return out, nil
}

// ladderOfKind is the profile's budget ladder for a budget kind.
func (p *Profile) ladderOfKind(suite, kind string) []int {
	if suite == OpenMLSuite {
		return p.openmlLadder(kind)
	}
	if suite == "extrapolation" || suite == ExternalSuite {
		// One budget per method, as the built-ins get there.
		if kind == methods.KindSteps {
			return []int{p.ExtrapFRVISteps}
		}
		return []int{p.ExtrapDraws}
	}
	switch kind {
	case methods.KindSteps:
		return p.FRVISteps
	case methods.KindProposals:
		return p.SNISProposals
	}
	return p.NUTSDraws
}
