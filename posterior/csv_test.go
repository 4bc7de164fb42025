package posterior

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestCSVRoundTrip(t *testing.T) {
	cases := []*Draws{
		{D: 1, Z: []float64{0.1, -2e-300, 3e300}},
		{D: 3, Z: []float64{1.0 / 3, math.Pi, -0, 7, 8, 9}, W: []float64{0.25, 0.75}},
	}
	for _, d := range cases {
		var b strings.Builder
		if err := WriteCSV(&b, d); err != nil {
			t.Fatal(err)
		}
		back, err := ReadCSV(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("%q: %v", b.String(), err)
		}
		if back.D != d.D || !slices.Equal(back.Z, d.Z) || !slices.Equal(back.W, d.W) {
			t.Errorf("round trip of %+v gave %+v", d, back)
		}
	}
}

func TestReadCSVErrors(t *testing.T) {
	for _, c := range []struct{ name, in, msg string }{
		{"empty", "", "draws file is empty"},
		{"bad column", "z1,x\n1,2\n", "column 2"},
		{"w not last", "z1,w,z2\n1,1,2\n", "final w"},
		{"only w", "w\n1\n", "column 1"},
		{"no rows", "z1\n", "no rows"},
		{"ragged", "z1,z2\n1\n", "wrong number of fields"},
		{"text", "z1\nabc\n", "line 2"},
		{"inf", "z1\n+Inf\n", "not finite"},
		{"negative weight", "z1,w\n1,-0.5\n", "negative weight"},
		{"zero weights", "z1,w\n1,0\n2,0\n", "sum to 0"},
	} {
		_, err := ReadCSV(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.msg)
		}
	}
	// Weights are renormalised on read.
	d, err := ReadCSV(strings.NewReader("z1,w\n1,2\n2,6\n"))
	if err != nil || !slices.Equal(d.W, []float64{0.25, 0.75}) {
		t.Errorf("renormalised weights %v (err %v)", d.W, err)
	}
}
