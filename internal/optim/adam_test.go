package optim

import (
	"math"
	"testing"
)

// TestStepByHand checks Step against updates worked out by hand from the
// formulas of Kingma & Ba (Alg. 1) and Loshchilov & Hutter (Alg. 2) at
// lr = 0.1, β = (0.9, 0.999), ε = 1e-8, from θ = 1 and zero moments.
//
// Step 1, g = 2: m = 0.2, v = 0.004, m̂ = 2, v̂ = 4, so
// θ = 1 − 0.1·2/(2 + 1e-8) = 0.9000000005.
// Step 2, g = −1: m = 0.08, v = 0.004996, m̂ = 0.08/0.19 = 8/19,
// v̂ = 0.004996/0.001999 = 4996/1999, so
// θ = 0.9000000005 − 0.1·(8/19)/(√(4996/1999) + 1e-8) = 0.8733662967024.
// Weight decay 0.01 shrinks θ to 1·(1 − 0.1·0.01) = 0.999 first:
// θ = 0.999 − 0.0999999995 = 0.8990000005.
// scale 0.5 halves g = 2 to 1: m̂ = 1, v̂ = 1, θ = 1 − 0.1/(1 + 1e-8).
func TestStepByHand(t *testing.T) {
	tests := []struct {
		name  string
		wd    float64
		scale float64
		grads []float64
		want  float64
		wantM float64
		wantV float64
	}{
		{"one step", 0, 1, []float64{2}, 0.9000000005, 0.2, 0.004},
		{"two steps", 0, 1, []float64{2, -1}, 0.8733662967024, 0.08, 0.004996},
		{"weight decay", 0.01, 1, []float64{2}, 0.8990000005, 0.2, 0.004},
		{"clipped gradient", 0, 0.5, []float64{2}, 0.900000001, 0.1, 0.001},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Settings{LR: 0.1, WeightDecay: tc.wd}
			p, m, v := []float64{1}, []float64{0}, []float64{0}
			for i, g := range tc.grads {
				Step(s, i+1, p, []float64{g}, m, v, tc.scale)
			}
			if math.Abs(p[0]-tc.want) > 1e-12 || math.Abs(m[0]-tc.wantM) > 1e-15 || math.Abs(v[0]-tc.wantV) > 1e-15 {
				t.Errorf("θ, m, v = %.15g, %g, %g; want %.15g, %g, %g", p[0], m[0], v[0], tc.want, tc.wantM, tc.wantV)
			}
			// float32 storage: the same update rounded to float32.
			p32, m32, v32 := []float32{1}, []float32{0}, []float32{0}
			for i, g := range tc.grads {
				Step(s, i+1, p32, []float32{float32(g)}, m32, v32, tc.scale)
			}
			if math.Abs(float64(p32[0])-tc.want) > 1e-7 {
				t.Errorf("float32 θ = %.9g, want %.9g", p32[0], tc.want)
			}
		})
	}
}

// TestStepFloat32ComputesInFloat64: the float32 path rounds the stored
// parameter and moments once per step, after a float64 update (afin's
// checkpoints and its resume-exactly test rest on this).
func TestStepFloat32ComputesInFloat64(t *testing.T) {
	s := Settings{LR: 1e-3, WeightDecay: 0.05}
	p, g := []float32{0.3}, []float32{-0.7}
	m, v := []float32{0.01}, []float32{0.002}
	mk := 0.9*float64(m[0]) + (1-0.9)*(float64(g[0])*0.8)
	vk := 0.999*float64(v[0]) + (1-0.999)*(float64(g[0])*0.8)*(float64(g[0])*0.8)
	c1, c2 := 1-math.Pow(0.9, 7), 1-math.Pow(0.999, 7)
	want := float32(float64(p[0])*(1-1e-3*0.05) - 1e-3*(mk/c1)/(math.Sqrt(vk/c2)+1e-8))
	Step(s, 7, p, g, m, v, 0.8)
	if p[0] != want || m[0] != float32(mk) || v[0] != float32(vk) {
		t.Errorf("θ, m, v = %v, %v, %v; want %v, %v, %v", p[0], m[0], v[0], want, float32(mk), float32(vk))
	}
}

// TestAdamMinimisesQuadratic: Adam finds the minimum of
// f(x) = (x₀−1)² + 10(x₁+0.5)² and counts its steps.
func TestAdamMinimisesQuadratic(t *testing.T) {
	opt := New[float64](2, Settings{LR: 0.05})
	x := []float64{0, 0}
	g := make([]float64, 2)
	for range 3000 {
		g[0] = 2 * (x[0] - 1)
		g[1] = 20 * (x[1] + 0.5)
		opt.Step(x, g)
	}
	if math.Abs(x[0]-1) > 1e-3 || math.Abs(x[1]+0.5) > 1e-3 || opt.Steps() != 3000 {
		t.Errorf("Adam ended at %v after %d steps, want [1 -0.5] after 3000", x, opt.Steps())
	}
}
