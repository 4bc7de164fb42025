package suite

import (
	"fmt"
	"sync"
)

// Scoring is how a suite's records are scored: its reference policy as
// the readers of records see it.
type Scoring string

const (
	// ByReference records carry M1, M2 and SW2 against a reference
	// posterior (exact where conjugate, long NUTS otherwise).
	ByReference Scoring = "reference"
	// ByRanks records carry simulation-based calibration ranks of a known
	// true parameter in their diagnostics; M1, M2 and SW2 are null.
	ByRanks Scoring = "ranks"
	// ByPrediction records carry held-out predictive scores in their
	// diagnostics; M1, M2 and SW2 are null.
	ByPrediction Scoring = "prediction"
)

// Info is what the registry knows of a suite by name.
type Info struct {
	Name    string
	Scoring Scoring
	// DataDirEnv names the environment variable a command line reads for
	// the suite's raw data directory when none is given ("" when the
	// suite needs none or its data package finds its own default).
	DataDirEnv string
}

// Suite is a registry entry: an Info alone (a built-in suite's identity
// before its behaviour is attached) or a suite with behaviour that also
// reports its Info (bench.Suite).
type Suite interface {
	Info() Info
}

// Info is an entry of its own: a suite known by identity only.
func (i Info) Info() Info { return i }

// registry holds the entries in registration order (the order suites are
// listed in help text and error messages). Registration happens at init
// and in tests; the lock keeps a test's registration safe beside readers.
var registry struct {
	sync.RWMutex
	order  []string
	byName map[string]Suite
}

// Register adds s under its name and returns a function that undoes the
// registration (for a test's throw-away suite). An entry that is only an
// Info (a built-in's identity) is replaced, in place, by a suite with the
// same Info: that attaches the suite's behaviour. Any other second
// registration of a name, an empty name or an unknown scoring is a
// programming error and panics.
func Register(s Suite) (undo func()) {
	info := s.Info()
	switch {
	case info.Name == "":
		panic("suite: registering a suite without a name")
	case info.Scoring != ByReference && info.Scoring != ByRanks && info.Scoring != ByPrediction:
		panic(fmt.Sprintf("suite: %s: unknown scoring %q", info.Name, info.Scoring))
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]Suite{}
	}
	prev, ok := registry.byName[info.Name]
	if ok {
		if bare, isInfo := prev.(Info); !isInfo || bare != info {
			panic(fmt.Sprintf("suite: %s registered twice", info.Name))
		}
	} else {
		registry.order = append(registry.order, info.Name)
	}
	registry.byName[info.Name] = s
	return func() {
		registry.Lock()
		defer registry.Unlock()
		if ok {
			registry.byName[info.Name] = prev
			return
		}
		delete(registry.byName, info.Name)
		for i, n := range registry.order {
			if n == info.Name {
				registry.order = append(registry.order[:i:i], registry.order[i+1:]...)
				break
			}
		}
	}
}

// Lookup returns the entry registered under name.
func Lookup(name string) (Suite, bool) {
	registry.RLock()
	defer registry.RUnlock()
	s, ok := registry.byName[name]
	return s, ok
}

// Known reports whether a suite of that name is registered.
func Known(name string) bool {
	_, ok := Lookup(name)
	return ok
}

// Names lists the registered suites in registration order.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	return append([]string(nil), registry.order...)
}

// ScoringOf is the scoring of the named suite; a name not registered is
// scored by reference, as most suites are (records of an unregistered
// suite are refused on read, so only records built in memory reach this).
func ScoringOf(name string) Scoring {
	if s, ok := Lookup(name); ok {
		return s.Info().Scoring
	}
	return ByReference
}
