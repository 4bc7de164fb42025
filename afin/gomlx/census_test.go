package gomlx

import (
	"testing"

	"github.com/afin-bench/afin/afin/arch"
)

// Issue 38's census targets: the programs of a whole paper training run
// (d ≤ 16, N ≤ 256, micro-batches of 32 under a 6 GiB budget), each at
// most 3,000 GoMLX nodes and 100,000 summed over the distinct programs.
// XLA compiled none of the whole-network paper training programs (14,654
// nodes each, 16 of them) within 235 s on an H100.
func TestProgramCensus(t *testing.T) {
	for _, tc := range []struct {
		cfg       arch.Config
		precision string
	}{
		{arch.PaperConfig("gaussian"), "fp32"},
		{arch.PaperConfig("gaussian"), "bf16"},
	} {
		e, err := newEngine(tc.cfg, false, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SetPrecision(tc.precision); err != nil {
			t.Fatal(err)
		}
		e.SetBudget(6 << 30)
		programs, err := e.Census(16, 256, 32)
		if err != nil {
			t.Fatal(err)
		}
		var total, largest, products int
		var name string
		for _, p := range programs {
			total += p.Nodes
			products += p.MatrixProducts
			if p.Nodes > largest {
				largest, name = p.Nodes, p.Program
			}
		}
		t.Logf("%s %s: %d programs, %d nodes, %d matrix products; largest %s, %d nodes", tc.cfg.Name, tc.precision, len(programs), total, products, name, largest)
		if want := 16 * 7; len(programs) != want {
			t.Errorf("%d programs, want %d (7 for each of 16 buckets)", len(programs), want)
		}
		if largest > 3000 || total > 100000 {
			t.Errorf("%s: largest program %d nodes (want ≤ 3,000), %d summed (want ≤ 100,000)", tc.precision, largest, total)
		}
	}
}
