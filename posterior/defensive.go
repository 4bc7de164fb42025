package posterior

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// DrawEvaluator is an approximate posterior that can be drawn from and
// evaluated anywhere, in batches: what importance weighting against a
// defensive mixture needs. It is afin's one "draw and evaluate" interface:
// the Gaussian family and the flows reach it through Batch (their Approx
// has LogQ, so the compiler refuses one that cannot be evaluated), and
// AFIN's flow decoder implements it with one network pass per batch.
type DrawEvaluator interface {
	Dim() int
	// Draws takes n draws with their log q.
	Draws(ctx context.Context, rng *rand.Rand, n int) (*Draws, []float64, error)
	// LogQs returns log q at each row of z (row-major, Dim columns).
	LogQs(ctx context.Context, z []float64) ([]float64, error)
}

// Batch is q as a DrawEvaluator.
func Batch(q Approx) DrawEvaluator { return pointwise{q} }

type pointwise struct{ q Approx }

func (p pointwise) Dim() int { return p.q.Dim() }

func (p pointwise) Draws(ctx context.Context, rng *rand.Rand, n int) (*Draws, []float64, error) {
	return DrawsOfContext(ctx, p.q, rng, n)
}

func (p pointwise) LogQs(ctx context.Context, z []float64) ([]float64, error) {
	d := p.q.Dim()
	out := make([]float64, len(z)/d)
	every := LookEvery(d)
	for s := range out {
		if s%every == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[s] = p.q.LogQ(z[s*d : (s+1)*d])
	}
	return out, nil
}

// DefensiveNu is the degrees of freedom of the defensive component: heavy
// enough tails to cover any Gaussian-tailed posterior q underdisperses,
// with a finite variance so its draws stay near q's scale.
const DefensiveNu = 4

// Defensive is importance sampling of a target from q's draws joined by as
// many draws of a multivariate Student-t with the given mean and covariance
// (q's, in practice), each weighted against the equal mixture of q and the
// t (Hesterberg 1995). Posterior mass in tails that q cuts short is then
// still sampled and the weights stay bounded for any posterior with
// Gaussian-like tails: an accurate fit whose tails are merely too light
// gets k̂ below 0.7, while mass beyond even the t, or a mode q misses,
// still raises it.
type Defensive struct {
	D int
	// Z holds q's n draws, then the t's n (row-major).
	Z []float64
	// LogW are the PSIS-smoothed, normalised log weights of Z (nil when
	// PSIS failed).
	LogW []float64
	// ParetoK is PSIS k̂ of the weights; ESS their Kish effective sample
	// size (NaN when PSIS failed).
	ParetoK, ESS float64
}

// DefensiveOf weights q's draws dq (with log q values lq) and n fresh
// Student-t draws from rng by target over the mixture. q's log density at
// the t's draws comes from one LogQs call. A PSIS failure (NaN or +Inf
// log weights, no finite one) is returned as an error together with the
// result, whose ParetoK then says what PSIS said.
func DefensiveOf(ctx context.Context, target Density, q DrawEvaluator, dq *Draws, lq, mean, cov []float64, rng *rand.Rand) (*Defensive, error) {
	d, n := dq.D, len(lq)
	if n == 0 || dq.Len() != n || len(mean) != d || len(cov) != d*d {
		return nil, fmt.Errorf("defensive weights: %d draws with %d log q values, mean of %d and covariance of %d entries for d=%d", dq.Len(), n, len(mean), len(cov), d)
	}
	t, err := newStudent(mean, cov)
	if err != nil {
		return nil, err
	}
	z := make([]float64, 2*n*d)
	copy(z, dq.Z)
	lt := make([]float64, 2*n)
	every := LookEvery(d)
	for s := range n {
		if s%every == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("defensive weights: %w", err)
			}
		}
		lt[n+s] = t.rand(rng, z[(n+s)*d:(n+s+1)*d])
		lt[s] = t.logProb(z[s*d : (s+1)*d])
	}
	lqt, err := q.LogQs(ctx, z[n*d:])
	if err != nil {
		return nil, fmt.Errorf("defensive weights: log q at the Student-t draws: %w", err)
	}
	lw := make([]float64, 2*n)
	for s := range lw {
		if s%every == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("defensive weights: %w", err)
			}
		}
		l := lqt[max(s-n, 0)]
		if s < n {
			l = lq[s]
		}
		lw[s] = target.LogDensity(z[s*d:(s+1)*d]) - logMix(l, lt[s])
	}
	res := &Defensive{D: d, Z: z, ESS: math.NaN()}
	slw, k, err := PSIS(lw)
	res.ParetoK = k
	if err != nil {
		return res, fmt.Errorf("importance weights of p̃/q: %w", err)
	}
	var sw2 float64
	for _, v := range slw {
		w := math.Exp(v)
		sw2 += w * w
	}
	res.LogW, res.ESS = slw, 1/sw2
	return res, nil
}

// Weighted returns the weighted draws (nil when PSIS failed).
func (r *Defensive) Weighted() *Draws {
	if r.LogW == nil {
		return nil
	}
	w := make([]float64, len(r.LogW))
	for s, v := range r.LogW {
		w[s] = math.Exp(v)
	}
	return &Draws{D: r.D, Z: r.Z, W: w}
}

// logMix is log(½eᵃ + ½eᵇ).
func logMix(a, b float64) float64 {
	m := math.Max(a, b)
	if math.IsInf(m, -1) {
		return m
	}
	return m + math.Log(0.5*(math.Exp(a-m)+math.Exp(b-m)))
}

// student is the multivariate t_ν(μ, LLᵀ), ν = DefensiveNu.
type student struct {
	mu, l []float64
	norm  float64 // log normaliser
	u     []float64
}

func newStudent(mean, cov []float64) (*student, error) {
	d := len(mean)
	l, ok := Cholesky(cov, d, 0)
	if !ok {
		return nil, errors.New("defensive weights: q's covariance is not positive definite")
	}
	s := &student{mu: mean, l: l, u: make([]float64, d)}
	nu, df := float64(DefensiveNu), float64(d)
	a, _ := math.Lgamma((nu + df) / 2)
	b, _ := math.Lgamma(nu / 2)
	s.norm = a - b - 0.5*df*math.Log(nu*math.Pi)
	for i := range d {
		s.norm -= math.Log(l[i*d+i])
	}
	return s, nil
}

// rand writes μ + Lε·√(ν/χ²_ν) into z and returns its log density.
func (s *student) rand(rng *rand.Rand, z []float64) float64 {
	d := len(s.mu)
	var chi float64
	for range DefensiveNu {
		e := rng.NormFloat64()
		chi += e * e
	}
	f := math.Sqrt(DefensiveNu / chi)
	for i := range s.u {
		s.u[i] = rng.NormFloat64()
	}
	for i := range d {
		v := 0.0
		for j := 0; j <= i; j++ {
			v += s.l[i*d+j] * s.u[j]
		}
		z[i] = s.mu[i] + f*v
	}
	return s.logProb(z)
}

// logProb is log t_ν(z; μ, LLᵀ).
func (s *student) logProb(z []float64) float64 {
	d := len(s.mu)
	var q float64
	for i := range d {
		s.u[i] = z[i] - s.mu[i]
	}
	SolveLower(s.l, s.u, s.u) // u = L⁻¹(z − μ)
	for _, v := range s.u {
		q += v * v
	}
	nu := float64(DefensiveNu)
	return s.norm - 0.5*(nu+float64(d))*math.Log1p(q/nu)
}
