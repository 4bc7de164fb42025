// Package heldout holds afin's held-out evaluations, both on conjugate
// tasks whose exact posterior is known: the fixed set that watches a
// training run (Training) and the d × N grid that checks a checkpoint
// (EvaluateConjugate).
package heldout

import (
	"context"
	"fmt"
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/engine"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
)

// Training is a fixed set of conjugate tasks (diag_gaussian prior,
// lin_gaussian factors, iid design) used to watch training: d ∈ {2,4,8},
// N ∈ {8,32,64}, a few tasks per cell, with their exact posterior means.
type Training struct {
	groups [][]*factor.Task
	exact  [][][]float64
}

type heldOutResult struct{ logQ, m1, m1Prior float64 }

// Result is a training evaluation: mean log q(true z)/d, mean M1 of the
// network's mean and of the prior mean.
type Result struct{ LogQ, M1, M1Prior float64 }

// NewTraining draws the tasks of a run with this seed.
func NewTraining(seed uint64) (*Training, error) {
	rng := streams.New(seed^streams.HeldOutSeedMask, streams.HeldOutTasks)
	h := &Training{}
	for _, d := range []int{2, 4, 8} {
		for _, n := range []int{8, 32, 64} {
			o := factor.SimOptions{D: d, N: n, Prior: factor.DiagGaussianFamily,
				Likelihoods: []string{factor.LinGaussianFamily}, Design: factor.DesignIID}
			tasks, err := factor.SimulateBatch(rng, o, 4)
			if err != nil {
				return nil, err
			}
			var ex [][]float64
			for _, t := range tasks {
				m, _, err := factor.ExactPosterior(t)
				if err != nil {
					return nil, fmt.Errorf("afin: held-out exact posterior: %w", err)
				}
				ex = append(ex, m)
			}
			h.groups = append(h.groups, tasks)
			h.exact = append(h.exact, ex)
		}
	}
	return h, nil
}

func dist(a []float64, b []float32) float64 {
	var s float64
	for i, v := range a {
		e := v - float64(b[i])
		s += e * e
	}
	return math.Sqrt(s)
}

// Run evaluates weights w of a network with the given decoder: mean log
// q(true z)/d, mean M1 (Euclidean distance of the AFIN mean to the exact
// posterior mean) and the same for the prior mean.
func (h *Training) Run(ctx context.Context, bd *engine.Binder, decoder string, w [][]float32) (Result, error) {
	r, err := h.run(ctx, bd, decoder, w)
	return Result{LogQ: r.logQ, M1: r.m1, M1Prior: r.m1Prior}, err
}

func (h *Training) run(ctx context.Context, bd *engine.Binder, decoder string, w [][]float32) (heldOutResult, error) {
	var r heldOutResult
	var n int
	net, err := bd.Bind(w)
	if err != nil {
		return r, err
	}
	defer net.Release()
	flow := decoder == "flow"
	for g, tasks := range h.groups {
		z := make([][]float64, len(tasks))
		for k, t := range tasks {
			z[k] = t.TrueZ
		}
		b, err := arch.NewBatch(ctx, tasks, 0, z)
		if err != nil {
			return r, err
		}
		d := b.D
		mu, lq, err := h.evaluate(ctx, net, flow, b)
		if err != nil {
			return r, err
		}
		for k, t := range tasks {
			r.logQ += lq[k] / float64(d)
			r.m1 += dist(h.exact[g][k], mu[k*d:(k+1)*d])
			prior := make([]float32, d)
			for i, v := range t.Prior.Location() {
				prior[i] = float32(v)
			}
			r.m1Prior += dist(h.exact[g][k], prior)
			n++
		}
	}
	r.logQ /= float64(n)
	r.m1 /= float64(n)
	r.m1Prior /= float64(n)
	return r, nil
}

// evaluate returns each task's posterior mean and log q at its true z.
// The mean is the Gaussian's μ, or for the flow the average of
// heldOutDraws draws (fixed base draws, so the evaluation is
// deterministic).
func (h *Training) evaluate(ctx context.Context, net engine.Bound, flow bool, b *arch.Batch) (mu []float32, lq []float64, err error) {
	if !flow {
		mu, lam, err := net.Gaussian(ctx, b)
		if err != nil {
			return nil, nil, err
		}
		d := b.D
		for k := range b.B {
			mean, prec := make([]float64, d), make([]float64, d*d)
			z := make([]float64, d)
			for i := range d {
				mean[i], z[i] = float64(mu[k*d+i]), float64(b.Z[k*d+i])
				for j := range d {
					prec[i*d+j] = 0.5 * (float64(lam[(k*d+i)*d+j]) + float64(lam[(k*d+j)*d+i]))
				}
			}
			g, err := posterior.NewGaussianPrecision(mean, prec)
			if err != nil {
				return nil, nil, fmt.Errorf("afin: held-out task %d: %w", k, err)
			}
			lq = append(lq, g.LogQ(z))
		}
		return mu, lq, nil
	}
	lq32, err := net.FlowLogQ(ctx, b, b.Z, 1)
	if err != nil {
		return nil, nil, err
	}
	for _, v := range lq32 {
		lq = append(lq, float64(v))
	}
	mu, err = h.flowMeans(ctx, net, b)
	return mu, lq, err
}

// flowMeans averages heldOutDraws flow draws per task.
func (h *Training) flowMeans(ctx context.Context, net engine.Bound, b *arch.Batch) ([]float32, error) {
	const s = heldOutDraws
	rng := streams.New(1, streams.HeldOutFlowBase)
	eps := make([]float32, b.B*s*b.D)
	for i := range eps {
		eps[i] = float32(rng.NormFloat64())
	}
	z, _, err := net.FlowSample(ctx, b, eps, s)
	if err != nil {
		return nil, err
	}
	mu := make([]float32, b.B*b.D)
	for k := 0; k < b.B; k++ {
		for n := range s {
			for i := range b.D {
				mu[k*b.D+i] += z[(k*s+n)*b.D+i] / s
			}
		}
	}
	return mu, nil
}

const heldOutDraws = 256
