package methods

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
)

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

// AFIN on a task beyond the shipped checkpoint's training support (d=16,
// N=256 against d ≤ 8, N ≤ 64) marks every point it emits, and a task
// inside it is not marked.
func TestAFINMarksTasksOutsideSupport(t *testing.T) {
	env := &Env{Checkpoint: filepath.Join("..", "checkpoints", "small-gaussian")}
	tests := []struct {
		name    string
		d, n    int
		outside bool
	}{
		{"inside", 4, 32, false},
		{"d=16, N=256", 16, 256, true},
	}
	for _, name := range []string{"afin", "afin-snis"} {
		m, err := New(name, env)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests {
			task, err := factor.Simulate(rand.New(rand.NewPCG(1, 2)), factor.SimOptions{D: tc.d, N: tc.n,
				Prior: "diag_gaussian", Likelihoods: []string{"gaussian"}, Design: factor.DesignIID})
			if err != nil {
				t.Fatal(err)
			}
			job := &Job{Task: task, Seed: 1, Ladder: []int{100}, SkipProposal: true}
			err = m.Run(context.Background(), job, func(p Point) error {
				got := p.Diagnostics.Flags != nil && p.Diagnostics.Flags.OutsideSupport != ""
				if got != tc.outside {
					t.Errorf("%s on %s: outside flag %v, want %v (%+v)", name, tc.name, got, tc.outside, p.Diagnostics.Flags)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
