package heldout

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
)

// Network is the network under test (the afin facade's Model): a
// Gaussian decoder answers through ForwardContext, a flow decoder
// through SampleFlowContext.
type Network interface {
	FlowDecoder() bool
	ForwardContext(ctx context.Context, tasks []*factor.Task) ([]*posterior.Gaussian, error)
	SampleFlowContext(ctx context.Context, t *factor.Task, s int, rng *rand.Rand) (z, logq []float64, err error)
}

// ConjugateGrid is a held-out evaluation design: conjugate tasks (every
// prior × likelihood pair below has an exact posterior) on a d × N grid.
type ConjugateGrid struct {
	Name        string
	D, N        []int
	Priors      []string
	Likelihoods []string // one homogeneous task family per task
}

// Held-out grids. SmallGrid is the shipped checkpoint's original check
// (inside its d ≤ 8, N ≤ 64 support); FullGrid spans the paper's whole
// training support with both conjugate priors and both Gaussian
// likelihoods, so a network that only learned small tasks shows it.
var (
	SmallGrid = ConjugateGrid{Name: "small", D: []int{2, 4, 8}, N: []int{8, 32, 64},
		Priors: []string{factor.DiagGaussianFamily}, Likelihoods: []string{factor.LinGaussianFamily}}
	FullGrid = ConjugateGrid{Name: "full", D: []int{2, 4, 8, 16}, N: []int{1, 16, 64, 256},
		Priors:      []string{factor.DiagGaussianFamily, factor.FullRankGaussianFamily},
		Likelihoods: []string{factor.LinGaussianFamily, factor.GaussianFamily}}
)

// ConjugateCell is the held-out evaluation of one (d, N) cell: mean M1
// (Euclidean distance to the exact posterior mean) of the prior mean, of
// the AFIN mean and of AFIN+SNIS, over Tasks tasks.
type ConjugateCell struct {
	D       int     `json:"d"`
	N       int     `json:"n"`
	Tasks   int     `json:"tasks"`
	M1Prior float64 `json:"m1_prior"`
	M1AFIN  float64 `json:"m1_afin"`
	M1SNIS  float64 `json:"m1_snis"`
}

// EvaluateConjugate runs a held-out check: tasksPerCell tasks per (d, N)
// cell of grid (priors and likelihoods taken in turn), AFIN's mean and
// AFIN+SNIS with the given number of proposals against the exact
// posterior mean. The tasks come from seed, independent of training.
func EvaluateConjugate(ctx context.Context, m Network, grid ConjugateGrid, seed uint64, tasksPerCell, proposals int) ([]ConjugateCell, error) {
	rng := streams.New(seed, streams.EvaluateTasks)
	srng := streams.New(seed, streams.EvaluateProposals)
	var cells []ConjugateCell
	for _, d := range grid.D {
		for _, n := range grid.N {
			c := ConjugateCell{D: d, N: n, Tasks: tasksPerCell}
			for k := range tasksPerCell {
				o := factor.SimOptions{D: d, N: n, Prior: grid.Priors[k%len(grid.Priors)],
					Likelihoods: []string{grid.Likelihoods[(k/len(grid.Priors))%len(grid.Likelihoods)]},
					Design:      factor.DesignIID}
				tasks, err := factor.SimulateBatch(rng, o, 1)
				if err != nil {
					return nil, err
				}
				if err := evaluateTask(ctx, m, tasks[0], srng, proposals, &c); err != nil {
					return nil, fmt.Errorf("afin: held-out d=%d N=%d task %d: %w", d, n, k, err)
				}
			}
			c.M1Prior /= float64(tasksPerCell)
			c.M1AFIN /= float64(tasksPerCell)
			c.M1SNIS /= float64(tasksPerCell)
			cells = append(cells, c)
		}
	}
	return cells, nil
}

// evaluateTask adds one task's M1 values to c. A flow decoder has no
// closed-form mean: its AFIN mean is the plain mean of the same draws
// that AFIN+SNIS weights (Monte Carlo error about sd/√proposals).
func evaluateTask(ctx context.Context, m Network, t *factor.Task, srng *rand.Rand, proposals int, c *ConjugateCell) error {
	exact, _, err := factor.ExactPosterior(t)
	if err != nil {
		return fmt.Errorf("exact posterior: %w", err)
	}
	c.M1Prior += posterior.MeanError(t.Prior.Location(), exact)
	if m.FlowDecoder() {
		z, logq, err := m.SampleFlowContext(ctx, t, proposals, srng)
		if err != nil {
			return err
		}
		draws := &posterior.Draws{D: t.D, Z: z}
		dr, _, err := posterior.SNISDraws(ctx, t, draws, logq)
		if err != nil {
			return err
		}
		c.M1AFIN += posterior.MeanError(draws.Mean(), exact)
		c.M1SNIS += posterior.MeanError(dr.Mean(), exact)
		return nil
	}
	gs, err := m.ForwardContext(ctx, []*factor.Task{t})
	if err != nil {
		return err
	}
	c.M1AFIN += posterior.MeanError(gs[0].Mean, exact)
	dr, _, err := posterior.SNISOf(ctx, t, gs[0], srng, proposals)
	if err != nil {
		return err
	}
	c.M1SNIS += posterior.MeanError(dr.Mean(), exact)
	return nil
}

// ConjugateSummary is the ratio of mean M1s over the cells: AFIN's and
// AFIN+SNIS's distance to the exact posterior mean relative to the prior
// mean's (0 is exact, 1 no better than the prior).
func ConjugateSummary(cells []ConjugateCell) (afin, snis float64) {
	var p, a, s float64
	for _, c := range cells {
		p += c.M1Prior
		a += c.M1AFIN
		s += c.M1SNIS
	}
	return a / p, s / p
}
