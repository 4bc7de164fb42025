package bench

import (
	"fmt"

	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/suite"
)

// The extrapolation suite (paper App. D.7): six (d, N) pairs outside the
// checkpoint's training support, one budget per method.
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
			Suite: s.info.Name, Key: fmt.Sprintf("%s/d%d_n%d", c.Split, c.D, c.N), Group: c.Split,
			D: c.D, N: c.N, Design: "iid",
		})
	}
	return out, nil
}

func (extrapolationSuite) Plans(p *Profile) []Plan {
	n := p.ExtrapDraws
	o := p.options(n)
	o.NUTS.Warmup = p.ExtrapNUTSWarm
	return []Plan{
		{Method: methods.AFIN, Ladder: []int{n}, Options: o},
		{Method: methods.AFINSNIS, Ladder: []int{n}, Options: o},
		{Method: methods.NUTS, Ladder: []int{n}, Options: o},
		{Method: methods.FRVI, Ladder: []int{p.ExtrapFRVISteps}, Options: o},
	}
}

// Ladder: one budget per method, as the built-ins get here.
func (extrapolationSuite) Ladder(p *Profile, kind string) []int { return p.extrapLadder(kind) }

// extrapolationConfigs are the paper's six out-of-support (d, N) pairs
// (App. D.7), two per split.
var extrapolationConfigs = []struct {
	Split string
	D, N  int
}{
	{"ood_d", 24, 128}, {"ood_d", 32, 64},
	{"ood_n", 12, 400}, {"ood_n", 8, 512},
	{"ood_dn", 24, 384}, {"ood_dn", 32, 400},
}

// Families returns the prior and likelihood family a simulated setting
// uses under seed. Synthetic settings fix both. Extrapolation settings
// assign them by run: run r = 3·(config index) + seed walks the 16
// prior × likelihood pairs so that the six runs of a split (two configs ×
// three seeds) use six different pairs, and the 18 runs cover all 16.
func (s Setting) Families(seed uint64) (prior, likelihood string) {
	if s.Prior != "" && s.Likelihood != "" {
		return s.Prior, s.Likelihood
	}
	idx := 0
	for i, c := range extrapolationConfigs {
		if fmt.Sprintf("%s/d%d_n%d", c.Split, c.D, c.N) == s.Key {
			idx = i
		}
	}
	r := (3*idx + int(seed%1024)) % 16
	return syntheticPriors[r%4], syntheticLikelihoods[(r/4+r)%4]
}
