package bench

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
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

	// Prior and Likelihood are the families; "" when the suite picks them
	// per seed (Suite.Families), as extrapolation does.
	Prior      string
	Likelihood string
	D, N       int
	Design     string
	Dataset    string // UCI dataset key
}

// Suite is everything bench knows of one benchmark suite; each suite is
// one file (suite_*.go) implementing it and registering it with
// Register, and Run and `afin bench` reach a suite only through the
// registry. Every suite feeds the one run session (session.go) its units:
// settings × seeds × plans, each unit a method run on a task and scored
// into records. BaseSuite gives the common behaviour; a suite embeds it
// and overrides what differs.
type Suite interface {
	// Info is the suite's registry entry: its name and how its records
	// are scored (package suite).
	Info() suite.Info
	// Flags are the suite's own `afin bench` flags (as a method's
	// Descriptor.Flags); their values reach it in Config.SuiteFlags.
	Flags() []Flag
	// Settings are the suite's settings under p; Run sorts them by key.
	Settings(p *Profile) ([]Setting, error)
	// Seeds are the seeds a run of the suite uses under p, given the
	// seeds asked for (nil: the default), with a note for the user when
	// the suite does not take them as asked.
	Seeds(p *Profile, want []uint64) (seeds []uint64, note string)
	// Families are the prior and likelihood families of setting s under
	// seed (a suite may draw them per seed, as extrapolation does).
	Families(s Setting, seed uint64) (prior, likelihood string)
	// Plans are the suite's methods under p with their budget ladders and
	// options, before the VI protocol's labels (see Profile.Plans).
	Plans(p *Profile) []Plan
	// Ladder is the ladder an external method (exec:NAME) with this
	// budget kind gets under p.
	Ladder(p *Profile, kind string) []int
	// Prepare checks and resolves what the run's tasks need (raw data,
	// checkpoints) before the results store is opened, so a refused run
	// writes nothing.
	Prepare(cfg *Config, settings []Setting, seeds []uint64) error
	// Task builds the task of a setting under seed.
	Task(cfg *Config, s Setting, seed uint64) (*factor.Task, error)
	// Reference is the suite's reference policy: the posterior each task's
	// points are scored against, cached under cacheDir.
	Reference(cacheDir string) ReferenceFunc

	// scoring is how the session builds a task and what its points are
	// scored against (BaseSuite: the reference posterior).
	scoring() scoring
	// variantEnvs are the method environments of plan variants that run
	// on their own checkpoint (nil: every plan runs on Config.Env).
	variantEnvs(cfg *Config) map[string]*methods.Env
}

// Flag is one of a suite's own `afin bench` flags: a string the suite
// reads from Config.SuiteFlags under Name.
type Flag struct {
	Name, Usage string
}

// BaseSuite is the behaviour most suites share; a suite embeds it and
// overrides what differs. It declares no flags, takes the profile's seeds
// and the setting's families, its tasks come from the simulator (or, for
// a setting naming a dataset, the UCI files under Config.DataDir), its
// reference is CachedReference, and external methods get the profile's
// ladder of the built-in methods that count the same budget.
type BaseSuite struct{}

// Flags: none.
func (BaseSuite) Flags() []Flag { return nil }

// Settings refuses: a suite must list its own.
func (BaseSuite) Settings(*Profile) ([]Setting, error) {
	return nil, errors.New("the suite lists no settings")
}

// Seeds are want, or the profile's.
func (BaseSuite) Seeds(p *Profile, want []uint64) ([]uint64, string) {
	if len(want) > 0 {
		return want, ""
	}
	return p.Seeds, ""
}

// Families are the setting's own.
func (BaseSuite) Families(s Setting, _ uint64) (prior, likelihood string) {
	return s.Prior, s.Likelihood
}

// Ladder is the profile's ladder of the budget kind: NUTS's draws, FRVI's
// steps or the SNIS proposals.
func (BaseSuite) Ladder(p *Profile, kind string) []int { return p.kindLadder(kind) }

// Prepare has nothing to check.
func (BaseSuite) Prepare(*Config, []Setting, []uint64) error { return nil }

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

func (BaseSuite) scoring() scoring { return byReference{} }

func (BaseSuite) variantEnvs(*Config) map[string]*methods.Env { return nil }

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

// SuiteFlag is a suite's own flag with the suite that declares it.
type SuiteFlag struct {
	Suite string
	Flag
}

// SuiteFlags lists every registered suite's own flags, in the registry's
// order, for a command line to declare (`afin bench`).
func SuiteFlags() []SuiteFlag {
	var out []SuiteFlag
	for _, name := range SuiteNames() {
		if s, err := lookupSuite(name); err == nil {
			for _, f := range s.Flags() {
				out = append(out, SuiteFlag{Suite: name, Flag: f})
			}
		}
	}
	return out
}

// ErrSuiteFlag: a suite flag given to a suite that does not declare it.
var ErrSuiteFlag = errors.New("flag not of this suite")

// checkSuiteFlags refuses a value in flags that s does not declare.
func checkSuiteFlags(s Suite, flags map[string]string) error {
	own := map[string]bool{}
	for _, f := range s.Flags() {
		own[f.Name] = true
	}
	for _, name := range keys(flags) {
		if !own[name] {
			var of []string
			for _, f := range SuiteFlags() {
				if f.Name == name {
					of = append(of, f.Suite)
				}
			}
			return fmt.Errorf("%w: --%s is a flag of suite %s, not of %s", ErrSuiteFlag, name, strings.Join(of, ", "), s.Info().Name)
		}
	}
	return nil
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
