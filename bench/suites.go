package bench

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/suite"
)

// Setting is one task specification of a suite. Simulated settings are
// turned into a task by a seeded draw from the simulator, so (setting,
// seed) names exactly one task; UCI settings name a dataset and the seed
// varies only the methods.
type Setting struct {
	Suite string
	Key   string // unique within the suite, e.g. "diag_gaussian/lin_gaussian/easy"

	// Group is the level reports split by: the difficulty (easy, medium,
	// hard) for synthetic/snis, the split (ood_d, ood_n, ood_dn) for
	// extrapolation, the dataset key for uci.
	Group string

	Prior      string // prior family; "" when chosen per seed (extrapolation)
	Likelihood string // likelihood family; "" when chosen per seed
	D, N       int
	Design     string
	Dataset    string // UCI dataset key
}

// Suite is everything bench knows of one benchmark suite; each suite is
// one file (suite_*.go) implementing it and registering it with
// Register, and Run, Profile.Plans and `afin bench` reach a suite only
// through the registry. BaseSuite gives the common behaviour.
type Suite interface {
	// Info is the suite's registry entry: its name and how its records
	// are scored (package suite).
	Info() suite.Info
	// Settings are the suite's settings under p; Run sorts them by key.
	Settings(p *Profile) ([]Setting, error)
	// Plans are the suite's methods under p with their budget ladders and
	// options, before the VI protocol's labels (see Profile.Plans).
	Plans(p *Profile) []Plan
	// Ladder is the ladder an external method (exec:NAME) with this
	// budget kind gets under p.
	Ladder(p *Profile, kind string) []int
	// Prepare checks and resolves what the suite's tasks need (raw data)
	// before the results store is opened, so a refused run writes nothing.
	Prepare(cfg *Config) error
	// Task builds the task of a setting under seed.
	Task(cfg *Config, s Setting, seed uint64) (*factor.Task, error)
	// Reference is the suite's reference policy: the posterior each task's
	// points are scored against, cached under cacheDir.
	Reference(cacheDir string) ReferenceFunc
}

// Runner is a Suite that runs its own way instead of as Run's units
// scored against a reference posterior (calibration ranks, held-out
// predictions, one run per checkpoint); Run hands it the config.
type Runner interface {
	Suite
	Run(ctx context.Context, cfg Config) (*Summary, error)
}

// BaseSuite is the behaviour most suites share; a suite embeds it and
// overrides what differs. Its tasks come from the simulator (or, for a
// setting naming a dataset, the UCI files under Config.DataDir), its
// reference is CachedReference, and external methods get the profile's
// ladder of the built-in methods that count the same budget.
type BaseSuite struct{}

// Settings refuses: a suite must list its own.
func (BaseSuite) Settings(*Profile) ([]Setting, error) {
	return nil, errors.New("the suite lists no settings")
}

// Ladder is the profile's ladder of the budget kind: NUTS's draws, FRVI's
// steps or the SNIS proposals.
func (BaseSuite) Ladder(p *Profile, kind string) []int { return p.kindLadder(kind) }

// Prepare has nothing to check.
func (BaseSuite) Prepare(*Config) error { return nil }

// Task draws a simulated setting's task (SimTask) or loads a UCI
// dataset's from cfg.DataDir (the seed does not change a UCI task; it only
// varies the methods).
func (BaseSuite) Task(cfg *Config, s Setting, seed uint64) (*factor.Task, error) {
	if s.Dataset == "" {
		return SimTask(s, seed)
	}
	dir, err := datasets.ResolveDir(cfg.DataDir, cfg.DataDirEnv)
	if err != nil {
		return nil, err
	}
	return datasets.Load(dir, s.Dataset)
}

// Reference is CachedReference.
func (BaseSuite) Reference(cacheDir string) ReferenceFunc { return CachedReference(cacheDir) }

// Register adds s to the suite registry (package suite), attaching its
// behaviour to a built-in suite's entry of the same Info, and returns a
// function that undoes the registration (for a test's throw-away suite).
// A second suite of the same name panics.
func Register(s Suite) (undo func()) { return suite.Register(s) }

// builtinInfo is a built-in suite's entry as package suite declares it,
// read before its behaviour is attached.
func builtinInfo(name string) suite.Info {
	s, ok := suite.Lookup(name)
	if !ok {
		panic("bench: no built-in suite " + name)
	}
	return s.Info()
}

// lookupSuite returns the registered suite of that name that bench can
// run.
func lookupSuite(name string) (Suite, error) {
	e, ok := suite.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown suite %q (valid: %s)", name, strings.Join(SuiteNames(), ", "))
	}
	s, ok := e.(Suite)
	if !ok {
		return nil, fmt.Errorf("suite %q is known by name only: this binary does not link how it runs", name)
	}
	return s, nil
}

// SuiteNames lists the suites `afin bench --suite` accepts, in the
// registry's order.
func SuiteNames() []string { return suite.Names() }

// DataDirEnv is the environment variable naming the suite's raw data
// directory when --data-dir is not given ("" when none applies).
func DataDirEnv(name string) string {
	if s, ok := suite.Lookup(name); ok {
		return s.Info().DataDirEnv
	}
	return ""
}

// Settings returns the settings of a suite whose settings do not depend
// on the profile, in the suite's order.
func Settings(name string) ([]Setting, error) {
	s, err := lookupSuite(name)
	if err != nil {
		return nil, err
	}
	return s.Settings(nil)
}

// taskRNG is the task-generating stream of (setting, seed): a fixed hash
// of the setting's suite-independent identity and the seed, so the snis
// suite sees the very tasks of the synthetic suite.
func taskRNG(s Setting, seed uint64) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "task|%s|%d|%d", s.Key, s.D, s.N)
	return rand.New(rand.NewPCG(h.Sum64(), seed))
}

// hashString is a stable 64-bit hash used for seeds and shards.
func hashString(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}
