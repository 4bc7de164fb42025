package engine

import "testing"

// The choice cmd/afin reads from AFIN_ENGINE and GOMLX_BACKEND: native
// unless GoMLX is asked for or would run on something other than its pure
// Go backend; provenance names it.
func TestChoice(t *testing.T) {
	for _, tc := range []struct {
		c      Choice
		native bool
		name   string
		bad    bool
	}{
		{Choice{}, true, "native", false},
		{Choice{Backend: "go"}, true, "native", false},
		{Choice{Backend: "go:ops_sequential"}, true, "native", false},
		{Choice{Backend: "xla:cuda"}, false, "gomlx:xla:cuda", false},
		{Choice{Engine: "gomlx"}, false, "gomlx:go", false},
		{Choice{Engine: "gomlx", Backend: "go"}, false, "gomlx:go", false},
		{Choice{Engine: "native", Backend: "xla:cuda"}, true, "native", false},
		{Choice{Engine: "cuda"}, false, "gomlx:go", true},
	} {
		n, err := tc.c.Native()
		if (err != nil) != tc.bad || n != tc.native {
			t.Errorf("%+v: Native() = %v, %v; want %v, error %v", tc.c, n, err, tc.native, tc.bad)
		}
		if got := tc.c.String(); got != tc.name {
			t.Errorf("%+v: String() = %q, want %q", tc.c, got, tc.name)
		}
	}
}
