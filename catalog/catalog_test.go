package catalog

import (
	"slices"
	"testing"
)

func TestRegisterRefusesClashesAndBadEntries(t *testing.T) {
	base := Entry{Name: "t-base", Kind: "draws", Family: MCMC, Rank: 1, Reference: true}
	prefix := Entry{Name: "t-ext:", Prefix: true, Family: External, Rank: 2}
	for _, e := range []Entry{base, prefix} {
		if err := Register(e); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { Unregister(e.Name) })
	}
	tests := []struct {
		name string
		e    Entry
	}{
		{"no name", Entry{Kind: "draws", Family: MCMC}},
		{"duplicate", Entry{Name: "t-base", Kind: "draws", Family: MCMC}},
		{"covered by a prefix", Entry{Name: "t-ext:x", Kind: "draws", Family: MCMC}},
		{"prefix covering a name", Entry{Name: "t-b", Prefix: true, Family: External}},
		{"no budget kind", Entry{Name: "t-nokind", Family: MCMC}},
		{"unknown budget kind", Entry{Name: "t-kind", Kind: "seconds", Family: MCMC}},
		{"unknown family", Entry{Name: "t-fam", Kind: "draws", Family: "magic"}},
		{"second reference", Entry{Name: "t-ref", Kind: "draws", Family: MCMC, Reference: true}},
		{"workflow missing a stage", Entry{Name: "t-wf", Kind: "draws", Family: Amortised, Workflow: &Workflow{Network: "a", Fallback: "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Register(tt.e); err == nil {
				Unregister(tt.e.Name)
				t.Errorf("Register(%+v) accepted", tt.e)
			}
		})
	}
	for name, want := range map[string]bool{"t-base": true, "t-ext:x": true, "t-ext:": false, "t-bas": false} {
		if got := Known(name); got != want {
			t.Errorf("Known(%q) = %v, want %v", name, got, want)
		}
	}
	if got := Spellings(); !slices.Equal(got, []string{"t-base", "t-ext:NAME"}) {
		t.Errorf("Spellings() = %v", got)
	}
}

func TestRoles(t *testing.T) {
	wf := &Workflow{Network: "t-net", Weighted: "t-w", Fallback: "t-ref"}
	for _, e := range []Entry{
		{Name: "t-ref", Kind: "draws", Family: MCMC, Rank: 2, Reference: true, Baseline: true},
		{Name: "t-w", Kind: "proposals", Family: Amortised, Rank: 1, Weighted: true},
		{Name: "t-vi", Kind: "steps", Family: VI, Rank: 3, Baseline: true},
		{Name: "t-wf", Kind: "draws", Family: Amortised, Rank: 4, Workflow: wf},
	} {
		if err := Register(e); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { Unregister(e.Name) })
	}
	if r, ok := Reference(); !ok || r.Name != "t-ref" {
		t.Errorf("Reference() = %q, %v; want t-ref", r.Name, ok)
	}
	if got := Baselines(); !slices.Equal(got, []string{"t-ref", "t-vi"}) {
		t.Errorf("Baselines() = %v", got)
	}
	if got := Workflows(); len(got) != 1 || got[0].Workflow != wf {
		t.Errorf("Workflows() = %+v", got)
	}
	for name, want := range map[string]bool{"t-w": true, "t-ref": false, "nope": false} {
		if got := IsWeighted(name); got != want {
			t.Errorf("IsWeighted(%q) = %v, want %v", name, got, want)
		}
	}
}
