package afin

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/afin-bench/afin/factor"
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
	rng := rand.New(rand.NewPCG(seed, 0xc0))  // tasks
	srng := rand.New(rand.NewPCG(seed, 0xc1)) // proposals
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
				c.M1Prior += l2(t.Prior.Location(), exact)
				c.M1AFIN += l2(gs[k].Mean, exact)
				z := gs[k].Sample(srng, proposals)
				lq := make([]float64, proposals)
				lp := make([]float64, proposals)
				for s := range proposals {
					row := z[s*d : (s+1)*d]
					lq[s] = gs[k].LogQ(row)
					lp[s] = t.LogDensity(row)
				}
				dr, _, err := posterior.SNIS(d, z, lq, lp)
				if err != nil {
					return nil, err
				}
				c.M1SNIS += l2(dr.Mean(), exact)
			}
			c.M1Prior /= float64(tasksPerCell)
			c.M1AFIN /= float64(tasksPerCell)
			c.M1SNIS /= float64(tasksPerCell)
			cells = append(cells, c)
		}
	}
	return cells, nil
}

func l2(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}
