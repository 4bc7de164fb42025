package nuts

import (
	"context"
	"math"
	"slices"
	"testing"
)

// stdNormal2 is N(0, diag(1, 4)) in two dimensions.
type stdNormal2 struct{}

func (stdNormal2) LogDensityGrad(z, grad []float64) float64 {
	grad[0], grad[1] = -z[0], -z[1]/4
	return -0.5*z[0]*z[0] - z[1]*z[1]/8
}

// TestPresetStartsAndMetric: per-chain starts and a preset metric are
// used and the metric is kept through warm-up (step size adapted only);
// the draws still have the target's variances; wrong lengths are refused.
func TestPresetStartsAndMetric(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dense bool
		inv   []float64
	}{{"diagonal", false, []float64{1, 4}}, {"dense", true, []float64{1, 0, 0, 4}}} {
		res, err := Sample(context.Background(), stdNormal2{}, 2, Config{Warmup: 100, Draws: 2000, Chains: 2, Seed: 3,
			Dense: tc.dense, Init: []float64{0, 0}, Inits: [][]float64{{1, 1}, {-1, 2}}, InvMetric: tc.inv})
		if err != nil {
			t.Fatal(err)
		}
		for c, st := range res.Stats {
			if !slices.Equal(st.InvMetric, tc.inv) {
				t.Errorf("%s chain %d: metric %v after warm-up, want the preset %v", tc.name, c, st.InvMetric, tc.inv)
			}
		}
		cov := res.Draws().Cov()
		if math.Abs(cov[0]-1) > 0.15 || math.Abs(cov[3]-4) > 0.6 {
			t.Errorf("%s: variances %.3f %.3f, want 1 and 4", tc.name, cov[0], cov[3])
		}
	}
	for _, cfg := range []Config{
		{Draws: 10, Chains: 2, Init: []float64{0, 0}, Inits: [][]float64{{0, 0}}},
		{Draws: 10, Chains: 1, Init: []float64{0, 0}, InvMetric: []float64{1, 1, 1}},
		{Draws: 10, Chains: 1, Init: []float64{0, 0}, Dense: true, InvMetric: []float64{1, 1}},
	} {
		if _, err := Sample(context.Background(), stdNormal2{}, 2, cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
