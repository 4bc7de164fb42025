package arch

import (
	"strings"
	"testing"
)

func TestParamCounts(t *testing.T) {
	tests := []struct {
		decoder string
		want    int
		mods    map[string]int
	}{
		{"gaussian", 4550011, map[string]int{"adapters": 55376, "encoder": 728384, "merge": 3643208, "gaussian_decoder": 123043}},
		{"flow", 5051458, map[string]int{"adapters": 55376, "encoder": 728384, "merge": 3643208, "flow_context": 128960, "flow_affine": 80802, "couplings": 414728}},
	}
	for _, tc := range tests {
		got, mods := MustNew(PaperConfig(tc.decoder)).Count()
		if got != tc.want {
			t.Errorf("paper/%s: %d params, want %d (%v)", tc.decoder, got, tc.want, mods)
		}
		if len(mods) != len(tc.mods) {
			t.Errorf("paper/%s: modules %v, want %v", tc.decoder, mods, tc.mods)
		}
		for k, v := range tc.mods {
			if mods[k] != v {
				t.Errorf("paper/%s: module %s has %d params, want %d", tc.decoder, k, mods[k], v)
			}
		}
	}
}

func TestTensorNamesUnique(t *testing.T) {
	for _, dec := range []string{"gaussian", "flow"} {
		seen := map[string]bool{}
		for _, ts := range MustNew(SmallConfig(dec)).Tensors() {
			if seen[ts.Name] {
				t.Errorf("%s: duplicate tensor %s", dec, ts.Name)
			}
			seen[ts.Name] = true
		}
	}
}

// The masks of the authors' checkpoints for d = 2..16, layers 0..3, as
// listed in the implementation notes (computed independently there with a
// correctly rounded sin).
var maskTable = map[int]string{
	2: "10 01 01 10", 3: "100 110 010 110", 4: "1100 1100 0101 1100",
	5: "11000 11001 01001 11100", 6: "110001 010011 010011 111000",
	7: "1100010 0100111 0100011 1110100", 8: "11000101 01001110 01000111 11101000",
	9:  "110001001 110011100 000001111 111010100",
	10: "1100010110 1100111000 0000011111 1110101000",
	11: "11000100101 11001111000 00000011111 11101110000",
	12: "110001001011 110011110000 000000111111 111010100001",
	13: "1100000010111 1110111100000 0000001110111 1110101000011",
	14: "11000000101111 11101111000000 00000011111110 11101000000111",
	15: "110000000011111 111111110000000 000000111111100 111010000001111",
	16: "1100000000111111 1110111100000001 0000011111111000 1110000000011111",
}

func TestFlowMasksMatchTable(t *testing.T) {
	for d, row := range maskTable {
		for l, want := range strings.Fields(row) {
			var got strings.Builder
			for _, v := range FlowMask(d, l) {
				got.WriteByte('0' + byte(v))
			}
			if got.String() != want {
				t.Errorf("d=%d layer %d: mask %s, want %s", d, l, got.String(), want)
			}
		}
	}
	for l := range 4 {
		if m := FlowMask(1, l); m[0] != 0 {
			t.Errorf("d=1 layer %d: mask %v, want [0]", l, m)
		}
	}
}

func TestHeadsRule(t *testing.T) {
	for _, tc := range []struct{ h, c, want int }{{192, 40, 8}, {24, 12, 4}, {24, 6, 2}, {9, 9, 1}, {32, 16, 8}} {
		if got := HeadsFor(tc.h, tc.c); got != tc.want {
			t.Errorf("HeadsFor(%d, %d) = %d, want %d", tc.h, tc.c, got, tc.want)
		}
	}
}
