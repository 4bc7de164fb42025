package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/reference"
	"github.com/afin-bench/afin/suite"
)

// ExternalSuite holds models written the way applied users write them,
// not the way afin's simulator draws tasks: wide priors (scales 10 to
// 100), covariates on their raw scales (ages, doses, distances in the
// hundreds), binomial counts of 20 to 100 trials, narrow conjugate
// posteriors and heavy-tailed noise. Each model's data are drawn, seeded,
// from a fixed true parameter. Every (d, N) lies inside the shipped
// checkpoint's (d ≤ 16, N ≤ 256), so a method that answers wrongly there
// without a flag has no excuse in the task's size; the suite is the test
// bed of the trust flags (docs/external-suite.md, `afin report trust`).
const ExternalSuite = suite.External

// externalSuite holds the models below; its references are held to the
// suite's stricter bar (ExternalReference).
type externalSuite struct {
	BaseSuite
	info suite.Info
}

func init() { Register(externalSuite{info: builtinInfo(ExternalSuite)}) }

func (s externalSuite) Info() suite.Info { return s.info }

func (externalSuite) Settings(*Profile) ([]Setting, error) { return externalSettings(), nil }

func (externalSuite) Plans(p *Profile) []Plan { return p.externalPlans() }

// Ladder: one budget per method, as the extrapolation suite's.
func (externalSuite) Ladder(p *Profile, kind string) []int { return extrapBudgetOf(p).ladder(kind) }

func (externalSuite) Task(_ *Config, s Setting, seed uint64) (*factor.Task, error) {
	return ExternalTask(s, seed)
}

func (externalSuite) Reference(cacheDir string) ReferenceFunc { return ExternalReference(cacheDir) }

// External references are held to a stricter bar than the other suites':
// a method is judged "accurate" within a fraction of a reference sd, so the
// reference's own Monte Carlo error must be far below that. A NUTS
// reference that misses these is refused (the task's units fail) rather
// than used.
const (
	externalMaxRhat  = 1.01
	externalMinESS   = 4000
	externalRefDraws = 40000 // at least, over 4 chains
)

// externalModel is one model of the suite.
type externalModel struct {
	key        string
	prior      string
	likelihood string
	d, n       int
	// about is the one line docs/external-suite.md shows.
	about string
	// build draws the data from the model's true parameter.
	build func(g *gen) (*factor.Task, error)
}

// externalSettings are the suite's settings; the group is the
// likelihood family.
func externalSettings() []Setting {
	out := make([]Setting, len(externalModels))
	for i, m := range externalModels {
		out[i] = Setting{Suite: ExternalSuite, Key: m.key, Group: m.likelihood,
			Prior: m.prior, Likelihood: m.likelihood, D: m.d, N: m.n}
	}
	return out
}

// ExternalTask builds the task of an external setting under seed: the
// model's data drawn from a PCG stream keyed by the setting and the seed.
func ExternalTask(s Setting, seed uint64) (*factor.Task, error) {
	for _, m := range externalModels {
		if m.key != s.Key {
			continue
		}
		t, err := m.build(&gen{rng: taskRNG(s, seed)})
		if err != nil {
			return nil, fmt.Errorf("external model %s: %w", m.key, err)
		}
		if t.D != m.d || t.N() != m.n {
			return nil, fmt.Errorf("external model %s: built d=%d N=%d, declared d=%d N=%d", m.key, t.D, t.N(), m.d, m.n)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("external model %s: %w", m.key, err)
		}
		t.Name = fmt.Sprintf("%s/%s/seed%d", ExternalSuite, s.Key, seed)
		return t, nil
	}
	return nil, fmt.Errorf("no external model %q", s.Key)
}

// externalPlans are one budget per method, as the extrapolation suite's:
// the table asks whether each method's answer can be trusted, not how it
// improves with budget. exact is opt-in (conjugate models only).
func (p *Profile) externalPlans() []Plan {
	b := extrapBudgetOf(p)
	n := b.draws
	o := p.options(n)
	o.NUTS.Warmup = b.nutsWarmup
	auto := n - n%max(o.Auto.Chains, 1)
	return []Plan{
		{Method: methods.AFIN, Ladder: []int{n}, Options: o},
		{Method: methods.AFINSNIS, Ladder: []int{n}, Options: o},
		{Method: methods.NUTS, Ladder: []int{n}, Options: o},
		{Method: methods.FRVI, Ladder: []int{b.frviSteps}, Options: o},
		{Method: methods.Auto, Ladder: []int{auto}, Options: o},
		{Method: methods.Exact, Ladder: []int{n}, Options: o, OptIn: true},
	}
}

