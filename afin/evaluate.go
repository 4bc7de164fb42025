package afin

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/floats"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
)

// ConjugateCell is the held-out evaluation of one (d, N) cell: mean M1
// (Euclidean distance to the exact posterior mean) of the prior mean, of
// the AFIN mean and of AFIN+SNIS, over Tasks tasks.
type ConjugateCell struct {
	D, N, Tasks int
	M1Prior     float64 `json:"m1_prior"`
	M1AFIN      float64 `json:"m1_afin"`
	M1SNIS      float64 `json:"m1_snis"`
}

// EvaluateConjugate runs the held-out check of the issue: conjugate tasks
// (diag_gaussian prior, lin_gaussian factors, iid design) for d ∈ {2,4,8}
// and N ∈ {8,32,64}, tasksPerCell tasks each, SNIS with the given number
// of proposals. The tasks come from seed, independent of training.
func EvaluateConjugate(m *Model, seed uint64, tasksPerCell, proposals int) ([]ConjugateCell, error) {
	rng := streams.New(seed, streams.EvaluateTasks)
	srng := streams.New(seed, streams.EvaluateProposals)
	var cells []ConjugateCell
	for _, d := range []int{2, 4, 8} {
		for _, n := range []int{8, 32, 64} {
			o := factor.SimOptions{D: d, N: n, Prior: factor.DiagGaussianFamily,
				Likelihoods: []string{factor.LinGaussianFamily}, Design: factor.DesignIID}
			tasks, err := factor.SimulateBatch(rng, o, tasksPerCell)
			if err != nil {
				return nil, err
			}
			gs, err := m.Forward(tasks)
			if err != nil {
				return nil, err
			}
			c := ConjugateCell{D: d, N: n, Tasks: tasksPerCell}
			for k, t := range tasks {
				exact, _, err := factor.ExactPosterior(t)
				if err != nil {
					return nil, fmt.Errorf("afin: exact posterior: %w", err)
				}
				c.M1Prior += floats.Distance(t.Prior.Location(), exact, 2)
				c.M1AFIN += floats.Distance(gs[k].Mean, exact, 2)
				dr, _, err := posterior.SNISOf(context.Background(), t, gs[k], srng, proposals)
				if err != nil {
					return nil, err
				}
				c.M1SNIS += floats.Distance(dr.Mean(), exact, 2)
			}
			c.M1Prior /= float64(tasksPerCell)
			c.M1AFIN /= float64(tasksPerCell)
			c.M1SNIS /= float64(tasksPerCell)
			cells = append(cells, c)
		}
	}
	return cells, nil
}
