package gomlx

import (
	"testing"

	"github.com/afin-bench/afin/afin/arch"
)

// The paper's programs at the largest bucket stay within a size: XLA
// compiled none of the 16 paper training programs of 1,640 products
// (28,890 nodes) within 235 s on an H100. The bounds sit a little above
// today's sizes, so a change that grows them is seen.
func TestProgramCensus(t *testing.T) {
	for _, tc := range []struct {
		cfg              arch.Config
		kind             string
		remat            bool
		maxNodes, maxDot int
	}{
		{arch.SmallConfig("gaussian"), "gaussian", false, 1500, 110},
		{arch.SmallConfig("gaussian"), "gaussian_loss", false, 4400, 195},
		{arch.PaperConfig("gaussian"), "gaussian", false, 3700, 260},
		{arch.PaperConfig("gaussian"), "gaussian_loss", false, 10200, 500},
		{arch.PaperConfig("gaussian"), "gaussian_loss", true, 17900, 710},
	} {
		e, err := newEngine(tc.cfg, false, "")
		if err != nil {
			t.Fatal(err)
		}
		e.SetRemat(tc.remat)
		pc, err := e.census(execKey{kind: tc.kind, p: allFamilies, b: 4, d: 16, np: 256, masked: true})
		if err != nil {
			t.Fatal(err)
		}
		nodes, dots := pc.Nodes, pc.MatrixProducts
		t.Logf("%s %s (remat %v): %d nodes, %d matrix products", tc.cfg.Name, tc.kind, tc.remat, nodes, dots)
		if nodes > tc.maxNodes || dots > tc.maxDot {
			t.Errorf("%s %s (remat %v): %d nodes and %d products, want at most %d and %d", tc.cfg.Name, tc.kind, tc.remat, nodes, dots, tc.maxNodes, tc.maxDot)
		}
	}
}
