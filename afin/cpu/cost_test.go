package cpu

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
)

var updateCost = flag.Bool("update-cost", false, "rewrite testdata/cost.json from the current cost model")

// costCases are the shapes the cost model is pinned on: both named
// configurations and decoders, plus variants that take the one-layer MLP
// branch and a single head, over dimensions and site counts that cross
// the chunking thresholds (tokensPerChunk, keyBlock, queryChunk).
func costCases() []arch.Config {
	var cfgs []arch.Config
	for _, name := range []string{"small", "paper"} {
		for _, dec := range []string{"gaussian", "flow"} {
			cfg, _ := arch.ConfigByName(name, dec)
			cfgs = append(cfgs, cfg)
		}
	}
	odd := arch.SmallConfig("gaussian")
	odd.Name, odd.AdapterL, odd.BoxL, odd.MergeL, odd.DecL, odd.Heads = "odd", 1, 1, 2, 1, 1
	return append(cfgs, odd)
}

// TestCostModelPinned checks PredictPeakBytes, PredictBatchPeakBytes,
// FLOPs and UnfactorisedFLOPs against testdata/cost.json, written by the
// cost model before each block file carried its own workspace and FLOP
// count: moving the arithmetic must not change one number.
func TestCostModelPinned(t *testing.T) {
	got := map[string][4]int64{}
	for _, cfg := range costCases() {
		for _, d := range []int{1, 2, 4, 9, 20} {
			for _, n := range []int{0, 1, 7, 100, 1500, 5000} {
				key := fmt.Sprintf("%s/%s/d=%d/n=%d", cfg.Name, cfg.Decoder, d, n)
				got[key] = [4]int64{PredictPeakBytes(cfg, d, n), PredictBatchPeakBytes(cfg, 3, d, n), FLOPs(cfg, d, n), UnfactorisedFLOPs(cfg, d, n)}
			}
		}
	}
	path := filepath.Join("testdata", "cost.json")
	if *updateCost {
		data, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][4]int64
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%d pinned shapes, %d computed", len(want), len(got))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: (peak, batch peak, FLOPs, unfactorised FLOPs) = %v, pinned %v", k, got[k], w)
		}
	}
}
