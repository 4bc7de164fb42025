package suite

import (
	"slices"
	"testing"
)

// withBehaviour stands in for a suite that carries behaviour (bench.Suite).
type withBehaviour struct{ info Info }

func (w withBehaviour) Info() Info { return w.info }

func panics(f func()) (did bool) {
	defer func() { did = recover() != nil }()
	f()
	return false
}

func TestBuiltins(t *testing.T) {
	want := []string{Synthetic, Extrapolation, SNIS, UCI, Decoders, Calibration, External, OpenML}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	for _, c := range []struct {
		name string
		want Scoring
	}{
		{Synthetic, ByReference}, {External, ByReference}, {Calibration, ByRanks}, {OpenML, ByPrediction},
		{"not-registered", ByReference},
	} {
		if got := ScoringOf(c.name); got != c.want {
			t.Errorf("%s: scoring %q, want %q", c.name, got, c.want)
		}
	}
}

// Attaching behaviour to a built-in keeps its place; undo restores the
// bare entry. A new suite goes last and undo removes it.
func TestRegisterAndUndo(t *testing.T) {
	s, _ := Lookup(Calibration)
	undo := Register(withBehaviour{s.Info()})
	if got, _ := Lookup(Calibration); got != (withBehaviour{s.Info()}) {
		t.Fatalf("calibration entry %#v after attaching behaviour", got)
	}
	if Names()[5] != Calibration {
		t.Errorf("calibration moved: %v", Names())
	}
	undo()
	if got, _ := Lookup(Calibration); got != s {
		t.Fatalf("undo left %#v", got)
	}

	n := len(Names())
	undo = Register(withBehaviour{Info{Name: "extra", Scoring: ByRanks}})
	if !Known("extra") || Names()[n] != "extra" || ScoringOf("extra") != ByRanks {
		t.Fatalf("extra not registered last: %v", Names())
	}
	undo()
	if Known("extra") || len(Names()) != n {
		t.Fatalf("undo left %v", Names())
	}
}

func TestRegisterRefuses(t *testing.T) {
	s, _ := Lookup(Synthetic)
	other := s.Info()
	other.Scoring = ByRanks
	for name, f := range map[string]func(){
		"no name":            func() { Register(Info{Scoring: ByReference}) },
		"unknown scoring":    func() { Register(Info{Name: "x", Scoring: "vibes"}) },
		"different identity": func() { Register(withBehaviour{other}) },
	} {
		if !panics(f) {
			t.Errorf("%s: registered", name)
		}
	}
	undo := Register(withBehaviour{s.Info()})
	defer undo()
	if !panics(func() { Register(withBehaviour{s.Info()}) }) {
		t.Error("a second behaviour for one suite registered")
	}
}
