package bench

import (
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/suite"
)

// The synthetic suite (paper Fig. 2, Figs. 5–7): 48 simulated settings,
// the 16 prior–likelihood pairs at three difficulties, each method along
// its budget ladder against a cached reference posterior.
type syntheticSuite struct {
	BaseSuite
	info suite.Info
}

func init() { Register(syntheticSuite{info: builtinInfo(suite.Synthetic)}) }

func (s syntheticSuite) Info() suite.Info { return s.info }

func (s syntheticSuite) Settings(*Profile) ([]Setting, error) { return syntheticGrid(s.info.Name), nil }

func (syntheticSuite) Plans(p *Profile) []Plan {
	afin, afinSNIS, nuts, frvi := p.mainPlans()
	return append(append([]Plan{afin, afinSNIS, nuts, frvi}, p.flowPlans(true)...), p.workflowPlans()...)
}

// Difficulties of the synthetic suite (paper Table 5).
var difficulties = []struct {
	Name string
	D, N int
}{
	{"easy", 4, 256},
	{"medium", 8, 64},
	{"hard", 16, 1},
}

// syntheticLikelihoods are the four likelihood families of the synthetic
// suite (the vector-observation "gaussian" family is not among them).
var syntheticLikelihoods = []string{
	factor.LinGaussianFamily, factor.BernoulliLogitFamily,
	factor.BinomialLogitFamily, factor.LinStudentTFamily,
}

// syntheticPriors orders the priors as the paper's figures list them.
var syntheticPriors = []string{
	factor.DiagGaussianFamily, factor.FullRankGaussianFamily,
	factor.DiagLaplaceFamily, factor.DiagStudentTFamily,
}

// syntheticGrid is the synthetic suite's 48 settings under a suite's
// name: the snis, decoders and calibration suites run the same tasks.
func syntheticGrid(name string) []Setting {
	var out []Setting
	for _, diff := range difficulties {
		for _, p := range syntheticPriors {
			for _, l := range syntheticLikelihoods {
				out = append(out, Setting{
					Suite: name, Key: p + "/" + l + "/" + diff.Name, Group: diff.Name,
					Prior: p, Likelihood: l, D: diff.D, N: diff.N, Design: "iid",
				})
			}
		}
	}
	return out
}
