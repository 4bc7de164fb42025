package catalog

import (
	"slices"
	"testing"
)

func TestRegisterRefusesClashesAndBadEntries(t *testing.T) {
	base := Entry{Name: "t-base", Kind: "draws", Family: MCMC, Rank: 1}
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
