package methods

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/factor"
)

// TestAFINWarmupOnlyWhereItCompiles: on the native engine an AFIN point
// costs one pass and its diagnostics carry no warm-up; on GoMLX (here its
// pure Go backend) the first point of a shape reports the compiling pass
// in warmup_seconds, apart from its seconds, and a second point of the
// same shape has none.
func TestAFINWarmupOnlyWhereItCompiles(t *testing.T) {
	task, err := factor.Simulate(rand.New(rand.NewPCG(3, 4)), factor.SimOptions{D: 2, N: 8,
		Prior: "diag_gaussian", Likelihoods: []string{"gaussian"}, Design: factor.DesignIID})
	if err != nil {
		t.Fatal(err)
	}
	warmups := func(engine string) []float64 {
		m, err := New("afin", &Env{Checkpoint: filepath.Join("..", "checkpoints", "small-gaussian"),
			Engine: afin.EngineChoice{Engine: engine, Backend: "go"}})
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for range 2 {
			job := &Job{Task: task, Seed: 1, Ladder: []int{10}, SkipProposal: true}
			err := m.Run(context.Background(), job, func(p Point) error {
				dg := p.Diagnostics.AFINDiagnostics
				data, err := json.Marshal(p.Diagnostics)
				if err != nil {
					return err
				}
				if has := strings.Contains(string(data), `"warmup_seconds"`); has != (dg.WarmupSeconds > 0) {
					t.Errorf("%s: warmup_seconds %v in %s", engine, dg.WarmupSeconds, data)
				}
				if p.Seconds != float64(dg.ForwardSeconds+dg.SamplingSeconds) {
					t.Errorf("%s: seconds %v is not forward %v + sampling %v", engine, p.Seconds, dg.ForwardSeconds, dg.SamplingSeconds)
				}
				out = append(out, float64(dg.WarmupSeconds))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	if w := warmups("native"); w[0] != 0 || w[1] != 0 {
		t.Errorf("native engine ran warm-up passes: %v s", w)
	}
	if w := warmups("gomlx"); !(w[0] > 0) || w[1] != 0 {
		t.Errorf("GoMLX engine: warm-up %v s on the first point and %v s on the second; want > 0, then 0", w[0], w[1])
	}
}
