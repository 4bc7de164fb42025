package bench

import "github.com/afin-bench/afin/methods"

// execPlans gives every method named in want that runs in any suite (an
// external exec:NAME, see package methods, or a researcher's own
// registered with AnySuite) a plan in the suite: the suite's ladder for
// the method's budget kind (Suite.Ladder), by default that of the
// built-in methods that count the same budget, so an external sampler is
// scored at the budgets NUTS is, an external optimiser at FRVI's steps
// and an external importance sampler at the SNIS proposals.
func execPlans(p *Profile, s Suite, want []string, env *methods.Env, build MethodFactory) ([]Plan, error) {
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
		out = append(out, Plan{Method: name, Ladder: s.Ladder(p, m.Kind())})
	}
	return out, nil
}
