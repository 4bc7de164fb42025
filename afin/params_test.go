package afin

import "testing"

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
		got, mods := CountParams(PaperConfig(tc.decoder))
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
