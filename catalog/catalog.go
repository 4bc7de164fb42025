// Package catalog is the table of inference methods: what each method is
// (name, summary, budget kind, family, report label and colour, whether
// its draws carry importance weights), without how to run it.
//
// Every other package that needs to know about a method reads this table
// instead of its own list of names: record validation (records), the
// report's labels, colours, legend order and tolerances (reports), the
// benchmark's plans (bench) and `afin infer` (cmd/afin). A method is one
// file in package methods whose init registers its descriptor
// (methods.Register), which puts the Entry here and keeps the constructor
// and flags beside it in methods.
//
// Why a package of its own, beside suite rather than under methods:
// records validates the method names a record carries, and methods
// imports records (its diagnostics are records.Num values), so the table
// records reads must sit below both; and reports reads the table
// (labels, colours, the roles below) without linking any method's code. The
// constructors need methods' types and stay there. A binary therefore
// knows the methods it links: every program that runs methods links
// package methods, and a program or test that only reads records
// imports it for its registrations.
//
// The table is written only by init functions (and by tests that
// register a throw-away method); it is read-only once main starts.
package catalog

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Family groups methods the way the report and the trust tolerances do.
type Family string

// Families.
const (
	// Exact: a closed-form posterior (conjugate tasks only).
	Exact Family = "exact"
	// Amortised: answers from one pass of the trained network, with or
	// without a reweighting; judged by the amortised trust tolerance.
	Amortised Family = "amortised"
	// MCMC: Markov chain samplers, asymptotically exact.
	MCMC Family = "mcmc"
	// VI: per-task variational optimisation.
	VI Family = "vi"
	// External: a method run as a separate program.
	External Family = "external"
)

// Entry is one method's identity.
type Entry struct {
	// Name is the method's CLI and record name. With Prefix set it is a
	// prefix: every non-empty name after it is a method of this entry
	// (the external "exec:NAME" methods).
	Name   string
	Prefix bool
	// Summary is one line on what the method does.
	Summary string
	// Kind is the budget kind of its ladder ("draws", "steps",
	// "proposals"); "" when each instance says (external methods).
	Kind   string
	Family Family
	// Weighted: its draws carry self-normalised importance weights.
	Weighted bool
	// Proposal names the method whose draws a weighted method reweights
	// (its proposal stage is that method's answer); "" for none.
	Proposal string
	// Network: it runs AFIN's trained network, so it reads a checkpoint
	// and its records carry the checkpoint's settings.
	Network bool
	// QualifiedBy names the weighted method whose Pareto k̂ and ESS are
	// shown beside this method's rows in the report as its warning
	// signal (AFIN's rows carry AFIN+SNIS's); "" for none.
	QualifiedBy string
	// Rank orders the CLI's list of methods (ascending).
	Rank int
	// Label is the report's (the paper's) spelling; "" means Name.
	Label string
	// Legend orders the report's legends and tables (ascending, from 1);
	// 0 lists the method after every ranked one.
	Legend int
	// Colour is its curves' colour in the report; "" takes one of the
	// fallback colours. VariantColours overrides it per variant
	// ("1k" → colour); a variant without one takes a fallback colour.
	Colour         string
	VariantColours map[string]string
	// Marker is its curves' ECharts symbol; "" means a circle.
	Marker string

	// Roles the report's tables read instead of method names.

	// Reference: the asymptotically exact sampler other answers are
	// checked against (NUTS).
	Reference bool
	// Baseline: one of the per-task methods the paper compares the
	// amortised ones with first (NUTS, FRVI).
	Baseline bool
	// Workflow, when set, says the method chains others (auto).
	Workflow *Workflow
}

// Workflow names the stages of a method that chains others: a network
// pass, a reweighting of its draws, and a reference sampler it falls back
// to, with the checks that sampler's answer must pass.
type Workflow struct {
	// Network is the one-pass method the workflow starts from (afin).
	Network string
	// Weighted reweights the network's draws (afin-snis).
	Weighted string
	// Fallback answers when the reweighting's diagnostics fail (nuts).
	Fallback string
	// Checks hold the fallback's answer to its convergence checks.
	Checks SamplerChecks
}

// SamplerChecks are the convergence checks a Markov chain answer is held
// to before it is trusted.
type SamplerChecks struct {
	MaxRhat        float64
	MinESSBulk     float64
	MaxDivergences int
}

// Spelling is how a user writes the entry's names: Name, or Name+"NAME"
// for a prefix entry.
func (e Entry) Spelling() string {
	if e.Prefix {
		return e.Name + "NAME"
	}
	return e.Name
}

// DisplayName is the report's spelling of the method.
func (e Entry) DisplayName() string {
	if e.Label != "" {
		return e.Label
	}
	return e.Name
}

var (
	mu      sync.RWMutex
	entries []Entry
)

