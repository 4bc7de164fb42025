package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/afin-bench/afin/baselines/flows"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// Method is one inference method as the runner sees it. An adapter file
// (method_<name>.go) wraps each package behind it.
type Method interface {
	// Name is the method's CLI name (nuts, frvi, afin, afin-snis, ...).
	Name() string
	// Slots lists the points a run of plan emits, so the runner can tell
	// a finished unit from a partial one without running it.
	Slots(plan Plan) []Slot
	// Run runs the method on job.Task along job.Plan.Ladder and calls emit
	// once per slot, in any order. Each Point carries the draws to score
	// and the method's own wall-clock seconds for that budget.
	Run(ctx context.Context, job *Job, emit func(Point) error) error
}

// Slot names one point of a unit: its stage ("" or "proposal"), budget
// kind and budget.
type Slot struct {
	Stage  string
	Kind   string
	Budget int
}

// Job is what a method gets for one unit.
type Job struct {
	Task    *factor.Task
	Setting Setting
	// Seed seeds all of the method's randomness for this unit; it is a
	// hash of (setting, seed, method, variant), so reruns reproduce.
	Seed uint64
	Plan Plan
	// Score is SW2 against the unit's reference; methods that tune a
	// hyperparameter against the reference (the paper's FRVI learning-rate
	// sweep) use it to pick the best setting per budget.
	Score  func(*posterior.Draws) float64
	Stderr io.Writer
}

// Point is one scored output of a method.
type Point struct {
	Slot
	Draws       *posterior.Draws
	Seconds     float64
	Diagnostics map[string]float64
	Settings    map[string]any
}

// MethodEnv carries what adapters may need from the command line.
type MethodEnv struct {
	Checkpoint string // AFIN checkpoint directory; "" finds the shipped one
	Stderr     io.Writer

	// afin is the network shared by the AFIN adapters of one run.
	afin *afinShared
}

func (e *MethodEnv) afinNet() *afinShared {
	if e.afin == nil {
		e.afin = &afinShared{}
	}
	return e.afin
}

// methodFactory builds a method, or says why it is unavailable (a missing
// checkpoint, say).
type methodFactory func(env MethodEnv) (Method, error)

// builtinMethods maps each method name to its adapter. Adding a method is
// one adapter file plus one line here.
func builtinMethods() map[string]methodFactory {
	return map[string]methodFactory{
		"afin":      newAFINMethod,
		"afin-snis": newAFINSNISMethod,
		"nuts":      newNUTSMethod,
		"frvi":      newFRVIMethod,
		"frvi-snis": newFRVISNISMethod,
		"iaf":       newFlowMethod(flows.IAF),
		"maf":       newFlowMethod(flows.MAF),
		"nsf":       newFlowMethod(flows.NSF),
	}
}

// ladderSlots is the slot list of a plain ladder method.
func ladderSlots(kind string, ladder []int) []Slot {
	out := make([]Slot, len(ladder))
	for i, b := range ladder {
		out[i] = Slot{Kind: kind, Budget: b}
	}
	return out
}

// ResolveMethods builds the methods named in want (all built-in ones when
// want is empty) that the suite's plans use. Unavailable methods are an
// error when named explicitly and skipped with a note otherwise.
func ResolveMethods(plans []Plan, want []string, env MethodEnv, factories map[string]methodFactory) (map[string]Method, []string, error) {
	if factories == nil {
		factories = builtinMethods()
	}
	env.afinNet() // one network for both AFIN adapters
	used := map[string]bool{}
	optIn := map[string]bool{}
	for _, p := range plans {
		used[p.Method] = true
		if p.OptIn {
			optIn[p.Method] = true
		}
	}
	explicit := len(want) > 0
	if !explicit {
		for name := range used {
			if !optIn[name] {
				want = append(want, name)
			}
		}
		sort.Strings(want)
	}
	out := map[string]Method{}
	var notes []string
	for _, name := range want {
		if !used[name] {
			return nil, nil, fmt.Errorf("method %q is not part of this suite (its methods: %s)", name, strings.Join(keys(used), ", "))
		}
		f, ok := factories[name]
		if !ok {
			if explicit {
				return nil, nil, fmt.Errorf("method %q is not available in this build", name)
			}
			notes = append(notes, fmt.Sprintf("skipping %s: not available in this build", name))
			continue
		}
		m, err := f(env)
		if err != nil {
			if explicit {
				return nil, nil, fmt.Errorf("method %s: %w", name, err)
			}
			notes = append(notes, fmt.Sprintf("skipping %s: %v", name, err))
			continue
		}
		out[name] = m
	}
	return out, notes, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
