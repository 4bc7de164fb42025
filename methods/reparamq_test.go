package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// A rescaled AFIN answer is measured against the original task, so its q
// must draw and evaluate in the original coordinates θ = a + s⊙θ′: the
// wrapped q′ = N(m′, Λ′⁻¹) must be exactly the Gaussian the map carries it
// to, N(a + s⊙m′, (Λ′ᵢⱼ/(sᵢsⱼ))⁻¹), in its draws' log q and at any point.
func TestReparamQIsTheMappedGaussian(t *testing.T) {
	ctx := context.Background()
	inner, err := posterior.NewGaussianPrecision([]float64{0.3, -0.2}, []float64{2, 0.5, 0.5, 1})
	if err != nil {
		t.Fatal(err)
	}
	rp := factor.Reparam{Shift: []float64{10, -3}, Scale: []float64{50, 0.25}}
	mean, _, prec := rp.Gaussian(inner.Mean, nil, inner.Precision)
	want, err := posterior.NewGaussianPrecision(mean, prec)
	if err != nil {
		t.Fatal(err)
	}
	q := reparamQ{inner: posterior.Batch(inner), r: rp}
	dr, lq, err := q.Draws(ctx, rand.New(rand.NewPCG(1, 2)), 200)
	if err != nil {
		t.Fatal(err)
	}
	again, err := q.LogQs(ctx, dr.Z)
	if err != nil {
		t.Fatal(err)
	}
	for s := range lq {
		w := want.LogQ(dr.Row(s))
		if math.Abs(lq[s]-w) > 1e-9 || math.Abs(again[s]-w) > 1e-9 {
			t.Fatalf("draw %d: log q %v from Draws, %v from LogQs, want %v", s, lq[s], again[s], w)
		}
	}
	if m := dr.Mean(); math.Abs(m[0]-mean[0]) > 5*50/math.Sqrt(200) {
		t.Errorf("mapped draws' mean %v, want near %v", m, mean)
	}
}
