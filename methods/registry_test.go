package methods

import (
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