// externalReferenceSettings are the profile's reference settings raised
// to the suite's bar: at least 40,000 draws over 4 chains after 1,000
// warm-up, a dense mass matrix (raw covariate scales make the posteriors
// strongly correlated), 10,000 kept draws (bulk ESS is measured on them,
// so 4,000 must be reachable) and the suite's R̂ and ESS limits.
func externalReferenceSettings(p *Profile) reference.Settings {
	s := p.Reference
	// Settings that do not resolve are left as they are: reference.Get
	// resolves them again and returns the error.
	if r, err := s.Resolve(); err == nil {
		s = r
	}
	s.Draws = max(s.Draws, externalRefDraws)
	s.Warmup = max(s.Warmup, 1000)
	s.Chains = max(s.Chains, 4)
	s.Subsample = max(s.Subsample, 10000)
	s.Dense = true
	s.MaxRhat, s.MinESS = externalMaxRhat, externalMinESS
	return s
}

// ExternalReference is the external suite's ReferenceFunc: exact where
// conjugate, else a long NUTS run cached under cacheDir ("" = the default
// cache) that must have R̂ ≤ 1.01 and bulk ESS ≥ 4,000 on every
// coordinate. Unlike CachedReference it refuses a reference that misses
// the bar, cached or fresh, since the suite's verdicts are only as good
// as its references.
func ExternalReference(cacheDir string) ReferenceFunc {
	return func(ctx context.Context, task *factor.Task, p *Profile) (*Reference, error) {
		s := externalReferenceSettings(p)
		s.CacheDir = cacheDir
		ref, err := reference.Get(ctx, task, s)
		if err != nil {
			return nil, err
		}
		// A cached entry was checked against the limits of the run that
		// wrote it, which may be looser than these.
		if err := checkExternalReference(ref); err != nil {
			return nil, err
		}
		return referenceFrom(ref, true), nil
	}
}

// ErrExternalReference: a NUTS reference misses the external suite's bar.
var ErrExternalReference = errors.New("external suite: NUTS reference misses the suite's bar")

// checkExternalReference refuses a NUTS reference with R̂ above 1.01 or
// bulk ESS below 4,000 (NaN fails both); exact references pass.
func checkExternalReference(ref *reference.Reference) error {
	if ref.Kind != reference.KindNUTS {
		return nil
	}
	dg := ref.Diagnostics
	if !(dg.MaxRhat <= externalMaxRhat) || !(dg.MinESSBulk >= externalMinESS) {
		return fmt.Errorf("%w: R̂ %.4f (need ≤ %g), bulk ESS %.0f (need ≥ %d); rerun with a longer reference",
			ErrExternalReference, dg.MaxRhat, externalMaxRhat, dg.MinESSBulk, externalMinESS)
	}
	return nil
}

// gen draws a model's data.
type gen struct{ rng *rand.Rand }

