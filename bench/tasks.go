package bench

import (
	"fmt"

	"github.com/afin-bench/afin/factor"
)

// SimTask returns the task of a simulated setting under seed: a draw from
// the paper's simulator with the setting's (d, N), families (a suite that
// draws them per seed sets them first: Suite.Families) and design,
// from a PCG stream keyed by the setting and the seed. The same pair
// always gives the same task, in every process.
func SimTask(s Setting, seed uint64) (*factor.Task, error) {
	t, err := factor.Simulate(taskRNG(s, seed), factor.SimOptions{
		D: s.D, N: s.N, Prior: s.Prior, Likelihoods: []string{s.Likelihood}, Design: s.Design,
	})
	if err != nil {
		return nil, fmt.Errorf("simulating %s seed %d: %w", s.Key, seed, err)
	}
	t.Name = fmt.Sprintf("%s/seed%d", s.Key, seed)
	return t, nil
}
