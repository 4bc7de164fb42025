package posterior

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// Approx is an approximate posterior q that can be sampled together with
// its log density, and evaluated anywhere: all that SNIS, learning-rate
// selection, the metrics and the defensive importance check (Batch,
// DefensiveOf) need. Gaussian and the flow VI snapshots implement it.
type Approx interface {
	Dim() int
	// Rand writes one draw into z and returns log q(z).
	Rand(rng *rand.Rand, z []float64) float64
	// LogQ is log q(z) at any z.
	LogQ(z []float64) float64
}

// MomentApprox is an Approx whose mean and covariance (row-major) are
// known in closed form, so reports need not estimate them from draws.
type MomentApprox interface {
	Approx
	Moments() (mean, cov []float64)
}

// Density is an unnormalised log density p̃, e.g. *factor.Task.
type Density interface {
	LogDensity(z []float64) float64
}

// DrawsOf takes n draws from q, returning them with their log q values.
func DrawsOf(q Approx, rng *rand.Rand, n int) (*Draws, []float64) {
	dr, lq, _ := DrawsOfContext(context.Background(), q, rng, n)
	return dr, lq
}

// LookEvery is how many draws of dimension d a loop takes between looks at
// its context: about 2¹⁶/d² (a full-rank Gaussian's draw or log density
// costs ~d² flops, 1.7·10⁷ at d = 4096, where every draw looks), so a
// cancel waits for ~10⁵ flops of draws whatever d, and a small d does not
// pay a look per draw.
func LookEvery(d int) int {
	return max(1, (1<<16)/max(1, d*d))
}

// DrawsOfContext is DrawsOf that looks at ctx every LookEvery(d) draws and
// returns its error.
func DrawsOfContext(ctx context.Context, q Approx, rng *rand.Rand, n int) (*Draws, []float64, error) {
	d := q.Dim()
	z := make([]float64, n*d)
	lq := make([]float64, n)
	every := LookEvery(d)
	draw := q.Rand
	var four func(rng *rand.Rand, z, lq []float64)
	if g, ok := q.(*Gaussian); ok {
		// The logs of L's diagonal once, not d per draw (the same bits).
		logDiag := g.logDiagonal()
		draw = func(rng *rand.Rand, z []float64) float64 { return g.rand(rng, z, logDiag) }
		if every >= 4 { // four draws between looks at most
			four = func(rng *rand.Rand, z, lq []float64) { g.randFour(rng, z, lq, logDiag) }
		}
	}
	for s, look := 0, 0; s < n; {
		if s >= look {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			look = s + every
		}
		if four != nil && s+4 <= n {
			four(rng, z[s*d:(s+4)*d], lq[s:s+4])
			s += 4
			continue
		}
		lq[s] = draw(rng, z[s*d:(s+1)*d])
		s++
	}
	return &Draws{D: d, Z: z}, lq, nil
}

// SNISOf is afin's one self-normalised importance sampler: n proposals
// from q, weighted by p̃/q (SNIS). Every method with an importance step
// (AFIN+SNIS, FRVI+SNIS) goes through it, so the proposals, the target
// evaluations and the diagnostics are the same for all of them.
func SNISOf(ctx context.Context, target Density, q Approx, rng *rand.Rand, n int) (*Draws, SNISInfo, error) {
	dr, lq := DrawsOf(q, rng, n)
	return SNISDraws(ctx, target, dr, lq)
}

// SNISDraws weights given proposal draws (with their log q) by p̃/q. It
// serves proposals that come out of a sampler in one piece, such as the
// AFIN flow decoder's graph. The returned draws keep the log p̃ values
// (Draws.LogP), so EnergyGap need not evaluate the target again.
func SNISDraws(ctx context.Context, target Density, proposals *Draws, logQ []float64) (*Draws, SNISInfo, error) {
	lp, err := LogDensities(ctx, target, proposals)
	if err != nil {
		return nil, SNISInfo{}, fmt.Errorf("snis: %w", err)
	}
	dr, info, err := SNIS(proposals.D, proposals.Z, logQ, lp)
	if dr != nil {
		dr.LogP = lp
	}
	return dr, info, err
}
