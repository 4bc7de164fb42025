package reference

import "testing"

// Each profile resolves to its preset, explicit fields win, and an
// unknown profile is refused rather than replaced by a default.
func TestResolvePresets(t *testing.T) {
	tests := []struct {
		in                    Settings
		draws, warmup, chains int
		subsample             int
		minESS                float64
		wantErr               bool
	}{
		{Settings{Profile: ProfileSmoke}, 2000, 300, 2, 2000, 100, false},
		{Settings{}, 20000, 1000, 4, 50000, 400, false},
		{Settings{Profile: ProfileQuick, Subsample: 10000}, 20000, 1000, 4, 10000, 400, false},
		{Settings{Profile: ProfilePaper, Chains: 8}, 1000000, 10000, 8, 50000, 400, false},
		{Settings{Profile: "huge"}, 0, 0, 0, 0, 0, true},
		{Settings{Profile: ProfileSmoke, Draws: 4, Chains: 2}, 0, 0, 0, 0, 0, true},
	}
	for _, tc := range tests {
		got, err := tc.in.Resolve()
		if (err != nil) != tc.wantErr {
			t.Errorf("%+v: error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if got.Draws != tc.draws || got.Warmup != tc.warmup || got.Chains != tc.chains || got.Subsample != tc.subsample || got.MinESS != tc.minESS || got.MaxRhat != 1.01 {
			t.Errorf("%+v resolved to %+v", tc.in, got)
		}
	}
}
