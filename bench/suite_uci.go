package bench

import (
	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/suite"
)

// The uci suite (paper Fig. 4, Table 6): the 12 UCI tasks, read from the
// raw files under Config.DataDir, with the synthetic suite's methods and
// the flow VI baselines.
type uciSuite struct {
	BaseSuite
	info suite.Info
}

func init() { Register(uciSuite{info: builtinInfo(suite.UCI)}) }

func (s uciSuite) Info() suite.Info { return s.info }

func (uciSuite) Settings(*Profile) ([]Setting, error) { return UCISettings(), nil }

// Plans: the paper's Fig. 4 adds the flow VI baselines.
func (uciSuite) Plans(p *Profile) []Plan {
	afin, afinSNIS, nuts, frvi := p.mainPlans()
	return append(append([]Plan{afin, afinSNIS, nuts, frvi}, p.flowPlans(false)...), p.workflowPlans()...)
}

// Prepare resolves the raw files' directory, refusing a run without one.
func (uciSuite) Prepare(cfg *Config, _ []Setting, _ []uint64) error {
	dir, err := datasets.ResolveDir(cfg.DataDir, cfg.DataDirEnv)
	if err != nil {
		return err
	}
	cfg.DataDir = dir
	return nil
}

// UCISettings lists the 12 UCI tasks of the paper's Table 6 as settings;
// each is its own report group.
func UCISettings() []Setting {
	var out []Setting
	for _, in := range datasets.List() {
		out = append(out, Setting{
			Suite: suite.UCI, Key: in.Key, Group: in.Key,
			Prior: in.Prior, Likelihood: in.Likelihood, D: in.D, N: in.N, Dataset: in.Key,
		})
	}
	return out
}
