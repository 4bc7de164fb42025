package bench

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/afin-bench/afin/factor"
)

// Setting is one task specification of a suite. Simulated settings are
// turned into a task by a seeded draw from the simulator, so (setting,
// seed) names exactly one task; UCI settings name a dataset and the seed
// varies only the methods.
type Setting struct {
	Suite string
	Key   string // unique within the suite, e.g. "diag_gaussian/lin_gaussian/easy"

	// Group is the level reports split by: the difficulty (easy, medium,
	// hard) for synthetic/snis, the split (ood_d, ood_n, ood_dn) for
	// extrapolation, the dataset key for uci.
	Group string

	Prior      string // prior family; "" when chosen per seed (extrapolation)
	Likelihood string // likelihood family; "" when chosen per seed
	D, N       int
	Design     string
	Dataset    string // UCI dataset key
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

// SuiteNames lists the suites `afin bench --suite` accepts.
func SuiteNames() []string {
	return []string{"synthetic", "extrapolation", "snis", "uci", DecodersSuite, CalibrationSuite, ExternalSuite, OpenMLSuite}
}

// Settings returns the settings of a simulated suite in a fixed order.
// The uci suite's settings come from the datasets package (see
// UCISettings).
func Settings(suite string) ([]Setting, error) {
	switch suite {
	case "synthetic", "snis", DecodersSuite:
		var out []Setting
		for _, diff := range difficulties {
			for _, p := range syntheticPriors {
				for _, l := range syntheticLikelihoods {
					out = append(out, Setting{
						Suite: suite, Key: p + "/" + l + "/" + diff.Name, Group: diff.Name,
						Prior: p, Likelihood: l, D: diff.D, N: diff.N, Design: "iid",
					})
				}
			}
		}
		return out, nil
	case "extrapolation":
		var out []Setting
		for _, c := range extrapolationConfigs {
			out = append(out, Setting{
				Suite: suite, Key: fmt.Sprintf("%s/d%d_n%d", c.Split, c.D, c.N), Group: c.Split,
				D: c.D, N: c.N, Design: "iid",
			})
		}
		return out, nil
	case "uci":
		return nil, fmt.Errorf("the uci suite's settings come from the datasets package")
	case ExternalSuite:
		return externalSettings(), nil
	}
	return nil, fmt.Errorf("unknown suite %q (valid: %s)", suite, strings.Join(SuiteNames(), ", "))
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

// taskRNG is the task-generating stream of (setting, seed): a fixed hash
// of the setting's suite-independent identity and the seed, so the snis
// suite sees the very tasks of the synthetic suite.
func taskRNG(s Setting, seed uint64) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "task|%s|%d|%d", s.Key, s.D, s.N)
	return rand.New(rand.NewPCG(h.Sum64(), seed))
}

// hashString is a stable 64-bit hash used for seeds and shards.
func hashString(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}
