package reference

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/moments"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
)

// Kinds of reference.
const (
	KindExact = "exact" // closed-form conjugate posterior
	KindNUTS  = "nuts"  // long NUTS run
)

// Profiles of reference settings: named presets of Settings.
const (
	ProfileSmoke = "smoke" // 2 chains × 1000 draws after 300 warm-up; tests and CI
	ProfileQuick = "quick" // 4 chains × 5000 draws after 1000 warm-up
	ProfilePaper = "paper" // 10⁶ draws after 10⁴ warm-up, as the paper
)

// presets are the profiles' settings. This table and Settings are the one
// place where reference budgets are named; bench profiles pick a preset
// and override fields.
var presets = map[string]Settings{
	ProfileSmoke: {Draws: 2000, Warmup: 300, Chains: 2, Subsample: 2000, MinESS: 100, MaxRhat: 1.01},
	ProfileQuick: {Draws: 20000, Warmup: 1000, Chains: 4, Subsample: 50000, MinESS: 400, MaxRhat: 1.01},
	ProfilePaper: {Draws: 1000000, Warmup: 10000, Chains: 4, Subsample: 50000, MinESS: 400, MaxRhat: 1.01},
}

// ProfileNames lists the presets in order of cost.
func ProfileNames() []string { return []string{ProfileSmoke, ProfileQuick, ProfilePaper} }

// Settings controls a reference. Zero values take the profile's.
type Settings struct {
	Profile string // "" means quick

	Draws  int // total post-warm-up draws over all chains
	Warmup int // warm-up iterations per chain
	Chains int
	Dense  bool   // dense mass matrix
	Seed   uint64 // NUTS seed, and the seed of an exact reference's subsample

	Subsample int // evenly thinned draws kept for SW2

	MinESS  float64 // bulk-ESS floor for caching
	MaxRhat float64 // R̂ must be below this

	CacheDir string // "" means DefaultCacheDir("")
	NoCache  bool   // neither read nor write the cache

	Progress io.Writer // progress bar for NUTS runs
}

// Resolve fills in the profile's values for zero fields and validates the
// settings.
func (s Settings) Resolve() (Settings, error) {
	if s.Profile == "" {
		s.Profile = ProfileQuick
	}
	p, ok := presets[s.Profile]
	if !ok {
		return s, fmt.Errorf("reference: unknown profile %q (valid: %s)", s.Profile, strings.Join(ProfileNames(), ", "))
	}
	fill := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&s.Draws, p.Draws)
	fill(&s.Warmup, p.Warmup)
	fill(&s.Chains, p.Chains)
	fill(&s.Subsample, p.Subsample)
	if s.MinESS == 0 {
		s.MinESS = p.MinESS
	}
	if s.MaxRhat == 0 {
		s.MaxRhat = p.MaxRhat
	}
	switch {
	case s.Chains < 1:
		return s, fmt.Errorf("reference: chains must be >= 1, got %d", s.Chains)
	case s.Draws < 4*s.Chains:
		return s, fmt.Errorf("reference: draws must be >= 4 per chain (%d), got %d", 4*s.Chains, s.Draws)
	case s.Warmup < 0:
		return s, fmt.Errorf("reference: warmup must be >= 0, got %d", s.Warmup)
	case s.Subsample < 4*s.Chains:
		return s, fmt.Errorf("reference: subsample must be >= 4 per chain (%d), got %d", 4*s.Chains, s.Subsample)
	}
	return s, nil
}

// Diagnostics describe how a NUTS reference was obtained.
type Diagnostics struct {
	Chains      int     `json:"chains"`
	Draws       int     `json:"draws"`
	Warmup      int     `json:"warmup"`
	Divergences int     `json:"divergences"`
	AcceptRate  float64 `json:"accept_rate"`
	StepSize    float64 `json:"step_size"`
	MinESSBulk  float64 `json:"ess_bulk"` // on the thinned subsample
	MinESSTail  float64 `json:"ess_tail"`
	MaxRhat     float64 `json:"rhat"`
	GradEvals   int64   `json:"grad_evals"`
	Seconds     float64 `json:"seconds"`
}

// Reference is a reference posterior.
type Reference struct {
	Kind        string
	D           int
	Mean        []float64 // over all draws (or exact)
	Cov         []float64 // row-major d×d, over all draws (or exact)
	Draws       *posterior.Draws
	Diagnostics Diagnostics // zero for exact references
	Key         string      // cache key (hex SHA-256)
	CacheHit    bool
	CachePath   string // where it is (or would be) cached; "" for exact or NoCache
}

// ConvergenceError reports a NUTS reference that failed the convergence
// check; it was not cached. Reference holds the failed run for
// inspection.
type ConvergenceError struct {
	Rhat, MaxRhat float64
	ESS, MinESS   float64
	Divergences   int
	Reference     *Reference
}

// Error names the failed criteria with their limits and how to rerun.
func (e *ConvergenceError) Error() string {
	return fmt.Sprintf("reference not converged, not cached: max R̂ %.4f (need < %.4g), min bulk ESS %.0f (need >= %.0f), %d divergences; run longer (--draws, --warmup) or with --dense-mass",
		e.Rhat, e.MaxRhat, e.ESS, e.MinESS, e.Divergences)
}

// DefaultCacheDir is where references are cached: root when it is set
// (the CLI passes $AFIN_CACHE_DIR), else the user cache directory's
// afin/references.
func DefaultCacheDir(root string) (string, error) {
	if root != "" {
		return root, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("reference: no cache directory (set AFIN_CACHE_DIR or pass one): %w", err)
	}
	return filepath.Join(base, "afin", "references"), nil
}