func (g *gen) normal(mu, sd float64) float64 { return mu + sd*g.rng.NormFloat64() }
func (g *gen) uniform(lo, hi float64) float64 {
	return lo + (hi-lo)*g.rng.Float64()
}
func (g *gen) bernoulli(p float64) float64 {
	if g.rng.Float64() < p {
		return 1
	}
	return 0
}
func (g *gen) intn(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

// studentT is a standard Student-t draw with integer df: a normal over
// the root of a χ²_df/df built from df squared normals.
func (g *gen) studentT(df int) float64 {
	chi := 0.0
	for range df {
		v := g.rng.NormFloat64()
		chi += v * v
	}
	return g.rng.NormFloat64() / math.Sqrt(chi/float64(df))
}

// binomial draws Binomial(n, p) by summing Bernoulli draws (n ≤ 100).
func (g *gen) binomial(n int, p float64) float64 {
	k := 0.0
	for range n {
		k += g.bernoulli(p)
	}
	return k
}

func dotv(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func fill(d int, v float64) []float64 {
	out := make([]float64, d)
	for i := range out {
		out[i] = v
	}
	return out
}

func diagGaussian(d int, scale float64) factor.Prior {
	return &factor.DiagGaussian{Loc: make([]float64, d), Scale: fill(d, scale)}
}

func diagLaplace(d int, scale float64) factor.Prior {
	return &factor.DiagLaplace{Loc: make([]float64, d), Scale: fill(d, scale)}
}

func diagStudentT(d int, scale, df float64) factor.Prior {
	return &factor.DiagStudentT{Loc: make([]float64, d), Scale: fill(d, scale), DF: df}
}

// fullRank is N(0, Σ) with Σ = diag(sd)·R·diag(sd) and R the
// equicorrelation matrix with correlation rho, as a precision.
func fullRank(sd []float64, rho float64) (factor.Prior, error) {
	d := len(sd)
	// (1−ρ)I + ρ11ᵀ has inverse (I − ρ/(1+(d−1)ρ)·11ᵀ)/(1−ρ).
	c := rho / (1 + float64(d-1)*rho)
	prec := make([]float64, d*d)
	for i := range d {
		for j := range d {
			v := -c
			if i == j {
				v = 1 - c
			}
			prec[i*d+j] = v / (1 - rho) / (sd[i] * sd[j])
		}
	}
	return factor.NewFullRankGaussian(make([]float64, d), prec)
}

// linTask is a regression task with rows x and responses y drawn by obs.
func linTask(prior factor.Prior, d int, rows [][]float64, obs func(x []float64) factor.Likelihood, truth []float64) *factor.Task {
	t := &factor.Task{D: d, Prior: prior, TrueZ: truth}
	for _, x := range rows {
		t.Factors = append(t.Factors, obs(x))
	}
	return t
}

// rows draws n design rows with row(i).
func rows(n int, row func(i int) []float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = row(i)
	}
	return out
}

func gaussianObs(g *gen, truth []float64, sigma float64) func(x []float64) factor.Likelihood {
	return func(x []float64) factor.Likelihood {
		return &factor.LinGaussian{X: x, Y: g.normal(dotv(x, truth), sigma), Sigma: sigma}
	}
}

func studentObs(g *gen, truth []float64, sigma float64, df int) func(x []float64) factor.Likelihood {
	return func(x []float64) factor.Likelihood {
		return &factor.LinStudentT{X: x, Y: dotv(x, truth) + sigma*g.studentT(df), Sigma: sigma, DF: float64(df)}
	}
}

func bernoulliObs(g *gen, truth []float64) func(x []float64) factor.Likelihood {
	return func(x []float64) factor.Likelihood {
		return &factor.BernoulliLogit{X: x, Y: g.bernoulli(sigmoid(dotv(x, truth)))}
	}
}

func binomialObs(g *gen, truth []float64) func(x []float64) factor.Likelihood {
	return func(x []float64) factor.Likelihood {
		n := g.intn(20, 100)
		return &factor.BinomialLogit{X: x, Y: g.binomial(n, sigmoid(dotv(x, truth))), Trials: n}
	}
}

// vectorTask is the "gaussian" family: n noisy copies of the truth.
func vectorTask(g *gen, prior factor.Prior, truth []float64, n int, sigma float64) *factor.Task {
	d := len(truth)
	t := &factor.Task{D: d, Prior: prior, TrueZ: truth}
	for range n {
		y := make([]float64, d)
		for i := range y {
			y[i] = g.normal(truth[i], sigma)
		}
		t.Factors = append(t.Factors, &factor.Gaussian{Y: y, Sigma: sigma})
	}
	return t
}

// externalModels are the suite's models. Their true parameters are on
// the scale an analyst's raw data give, so the posteriors sit far from
// the unit scales afin's simulator trains on.
var externalModels = []externalModel{
	{
		key: "radon_floor", prior: factor.DiagGaussianFamily, likelihood: factor.LinGaussianFamily, d: 3, n: 200,
		about: "log radon on floor and log uranium, σ = 0.75 known, N(0, 10²) prior (conjugate)",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{1.5, -0.7, 0.7}
			x := rows(200, func(int) []float64 { return []float64{1, g.bernoulli(0.2), g.normal(0, 0.35)} })
			return linTask(diagGaussian(3, 10), 3, x, gaussianObs(g, truth, 0.75), truth), nil
		},
	},
	{
		key: "kidiq_raw", prior: factor.DiagGaussianFamily, likelihood: factor.LinGaussianFamily, d: 4, n: 256,
		about: "child test score on mother's high school, raw IQ (≈100 ± 15) and age, σ = 18 known, N(0, 100²) prior (conjugate)",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{26, 6, 0.56, 0.2}
			x := rows(256, func(int) []float64 {
				return []float64{1, g.bernoulli(0.8), g.normal(100, 15), float64(g.intn(17, 29))}
			})
			return linTask(diagGaussian(4, 100), 4, x, gaussianObs(g, truth, 18), truth), nil
		},
	},
	{
		key: "earnings_height", prior: factor.FullRankGaussianFamily, likelihood: factor.LinGaussianFamily, d: 3, n: 256,
		about: "earnings (k$) on raw height in inches (≈66) and sex, σ = 19 known, correlated wide Gaussian prior, sds 100/10/10 (conjugate)",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{-60, 1.3, 10}
			prior, err := fullRank([]float64{100, 10, 10}, 0.3)
			if err != nil {
				return nil, err
			}
			x := rows(256, func(int) []float64 {
				male := g.bernoulli(0.5)
				return []float64{1, g.normal(64+5*male, 3), male}
			})
			return linTask(prior, 3, x, gaussianObs(g, truth, 19), truth), nil
		},
	},
	{
		key: "station_means", prior: factor.DiagGaussianFamily, likelihood: factor.GaussianFamily, d: 8, n: 40,
		about: "8 station means (−8 to 110) from 40 noisy vector readings, σ = 5 known, N(0, 50²) prior (conjugate)",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{12, 35, -8, 60, 110, 5, 22, 47}
			return vectorTask(g, diagGaussian(8, 50), truth, 40, 5), nil
		},
	},
	{
		key: "station_means_laplace", prior: factor.DiagLaplaceFamily, likelihood: factor.GaussianFamily, d: 6, n: 20,
		about: "6 means (±25) from 20 vector readings, σ = 3 known, Laplace(0, 10) prior",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{18, -25, 4, 0, 9, -12}
			return vectorTask(g, diagLaplace(6, 10), truth, 20, 3), nil
		},
	},
	{
		key: "narrow_lin16", prior: factor.DiagGaussianFamily, likelihood: factor.LinGaussianFamily, d: 16, n: 256,
		about: "16 coefficients, covariates N(0, 30²), σ = 0.1 known: posterior sds ≈ 2e-4, N(0, 10²) prior (conjugate)",
		build: func(g *gen) (*factor.Task, error) {
			truth := make([]float64, 16)
			for i := range truth {
				truth[i] = g.normal(0, 2)
			}
			x := rows(256, func(int) []float64 {
				r := make([]float64, 16)
				for i := range r {
					r[i] = g.normal(0, 30)
				}
				return r
			})
			return linTask(diagGaussian(16, 10), 16, x, gaussianObs(g, truth, 0.1), truth), nil
		},
	},
	{
		key: "lasso_raw", prior: factor.DiagLaplaceFamily, likelihood: factor.LinGaussianFamily, d: 12, n: 80,
		about: "12 coefficients, half zero, covariate sds 0.5 to 200, σ = 2 known, Laplace(0, 10) prior (Bayesian lasso)",
		build: func(g *gen) (*factor.Task, error) {
			sds := []float64{1, 0.5, 2, 5, 10, 20, 50, 100, 200, 1, 30, 3}
			truth := []float64{3, 0, -2, 0, 0.4, 0, -0.1, 0, 0.02, 1.5, 0, 0}
			x := rows(80, func(int) []float64 {
				r := make([]float64, 12)
				for i := range r {
					r[i] = g.normal(0, sds[i])
				}
				return r
			})
			return linTask(diagLaplace(12, 10), 12, x, gaussianObs(g, truth, 2), truth), nil
		},
	},
	{
		key: "wells_logit", prior: factor.DiagGaussianFamily, likelihood: factor.BernoulliLogitFamily, d: 4, n: 256,
		about: "switching wells on distance in metres (0–340), arsenic and years of education, N(0, 10²) prior",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{0, -0.009, 0.46, 0.04}
			x := rows(256, func(int) []float64 {
				dist := math.Min(340, -48*math.Log(1-g.rng.Float64()))
				arsenic := 0.5 + math.Exp(g.normal(0, 0.8))
				return []float64{1, dist, arsenic, float64(g.intn(0, 17))}
			})
			return linTask(diagGaussian(4, 10), 4, x, bernoulliObs(g, truth), truth), nil
		},
	},
	{
		key: "survey_logit_t", prior: factor.DiagStudentTFamily, likelihood: factor.BernoulliLogitFamily, d: 5, n: 200,
		about: "survey response on raw age (18–90), income in k$ (5–250), sex and schooling years, Student-t(3, 0, 10) prior",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{-3, 0.03, 0.01, 0.4, 0.08}
			x := rows(200, func(int) []float64 {
				income := math.Min(250, math.Max(5, math.Exp(g.normal(math.Log(50), 0.6))))
				return []float64{1, float64(g.intn(18, 90)), income, g.bernoulli(0.5), float64(g.intn(8, 20))}
			})
			return linTask(diagStudentT(5, 10, 3), 5, x, bernoulliObs(g, truth), truth), nil
		},
	},
	{
		key: "bioassay_dose", prior: factor.DiagGaussianFamily, likelihood: factor.BinomialLogitFamily, d: 2, n: 30,
		about: "deaths out of 20–100 animals on raw dose in mg (10–300), N(0, 10²) prior",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{-4, 0.03}
			x := rows(30, func(i int) []float64 { return []float64{1, 10 + 290*float64(i)/29} })
			return linTask(diagGaussian(2, 10), 2, x, binomialObs(g, truth), truth), nil
		},
	},
	{
		key: "clinics_laplace", prior: factor.DiagLaplaceFamily, likelihood: factor.BinomialLogitFamily, d: 6, n: 64,
		about: "recoveries out of 20–100 patients per clinic on treatment, mean age (30–70) and 3 regions, Laplace(0, 5) prior",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{-2.5, 0.8, 0.02, 0.3, -0.4, 0}
			x := rows(64, func(i int) []float64 {
				r := []float64{1, float64(i % 2), g.uniform(30, 70), 0, 0, 0}
				if k := (i / 2) % 4; k > 0 {
					r[2+k] = 1
				}
				return r
			})
			return linTask(diagLaplace(6, 5), 6, x, binomialObs(g, truth), truth), nil
		},
	},
	{
		key: "oring_t", prior: factor.DiagStudentTFamily, likelihood: factor.BinomialLogitFamily, d: 4, n: 48,
		about: "failures out of 20–100 parts on raw temperature (°F, 40–100), pressure (50–200) and batch, Student-t(4, 0, 25) prior",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{3, -0.05, 0.004, 0.5}
			x := rows(48, func(i int) []float64 {
				return []float64{1, g.uniform(40, 100), []float64{50, 100, 200}[i%3], float64(i % 2)}
			})
			return linTask(diagStudentT(4, 25, 4), 4, x, binomialObs(g, truth), truth), nil
		},
	},
	{
		key: "robust_raw_t", prior: factor.DiagGaussianFamily, likelihood: factor.LinStudentTFamily, d: 3, n: 150,
		about: "regression with t₃ noise (σ = 5) on raw covariates U(0, 200) and N(50, 20²), N(0, 100²) prior",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{20, 0.5, -1.2}
			x := rows(150, func(int) []float64 { return []float64{1, g.uniform(0, 200), g.normal(50, 20)} })
			return linTask(diagGaussian(3, 100), 3, x, studentObs(g, truth, 5, 3), truth), nil
		},
	},
	{
		key: "robust_fullrank_t", prior: factor.FullRankGaussianFamily, likelihood: factor.LinStudentTFamily, d: 6, n: 100,
		about: "regression with t₄ noise (σ = 2) on covariates with sds 1 to 100, correlated Gaussian prior with sds 10",
		build: func(g *gen) (*factor.Task, error) {
			truth := []float64{5, -1, 0.3, 0.05, 2, -0.02}
			prior, err := fullRank(fill(6, 10), 0.2)
			if err != nil {
				return nil, err
			}
			sds := []float64{0, 1, 10, 100, 1, 50}
			x := rows(100, func(int) []float64 {
				r := []float64{1, 0, 0, 0, 0, 0}
				for i := 1; i < 6; i++ {
					r[i] = g.normal(0, sds[i])
				}
				return r
			})
			return linTask(prior, 6, x, studentObs(g, truth, 2, 4), truth), nil
		},
	},
}
