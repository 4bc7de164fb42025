package streams

import "testing"

// The stream values are frozen (published numbers, the smoke baseline and
// cached references depend on them): this table is their record, so an
// edit to a value shows up as a failing test, not as drifted results.
func TestFrozenValues(t *testing.T) {
	tests := []struct {
		name string
		got  Stream
		want uint64
	}{
		{"AFINLadder", AFINLadder, 0},
		{"AFINWarmup", AFINWarmup, 0xa3f0},
		{"VIDraws", VIDraws, 0xd4a5},
		{"FlowOracleDraws", FlowOracleDraws, 0x5c0},
		{"FRVISNISLadder", FRVISNISLadder, 0x5515},
		{"ELBO", ELBO, 0xe1b0},
		{"ExactDraws", ExactDraws, 0xe7ac},
		{"ExactReference", ExactReference, 0xe8ac7},
		{"HeldOutTasks", HeldOutTasks, 77},
		{"HeldOutFlowBase", HeldOutFlowBase, 2},
		{"EvaluateTasks", EvaluateTasks, 0xc0},
		{"EvaluateProposals", EvaluateProposals, 0xc1},
		{"FRVIGradient", FRVIGradient, 0xf7f1},
		{"PairedELBO", PairedELBO, 0xed9e},
		{"ImportanceCheck", ImportanceCheck, 0x15c4},
		{"FlowInit", FlowInit, 0x3ade},
		{"FlowGradient", FlowGradient, 0xf10e},
		{"FlowScratch", FlowScratch, 0},
		{"NUTSChain", NUTSChain, 1},
		{"SW2Directions", SW2Directions, 0x5357325f64697273},
		{"SW2ResampleA", SW2ResampleA, 1},
		{"SW2ResampleB", SW2ResampleB, 2},
		{"TrainTasks", TrainTasks, 0x5eed},
		{"HardCases", HardCases, 17},
		{"Simulate", Simulate, 0x51a1},
	}
	for _, tc := range tests {
		if uint64(tc.got) != tc.want {
			t.Errorf("%s = %#x, frozen at %#x", tc.name, uint64(tc.got), tc.want)
		}
	}
	if HeldOutSeedMask != 0xe7a1 {
		t.Errorf("HeldOutSeedMask = %#x, frozen at 0xe7a1", HeldOutSeedMask)
	}
	if NUTSChain.At(3) != 4 {
		t.Errorf("NUTSChain.At(3) = %d, want chain 3 on stream 4", NUTSChain.At(3))
	}
}