// Register adds a method to the table. It refuses (with an error, so a
// test can check) an empty or duplicate name, a name one prefix entry
// already covers, an unknown budget kind or family, a workflow missing a
// stage, and a second reference sampler.
func Register(e Entry) error {
	if e.Name == "" {
		return fmt.Errorf("catalog: method with no name")
	}
	switch e.Kind {
	case "draws", "steps", "proposals":
	case "":
		if !e.Prefix {
			return fmt.Errorf("catalog: method %q has no budget kind", e.Name)
		}
	default:
		return fmt.Errorf("catalog: method %q: unknown budget kind %q", e.Name, e.Kind)
	}
	switch e.Family {
	case Exact, Amortised, MCMC, VI, External:
	default:
		return fmt.Errorf("catalog: method %q: unknown family %q", e.Name, e.Family)
	}
	if w := e.Workflow; w != nil && (w.Network == "" || w.Weighted == "" || w.Fallback == "") {
		return fmt.Errorf("catalog: workflow %q must name its network, weighted and fallback stages", e.Name)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, o := range entries {
		if e.Reference && o.Reference {
			return fmt.Errorf("catalog: method %q is a second reference sampler (%q is one)", e.Name, o.Name)
		}
		if o.Name == e.Name || (o.Prefix && strings.HasPrefix(e.Name, o.Name)) || (e.Prefix && strings.HasPrefix(o.Name, e.Name)) {
			return fmt.Errorf("catalog: method %q clashes with %q, registered before", e.Name, o.Spelling())
		}
	}
	entries = append(entries, e)
	return nil
}

// Unregister removes a method; tests use it to take back a throw-away
// method they registered.
func Unregister(name string) {
	mu.Lock()
	defer mu.Unlock()
	entries = slices.DeleteFunc(entries, func(e Entry) bool { return e.Name == name })
}

// Lookup finds the entry of a method name: its own, or the prefix entry
// that covers it.
func Lookup(name string) (Entry, bool) {
	mu.RLock()
	defer mu.RUnlock()
	for _, e := range entries {
		if e.Name == name && !e.Prefix {
			return e, true
		}
		if e.Prefix && len(name) > len(e.Name) && strings.HasPrefix(name, e.Name) {
			return e, true
		}
	}
	return Entry{}, false
}

// Known reports whether name is a registered method.
func Known(name string) bool {
	_, ok := Lookup(name)
	return ok
}

// All lists every entry in CLI order (Rank, then name), prefix entries
// included.
func All() []Entry {
	mu.RLock()
	out := slices.Clone(entries)
	mu.RUnlock()
	slices.SortStableFunc(out, func(a, b Entry) int {
		if a.Rank != b.Rank {
			return a.Rank - b.Rank
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Names lists the methods with a fixed name (not the prefix entries) in
// CLI order.
func Names() []string {
	var out []string
	for _, e := range All() {
		if !e.Prefix {
			out = append(out, e.Name)
		}
	}
	return out
}

// Spellings lists how a user writes every method: Names, then the prefix
// entries' patterns ("exec:NAME").
func Spellings() []string {
	out := Names()
	for _, e := range All() {
		if e.Prefix {
			out = append(out, e.Spelling())
		}
	}
	return out
}

// IsWeighted reports whether name is a registered method whose draws
// carry importance weights.
func IsWeighted(name string) bool {
	e, ok := Lookup(name)
	return ok && e.Weighted
}

// Reference is the reference sampler's entry; ok is false when none is
// registered.
func Reference() (Entry, bool) {
	for _, e := range All() {
		if e.Reference {
			return e, true
		}
	}
	return Entry{}, false
}

// Workflows lists the entries that chain other methods, in CLI order.
func Workflows() []Entry {
	var out []Entry
	for _, e := range All() {
		if e.Workflow != nil {
			out = append(out, e)
		}
	}
	return out
}

// Baselines lists the fixed-name baseline methods in CLI order.
func Baselines() []string {
	var out []string
	for _, e := range All() {
		if e.Baseline && !e.Prefix {
			out = append(out, e.Name)
		}
	}
	return out
}

// OfKind lists the fixed-name methods whose budget is of kind ("draws",
// "steps", "proposals") in CLI order.
func OfKind(kind string) []string {
	var out []string
	for _, e := range All() {
		if e.Kind == kind && !e.Prefix {
			out = append(out, e.Name)
		}
	}
	return out
}

// NetworkMethods lists the fixed-name methods that run AFIN's network,
// in CLI order.
func NetworkMethods() []string {
	var out []string
	for _, e := range All() {
		if e.Network && !e.Prefix {
			out = append(out, e.Name)
		}
	}
	return out
}

// InFamily lists the fixed-name methods of a family in CLI order.
func InFamily(f Family) []string {
	var out []string
	for _, e := range All() {
		if e.Family == f && !e.Prefix {
			out = append(out, e.Name)
		}
	}
	return out
}
