package bench

import (
	"fmt"

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
