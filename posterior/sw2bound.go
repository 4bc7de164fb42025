package posterior

import (
	"context"
	"math"
	"math/rand/v2"
)

// A lower bound on SW2 from two sets' first two moments, so that an oracle
// learning-rate selection can leave unscored the fits that cannot win
// (vi.SweepBounded): scoring one fit is 128 passes over up to 10⁷ draws,
// the bound is O(d²) per direction once the moments are known.
//
// On each direction the projections are 1-D distributions with means m_a,
// m_b and standard deviations s_a, s_b (divisor n, as the empirical
// measures have), and for any coupling of them
//
//	E(X−Y)² = (m_a−m_b)² + s_a² + s_b² − 2 Cov(X,Y) ≥ (m_a−m_b)² + (s_a−s_b)²,
//
// since Cov(X,Y) ≤ s_a s_b: the 1-D case of Gelbrich's bound. W2² is the
// smallest E(X−Y)² over couplings, so it obeys the bound too. SW2 returns
// each direction's W2² within a relative sw2RelTol when it bins, and to
// rounding otherwise; the bound gives that tolerance and a rounding margin
// away, so it stays below the value SW2 computes, not only the exact one.

// sw2BoundSlack is the rounding margin, relative to the directions'
// centred second moments: SW2's sums of 10⁷ terms round at ~10⁻¹³ of them.
const sw2BoundSlack = 1e-9

// SW2LowerBound is a lower bound on SW2(a, ref, seed) for every set a of
// draws whose mean is mean and whose covariance with divisor n (not n−1)
// is cov, row-major d×d: the value SW2 computes is never below it. It is
// NaN when the sizes differ, ref is empty or a moment is not finite.
func SW2LowerBound(mean, cov []float64, ref *Draws, seed uint64) float64 {
	d := len(mean)
	if ref == nil || ref.D != d || d == 0 || len(cov) != d*d || ref.Len() == 0 || (ref.W != nil && len(ref.W) != ref.Len()) {
		return math.NaN()
	}
	rm, rc, ok := populationMoments(ref)
	if !ok || !allFinite(mean) || !allFinite(cov) {
		return math.NaN()
	}
	dirs := sw2Directions(seed, DefaultDirections, d)
	var sum float64
	for k := range DefaultDirections {
		u := dirs[k*d : (k+1)*d]
		dm := dot(mean, u) - dot(rm, u)
		va, vb := math.Max(quadForm(cov, u), 0), math.Max(quadForm(rc, u), 0)
		sd := math.Sqrt(va) - math.Sqrt(vb)
		g := dm*dm + sd*sd
		// Rounding a draw's coordinates moves x by ~1e-16 |u·μ|, which
		// moves W2² by twice that times W2 at most.
		scale := math.Abs(dot(mean, u)) + math.Abs(dot(rm, u))
		lb := g*(1-2*sw2RelTol) - sw2BoundSlack*(dm*dm+va+vb) - 1e-12*scale*(math.Sqrt(va)+math.Sqrt(vb)+math.Abs(dm))
		sum += math.Max(lb, 0)
	}
	return math.Sqrt(sum/DefaultDirections) * (1 - 1e-12)
}

// quadForm is uᵀAu for A row-major.
func quadForm(a, u []float64) float64 {
	d := len(u)
	var s float64
	for i := range d {
		s += u[i] * dot(a[i*d:(i+1)*d], u)
	}
	return s
}

// populationMoments are the mean and covariance (divisor n, or the
// normalised weights) of the positive-weight draws of d; ok is false when
// there are none.
func populationMoments(d *Draws) (mean, cov []float64, ok bool) {
	dim, n := d.D, d.Len()
	var total float64
	for s := range n {
		if d.W == nil {
			total++
		} else if d.W[s] > 0 {
			total += d.W[s]
		}
	}
	if !(total > 0) {
		return nil, nil, false
	}
	weight := func(s int) float64 {
		if d.W == nil {
			return 1 / total
		}
		return math.Max(d.W[s], 0) / total
	}
	mean = make([]float64, dim)
	for s := range n {
		if w := weight(s); w > 0 {
			for i, v := range d.Row(s) {
				mean[i] += w * v
			}
		}
	}
	cov = make([]float64, dim*dim)
	r := make([]float64, dim)
	for s := range n {
		w := weight(s)
		if w == 0 {
			continue
		}
		for i, v := range d.Row(s) {
			r[i] = v - mean[i]
		}
		for i := range dim {
			for j := range dim {
				cov[i*dim+j] += w * r[i] * r[j]
			}
		}
	}
	return mean, cov, true
}

// momentChunk is the number of draws DrawMoments holds at once.
const momentChunk = 1 << 12

// DrawMoments takes n draws from q with rng, exactly the draws
// DrawsOfContext(ctx, q, rng, n) returns, and gives their mean and
// covariance with divisor n without holding them: chunks' moments are
// merged by Chan et al.'s pairwise update, which keeps the rounding near
// that of a two-pass computation. It looks at ctx between chunks.
func DrawMoments(ctx context.Context, q Approx, rng *rand.Rand, n int) (mean, cov []float64, err error) {
	d := q.Dim()
	mean, cov = make([]float64, d), make([]float64, d*d)
	buf := make([]float64, momentChunk*d)
	cm, cc := make([]float64, d), make([]float64, d*d)
	r := make([]float64, d)
	seen := 0
	for seen < n {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		m := min(momentChunk, n-seen)
		for s := range m {
			q.Rand(rng, buf[s*d:(s+1)*d])
		}
		clear(cm)
		clear(cc)
		for s := range m {
			for i, v := range buf[s*d : (s+1)*d] {
				cm[i] += v
			}
		}
		for i := range cm {
			cm[i] /= float64(m)
		}
		for s := range m {
			for i, v := range buf[s*d : (s+1)*d] {
				r[i] = v - cm[i]
			}
			for i := range d {
				for j := range d {
					cc[i*d+j] += r[i] * r[j]
				}
			}
		}
		// Merge the chunk's (mean, scatter) into the running ones.
		na, nb := float64(seen), float64(m)
		tot := na + nb
		for i := range d {
			r[i] = cm[i] - mean[i]
		}
		for i := range d {
			for j := range d {
				cov[i*d+j] += cc[i*d+j] + r[i]*r[j]*na*nb/tot
			}
		}
		for i := range d {
			mean[i] += r[i] * nb / tot
		}
		seen += m
	}
	if n > 0 {
		for i := range cov {
			cov[i] /= float64(n)
		}
	}
	return mean, cov, nil
}

// StandardMoments are the mean and covariance (divisor n) of the n
// standard normal vectors of dimension d that n calls of a Gaussian's
// Rand consume from rng, in the same order: a Gaussian's draws are an
// affine map of them (Gaussian.PushMoments), so one pass gives the
// moments of the draws of every Gaussian of dimension d from that stream.
func StandardMoments(ctx context.Context, rng *rand.Rand, d, n int) (mean, cov []float64, err error) {
	return DrawMoments(ctx, standardNormal(d), rng, n)
}

// standardNormal is N(0, I_d) drawn as Gaussian.Rand draws ε.
type standardNormal int

func (s standardNormal) Dim() int { return int(s) }

func (s standardNormal) Rand(rng *rand.Rand, z []float64) float64 {
	for i := range int(s) {
		z[i] = rng.NormFloat64()
	}
	return 0
}

func (s standardNormal) LogQ([]float64) float64 { return math.NaN() }