// cacheVersion changes whenever the file format or the algorithm's
// output for given settings changes, so stale entries are never read.
const cacheVersion = 2

// Key is the cache key of task under resolved settings s: the SHA-256 of
// the canonical task JSON and every setting that changes the result.
func Key(task *factor.Task, s Settings) (string, error) {
	// The name and the simulated true z do not change the posterior, so a
	// renamed copy of a task shares its reference.
	content := *task
	content.Name, content.TrueZ = "", nil
	data, err := factor.MarshalTask(&content)
	if err != nil {
		return "", fmt.Errorf("reference: encoding task for its cache key: %w", err)
	}
	h := sha256.New()
	h.Write(data)
	if factor.IsConjugate(task) {
		fmt.Fprintf(h, "\nafin-reference v%d exact subsample=%d seed=%d", cacheVersion, s.Subsample, s.Seed)
	} else {
		fmt.Fprintf(h, "\nafin-reference v%d nuts draws=%d warmup=%d chains=%d dense=%v subsample=%d seed=%d",
			cacheVersion, s.Draws, s.Warmup, s.Chains, s.Dense, s.Subsample, s.Seed)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Get returns the reference posterior of task: from the cache when
// present, else computed (and cached if it passes the convergence
// check). A NUTS run that fails the check returns the reference together
// with a *ConvergenceError.
func Get(ctx context.Context, task *factor.Task, s Settings) (*Reference, error) {
	s, err := s.Resolve()
	if err != nil {
		return nil, err
	}
	key, err := Key(task, s)
	if err != nil {
		return nil, err
	}
	if factor.IsConjugate(task) {
		ref, err := exact(task, s)
		if err != nil {
			return nil, err
		}
		ref.Key = key
		return ref, nil
	}
	var path string
	if !s.NoCache {
		dir := s.CacheDir
		if dir == "" {
			if dir, err = DefaultCacheDir(""); err != nil {
				return nil, err
			}
		}
		path = filepath.Join(dir, key+".gob")
		ref, err := load(path)
		switch {
		case err == nil:
			ref.Key, ref.CacheHit, ref.CachePath = key, true, path
			if ref.D != task.D {
				return nil, fmt.Errorf("reference: cache file %s has d=%d, task has d=%d", path, ref.D, task.D)
			}
			return ref, nil
		case !errors.Is(err, os.ErrNotExist):
			return nil, err
		}
	}
	ref, err := runNUTS(ctx, task, s)
	if err != nil {
		return nil, err
	}
	ref.Key, ref.CachePath = key, path
	dg := ref.Diagnostics
	if !(dg.MaxRhat < s.MaxRhat) || !(dg.MinESSBulk >= s.MinESS) {
		return ref, &ConvergenceError{Rhat: dg.MaxRhat, MaxRhat: s.MaxRhat, ESS: dg.MinESSBulk, MinESS: s.MinESS, Divergences: dg.Divergences, Reference: ref}
	}
	if path != "" {
		if err := save(path, ref); err != nil {
			return ref, err
		}
	}
	return ref, nil
}

// exact is the closed-form reference with a subsample from the Gaussian.
func exact(task *factor.Task, s Settings) (*Reference, error) {
	mean, cov, err := factor.ExactPosterior(task)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	rng := streams.New(s.Seed, streams.ExactReference)
	z, err := factor.GaussianDraws(rng, mean, cov, s.Subsample)
	if err != nil {
		return nil, fmt.Errorf("reference: sampling the exact posterior: %w", err)
	}
	return &Reference{Kind: KindExact, D: task.D, Mean: mean, Cov: cov, Draws: &posterior.Draws{D: task.D, Z: z}}, nil
}

// runNUTS runs the long chains, streaming every draw into per-chain
// moment accumulators and keeping an evenly thinned subsample.
func runNUTS(ctx context.Context, task *factor.Task, s Settings) (*Reference, error) {
	d := task.D
	perChain := (s.Draws + s.Chains - 1) / s.Chains
	thin := (s.Draws + s.Subsample - 1) / s.Subsample
	acc := make([]*moments.Welford, s.Chains)
	for i := range acc {
		acc[i] = moments.NewWelford(d, true)
	}
	start := time.Now()
	res, err := nuts.Sample(ctx, task, d, nuts.Config{
		Warmup: s.Warmup, Draws: perChain, Chains: s.Chains, Seed: s.Seed, Dense: s.Dense,
		Init: task.Prior.Location(), Thin: thin,
		OnDraw:   func(c int, z []float64) { acc[c].Add(z) },
		Progress: s.Progress,
	})
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	all := moments.NewWelford(d, true)
	for _, a := range acc {
		all.Merge(a)
	}
	ref := &Reference{
		Kind: KindNUTS, D: d, Mean: all.Mean(), Cov: all.Cov(), Draws: res.Draws(),
		Diagnostics: Diagnostics{
			Chains: s.Chains, Draws: perChain * s.Chains, Warmup: s.Warmup,
			Divergences: res.Divergences, AcceptRate: res.AcceptRate, StepSize: res.StepSize,
			MinESSBulk: res.Convergence.MinESSBulk, MinESSTail: res.Convergence.MinESSTail,
			MaxRhat: res.Convergence.MaxRhat, GradEvals: res.GradEvals,
			Seconds: time.Since(start).Seconds(),
		},
	}
	if math.IsNaN(ref.Diagnostics.MaxRhat) {
		ref.Diagnostics.MaxRhat = math.Inf(1)
	}
	if math.IsNaN(ref.Diagnostics.MinESSBulk) {
		ref.Diagnostics.MinESSBulk = 0
	}
	return ref, nil
}
