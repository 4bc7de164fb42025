package methods

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLREdgeFlags(t *testing.T) {
	lrs := []float64{1e-3, 1e-2, 1e-1}
	tests := []struct {
		name   string
		lrs    []float64
		chosen float64
		want   string // "" for no flag
	}{
		{"interior rate", lrs, 1e-2, ""},
		{"lowest rate", lrs, 1e-3, "0.001 is at the edge of the sweep [0.001, 0.1]"},
		{"highest rate", lrs, 1e-1, "at the edge"},
		{"a single fixed rate", []float64{1e-2}, 1e-2, ""},
	}
	for _, tc := range tests {
		f := lrEdgeFlags(tc.lrs, tc.chosen)
		switch {
		case tc.want == "" && f != nil:
			t.Errorf("%s: flagged %+v", tc.name, f)
		case tc.want != "" && (f == nil || f.Converged == nil || *f.Converged || !strings.Contains(f.ConvergenceReason, tc.want)):
			t.Errorf("%s: flags %+v, want not converged with %q", tc.name, f, tc.want)
		}
	}
}

// The flags reach `afin infer --json` as diagnostics fields.
func TestFlagsInDiagnosticsJSON(t *testing.T) {
	d := Diagnostics{Flags: &Flags{OutsideSupport: "d=16 > 8"}}
	d.Flags.Converged = NotConverged("x").Converged
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); !strings.Contains(s, `"outside_support":"d=16 \u003e 8"`) || !strings.Contains(s, `"converged":false`) {
		t.Errorf("diagnostics JSON %s lacks the flags", s)
	}
}
