package afin

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The acceptance check of the shipped checkpoints on held-out conjugate
// tasks: the AFIN mean at least 2× closer to the exact posterior mean than
// the prior mean, AFIN+SNIS (10⁴ proposals) at least 10× closer, on
// average over the d ∈ {2,4,8} × N ∈ {8,32,64} cells. The flow decoder
// has no closed-form mean, so its AFIN mean is that of its draws.
func TestShippedCheckpointHeldOut(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the shipped networks with 10⁴ SNIS proposals per task")
	}
	for _, name := range []string{DefaultCheckpointName, "small-flow"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "checkpoints", name)
			if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err != nil {
				t.Fatalf("shipped checkpoint: %v", err)
			}
			m, err := Load(dir, EngineChoice{})
			if err != nil {
				t.Fatal(err)
			}
			cells, err := EvaluateConjugate(context.Background(), m, SmallGrid, 2026, 4, 10000)
			if err != nil {
				t.Fatal(err)
			}
			var prior, afin, snis float64
			for _, c := range cells {
				t.Logf("d=%d N=%2d: M1 prior %.4f  afin %.4f  afin+snis %.4f", c.D, c.N, c.M1Prior, c.M1AFIN, c.M1SNIS)
				prior += c.M1Prior
				afin += c.M1AFIN
				snis += c.M1SNIS
			}
			t.Logf("mean M1: prior %.4f afin %.4f (%.1f× closer) afin+snis %.4f (%.1f× closer)", prior/9, afin/9, prior/afin, snis/9, prior/snis)
			if afin > prior/2 {
				t.Errorf("AFIN mean is only %.2f× closer than the prior mean, want ≥ 2×", prior/afin)
			}
			if snis > prior/10 {
				t.Errorf("AFIN+SNIS mean is only %.2f× closer than the prior mean, want ≥ 10×", prior/snis)
			}
		})
	}
}
