package methods

import (
	"flag"
	"slices"
	"testing"

	"github.com/afin-bench/afin/catalog"
)

// The registry holds the built-in methods in the CLI's order, and each
// descriptor agrees with the method it builds: name, budget kind, slots.
func TestRegistryBuiltins(t *testing.T) {
	want := []string{"exact", "nuts", "frvi", "frvi-snis", "afin", "afin-snis", "afin-imh", "auto", "iaf", "maf", "nsf"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	ladder := []int{100, 200}
	for _, name := range want {
		d, ok := Lookup(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		slots, ok := SlotsOf(name, ladder)
		if !ok || len(slots) == 0 || slots[0].Kind != d.Kind {
			t.Errorf("%s: SlotsOf = %v, %v; kind %q", name, slots, ok, d.Kind)
		}
		if d.Network {
			continue // building it loads a checkpoint
		}
		m, err := New(name, &Env{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Name() != name || m.Kind() != d.Kind || !slices.Equal(m.Slots(ladder), slots) {
			t.Errorf("%s: built %s kind %s, descriptor kind %s", name, m.Name(), m.Kind(), d.Kind)
		}
	}
	if _, ok := Lookup(ExecPrefix + "mine"); !ok {
		t.Error("exec:NAME has no descriptor")
	}
	if _, ok := SlotsOf(ExecPrefix+"mine", ladder); ok {
		t.Error("an external method's slots are known without its methods file")
	}
	if got := catalog.InFamily(catalog.Amortised); !slices.Equal(got, []string{"afin", "afin-snis", "auto"}) {
		t.Errorf("amortised family = %v", got)
	}
}

// The roles the report reads from the catalog name registered methods,
// and the workflow's sampler checks are auto's own defaults.
func TestCatalogRoles(t *testing.T) {
	if ref, ok := catalog.Reference(); !ok || ref.Name != NUTS {
		t.Errorf("reference sampler = %q, %v; want %q", ref.Name, ok, NUTS)
	}
	if got := catalog.Baselines(); !slices.Equal(got, []string{NUTS, FRVI}) {
		t.Errorf("Baselines() = %v", got)
	}
	wfs := catalog.Workflows()
	if len(wfs) != 1 || wfs[0].Name != Auto {
		t.Fatalf("Workflows() = %+v, want auto alone", wfs)
	}
	w := wfs[0].Workflow
	for _, stage := range []string{w.Network, w.Weighted, w.Fallback} {
		if !catalog.Known(stage) {
			t.Errorf("workflow stage %q is not a registered method", stage)
		}
	}
	if !catalog.IsWeighted(w.Weighted) {
		t.Errorf("workflow's weighted stage %q is not Weighted", w.Weighted)
	}
	o := DefaultAutoOptions()
	if c := w.Checks; c.MaxRhat != o.MaxRhat || c.MinESSBulk != o.MinESSBulk || c.MaxDivergences != o.MaxDivergences {
		t.Errorf("catalog checks %+v differ from DefaultAutoOptions %+v", c, o)
	}
	// Every network method binds --checkpoint through the shared setup.
	for _, name := range catalog.NetworkMethods() {
		d, _ := Lookup(name)
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		f := &InferFlags{Options: new(DefaultOptions())}
		d.Flags(fs, f)
		if fs.Lookup("checkpoint") == nil || f.Checkpoint == nil {
			t.Errorf("%s binds no --checkpoint", name)
		}
	}
	// A weighted method names the registered method whose draws it
	// reweights (the report labels its proposal stage by it).
	for _, e := range catalog.All() {
		if e.Weighted && !catalog.Known(e.Proposal) {
			t.Errorf("weighted method %s names proposal %q, not a registered method", e.Name, e.Proposal)
		}
	}
	if got := catalog.NetworkMethods(); !slices.Equal(got, []string{AFIN, AFINSNIS, AFINIMH, Auto}) {
		t.Errorf("NetworkMethods() = %v", got)
	}
}
