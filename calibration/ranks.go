package calibration

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// ErrInput marks a task or draw set the calibration cannot use.
var ErrInput = errors.New("calibration: bad input")

// Group names: the quantities whose ranks are tested together.
const (
	GroupCoordinates = "coordinates" // every coordinate z_j
	GroupLogDensity  = "log_density" // log p̃(z), the target's own log density
	GroupProjection  = "projection"  // vᵀz for a fixed random unit v
)

// TaskRanks is one simulated task's contribution: fractional ranks of the
// true values and the moment summaries.
type TaskRanks struct {
	// Coord[j] is the fractional rank of true z_j among the draws' z_j.
	Coord []float64
	// LogDensity is the fractional rank of log p̃(z_true) among log p̃ of
	// the draws; Projection that of vᵀz_true among vᵀz.
	LogDensity, Projection float64
	// ZScore[j] = (E[z_j] − z_true_j)/sd(z_j) under the method's
	// posterior; Contraction[j] = 1 − Var(z_j)/Var_prior(z_j) (NaN when
	// the prior has no variance).
	ZScore, Contraction []float64
}

// Rank computes task's ranks from a method's draws, using at most l draws
// (see the package doc) and the projection direction v (unit, length d).
// task must carry TrueZ.
func Rank(task *factor.Task, draws *posterior.Draws, l int, v []float64, rng *rand.Rand) (*TaskRanks, error) {
	d := task.D
	switch {
	case len(task.TrueZ) != d:
		return nil, fmt.Errorf("%w: task has no true_z of length %d", ErrInput, d)
	case draws == nil || draws.D != d || draws.Len() < 1:
		return nil, fmt.Errorf("%w: draws must be a non-empty set in dimension %d", ErrInput, d)
	case len(v) != d || l < 1:
		return nil, fmt.Errorf("%w: projection of length %d and l=%d for d=%d", ErrInput, len(v), l, d)
	}
	sel := selectDraws(draws, l, rng)
	prior, err := PriorVariance(task.Prior)
	if err != nil {
		return nil, err
	}
	mean, cov := draws.Mean(), draws.Cov()
	r := &TaskRanks{Coord: make([]float64, d), ZScore: make([]float64, d), Contraction: make([]float64, d)}
	col := make([]float64, sel.Len())
	for j := range d {
		for s := range col {
			col[s] = sel.Z[s*d+j]
		}
		r.Coord[j] = fracRank(task.TrueZ[j], col, rng)
		sd := math.Sqrt(cov[j*d+j])
		r.ZScore[j] = (mean[j] - task.TrueZ[j]) / sd
		r.Contraction[j] = 1 - cov[j*d+j]/prior[j]
	}
	for s := range col {
		col[s] = task.LogDensity(sel.Row(s))
	}
	r.LogDensity = fracRank(task.LogDensity(task.TrueZ), col, rng)
	for s := range col {
		col[s] = dot(v, sel.Row(s))
	}
	r.Projection = fracRank(dot(v, task.TrueZ), col, rng)
	return r, nil
}

// selectDraws returns l unweighted draws: a weighted set resampled, an
// unweighted one thinned evenly (or whole when it has at most l).
func selectDraws(d *posterior.Draws, l int, rng *rand.Rand) *posterior.Draws {
	if d.Weighted() {
		return d.Resample(rng, l)
	}
	n := d.Len()
	if n <= l {
		return d
	}
	out := &posterior.Draws{D: d.D, Z: make([]float64, 0, l*d.D)}
	for i := range l {
		out.Z = append(out.Z, d.Row(i*n/l)...)
	}
	return out
}

// fracRank is the randomised fractional rank (r + U)/(L + 1) of t among
// the L values xs, r the count below t (a tie counts as below with
// probability ½, which keeps discrete quantities uniform in law).
func fracRank(t float64, xs []float64, rng *rand.Rand) float64 {
	r := 0
	for _, x := range xs {
		if x < t || (x == t && rng.IntN(2) == 0) {
			r++
		}
	}
	return (float64(r) + rng.Float64()) / float64(len(xs)+1)
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// PriorVariance returns the marginal prior variance of each coordinate:
// scale² (Gaussian), 2·scale² (Laplace), scale²·ν/(ν−2) (Student-t, +Inf
// for ν ≤ 2), diag(Λ⁻¹) (full-rank Gaussian).
func PriorVariance(p factor.Prior) ([]float64, error) {
	switch p := p.(type) {
	case *factor.DiagGaussian:
		return scaled(p.Scale, 1), nil
	case *factor.DiagLaplace:
		return scaled(p.Scale, 2), nil
	case *factor.DiagStudentT:
		if p.DF <= 2 {
			return scaled(p.Scale, math.Inf(1)), nil
		}
		return scaled(p.Scale, p.DF/(p.DF-2)), nil
	case *factor.FullRankGaussian:
		g, err := posterior.NewGaussianPrecision(p.Loc, p.Precision)
		if err != nil {
			return nil, fmt.Errorf("calibration: prior covariance: %w", err)
		}
		c, d := g.Cov(), len(p.Loc)
		out := make([]float64, d)
		for j := range d {
			out[j] = c[j*d+j]
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: prior family %s has no variance rule", ErrInput, p.Family())
}

func scaled(scale []float64, f float64) []float64 {
	out := make([]float64, len(scale))
	for i, s := range scale {
		out[i] = s * s * f
	}
	return out
}
