package bench

import (
	"fmt"

	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/factor"
)

// SimTask returns the task of a simulated setting under seed: a draw from
// the paper's simulator with the setting's (d, N), families and design,
// from a PCG stream keyed by the setting and the seed. The same pair
// always gives the same task, in every process.
func SimTask(s Setting, seed uint64) (*factor.Task, error) {
	prior, lik := s.Families(seed)
	t, err := factor.Simulate(taskRNG(s, seed), factor.SimOptions{
		D: s.D, N: s.N, Prior: prior, Likelihoods: []string{lik}, Design: s.Design,
	})
	if err != nil {
		return nil, fmt.Errorf("simulating %s seed %d: %w", s.Key, seed, err)
	}
	t.Name = fmt.Sprintf("%s/seed%d", s.Key, seed)
	return t, nil
}

// UCISettings lists the 12 UCI tasks of the paper's Table 6 as settings;
// each is its own report group.
func UCISettings() []Setting {
	var out []Setting
	for _, in := range datasets.List() {
		out = append(out, Setting{
			Suite: "uci", Key: in.Key, Group: in.Key,
			Prior: in.Prior, Likelihood: in.Likelihood, D: in.D, N: in.N, Dataset: in.Key,
		})
	}
	return out
}

// defaultTask builds a setting's task: from the simulator, or for the uci
// suite from the raw files under cfg.DataDir (the seed does not change a
// UCI task; it only varies the methods).
func (cfg *Config) defaultTask(s Setting, seed uint64) (*factor.Task, error) {
	if s.Suite == ExternalSuite {
		return ExternalTask(s, seed)
	}
	if s.Dataset == "" {
		return SimTask(s, seed)
	}
	dir, err := datasets.ResolveDir(cfg.DataDir, cfg.DataDirEnv)
	if err != nil {
		return nil, err
	}
	return datasets.Load(dir, s.Dataset)
}
