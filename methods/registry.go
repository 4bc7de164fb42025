package methods

import (
	"flag"
	"fmt"
	"sync"

	"github.com/afin-bench/afin/catalog"
)

// Descriptor is everything afin knows about one method: its identity
// (catalog.Entry: name, summary, budget kind, family, weights, report
// label and colour) and how to build it and bind its flags. Each method
// registers its descriptor from its own file; the CLI, the benchmark, the
// records and the report read the registry and know no method by name.
type Descriptor struct {
	catalog.Entry
	// New builds the method; name is the name asked for (for a prefix
	// entry, the full "exec:NAME").
	New func(name string, env *Env) (Method, error)
	// Slots is the slot list along a ladder, known without building the
	// method (the AFIN adapters need no network for it); nil when only a
	// built method knows (an external method's kind is in its file).
	Slots func(ladder []int) []Slot
	// Flags registers the method's `afin infer` flags on fs; nil: the
	// CLI binds them itself (external methods).
	Flags func(fs *flag.FlagSet, f *InferFlags)
	// AnySuite: `afin bench --methods NAME` adds the method to any suite,
	// at the profile's ladder of its budget kind (external methods, a
	// researcher's own). The built-in methods run where their suites
	// place them.
	AnySuite bool
}

// InferFlags are what a method's `afin infer` flags set; Options starts
// at DefaultOptions.
type InferFlags struct {
	Options *Options
	// Budget is the one-entry ladder.
	Budget *int
	// Kept is the flag value that sets how many draws come back
	// (--draws of a VI method, whose budget is steps); nil: Budget.
	Kept *int
	// Checkpoint is --checkpoint, for the methods that read one.
	Checkpoint *string
	// VI: the VI learning-rate protocol flags apply (--protocol, --lr,
	// --lr-select, --mc, …); the CLI binds them, as oracle selection
	// needs a reference posterior.
	VI bool
}

var (
	registryMu  sync.RWMutex
	descriptors = map[string]Descriptor{}
)

// Register adds a method to the registry (and its identity to package
// catalog). Built-in methods register from their files' init functions,
// where a clash is a programming error; a test registering a throw-away
// method gets the error back.
func Register(d Descriptor) error {
	if d.New == nil {
		return fmt.Errorf("methods: %q registered without a constructor", d.Name)
	}
	if err := catalog.Register(d.Entry); err != nil {
		return err
	}
	registryMu.Lock()
	descriptors[d.Name] = d
	registryMu.Unlock()
	return nil
}

// Unregister removes a method registered by a test.
func Unregister(name string) {
	registryMu.Lock()
	delete(descriptors, name)
	registryMu.Unlock()
	catalog.Unregister(name)
}

// mustRegister registers a built-in method.
func mustRegister(d Descriptor) {
	if err := Register(d); err != nil {
		panic(err)
	}
}

// Lookup finds a method's descriptor by the name a user gives (a prefix
// entry covers every "exec:NAME").
func Lookup(name string) (Descriptor, bool) {
	e, ok := catalog.Lookup(name)
	if !ok {
		return Descriptor{}, false
	}
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok := descriptors[e.Name]
	return d, ok
}

// Names lists the methods in the order the CLI shows them (external
// methods, "exec:NAME", are not listed).
func Names() []string { return catalog.Names() }

// New builds the named method. A method that cannot run here returns an
// error wrapping ErrUnavailable; an unknown name wraps ErrBadInput.
func New(name string, env *Env) (Method, error) {
	d, ok := Lookup(name)
	if !ok {
		return nil, badInput("unknown method %q (valid: %v)", name, Names())
	}
	return d.New(name, env)
}

// SlotsOf is the slot list of the named method along ladder, known
// without building it: a benchmark records the failed units of a method
// that cannot run here at exactly the points it would have filled. ok is
// false for an external or unknown name, whose budget kind lives in a
// methods file.
func SlotsOf(name string, ladder []int) (slots []Slot, ok bool) {
	d, ok := Lookup(name)
	if !ok || d.Slots == nil {
		return nil, false
	}
	if len(ladder) == 0 {
		return nil, true
	}
	return d.Slots(ladder), true
}
