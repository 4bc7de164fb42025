package bench

import (
	"fmt"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/suite"
)

// The extrapolation suite (paper App. D.7): six (d, N) pairs outside the
// checkpoint's training support, one budget per method, each run's prior
// and likelihood families drawn by the suite (Families).
type extrapolationSuite struct {
	BaseSuite
	info suite.Info
}

func init() { Register(extrapolationSuite{info: builtinInfo(suite.Extrapolation)}) }

func (s extrapolationSuite) Info() suite.Info { return s.info }

func (s extrapolationSuite) Settings(*Profile) ([]Setting, error) {
	var out []Setting
	for _, c := range extrapolationConfigs {
		out = append(out, Setting{
			Suite: s.info.Name, Key: c.key(), Group: c.Split,
			D: c.D, N: c.N, Design: "iid",
		})
	}
	return out, nil
}

func (extrapolationSuite) Plans(p *Profile) []Plan {
	b := extrapBudgetOf(p)
	o := p.options(b.draws)
	o.NUTS.Warmup = b.nutsWarmup
	return []Plan{
		{Method: methods.AFIN, Ladder: []int{b.draws}, Options: o},
		{Method: methods.AFINSNIS, Ladder: []int{b.draws}, Options: o},
		{Method: methods.NUTS, Ladder: []int{b.draws}, Options: o},
		{Method: methods.FRVI, Ladder: []int{b.frviSteps}, Options: o},
	}
}

// Ladder: one budget per method, as the built-ins get here.
func (extrapolationSuite) Ladder(p *Profile, kind string) []int {
	return extrapBudgetOf(p).ladder(kind)
}

// Families: the setting's (d, N) has none of its own; run r = 3·(config
// index) + seed walks the 16 prior × likelihood pairs so that the six
// runs of a split (two configs × three seeds) use six different pairs,
// and the 18 runs cover all 16.
func (extrapolationSuite) Families(s Setting, seed uint64) (prior, likelihood string) {
	if s.Prior != "" && s.Likelihood != "" {
		return s.Prior, s.Likelihood
	}
	idx := 0
	for i, c := range extrapolationConfigs {
		if c.key() == s.Key {
			idx = i
		}
	}
	r := (3*idx + int(seed%1024)) % 16
	return syntheticPriors[r%4], syntheticLikelihoods[(r/4+r)%4]
}

// Task is the simulated task of the setting with the families the suite
// draws for seed (the task stream does not depend on them).
func (s extrapolationSuite) Task(_ *Config, st Setting, seed uint64) (*factor.Task, error) {
	st.Prior, st.Likelihood = s.Families(st, seed)
	return SimTask(st, seed)
}

// extrapolationConfigs are the paper's six out-of-support (d, N) pairs
// (App. D.7), two per split.
var extrapolationConfigs = []extrapConfig{
	{"ood_d", 24, 128}, {"ood_d", 32, 64},
	{"ood_n", 12, 400}, {"ood_n", 8, 512},
	{"ood_dn", 24, 384}, {"ood_dn", 32, 400},
}

type extrapConfig struct {
	Split string
	D, N  int
}

func (c extrapConfig) key() string { return fmt.Sprintf("%s/d%d_n%d", c.Split, c.D, c.N) }

// extrapBudget is one profile's single budget per method: the suite's
// (paper App. D.7), which the external suite shares.
type extrapBudget struct {
	draws      int // AFIN draws, AFIN+SNIS proposals, NUTS draws, FRVI draws
	nutsWarmup int
	frviSteps  int
}

var extrapBudgets = map[string]extrapBudget{
	"smoke": {draws: 1000, nutsWarmup: 100, frviSteps: 300},
	"quick": {draws: 5000, nutsWarmup: 500, frviSteps: 3000},
	"paper": {draws: 50_000, nutsWarmup: 1000, frviSteps: 10_000},
}

// extrapBudgetOf is p's budget (quick's for a profile without one).
func extrapBudgetOf(p *Profile) extrapBudget {
	if b, ok := extrapBudgets[p.Name]; ok {
		return b
	}
	return extrapBudgets["quick"]
}

// ladder is the one budget of a method counting kind.
func (b extrapBudget) ladder(kind string) []int {
	if kind == methods.KindSteps {
		return []int{b.frviSteps}
	}
	return []int{b.draws}
}
