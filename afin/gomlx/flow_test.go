package gomlx

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
)

func tinyFlowConfig() arch.Config {
	c := tinyConfig()
	c.Decoder = "flow"
	c.FlowG, c.FlowH, c.FlowL, c.FlowSteps = 6, 8, 3, 4
	return c
}

// The flow inverts its own samples, and its log density equals the base
// density minus the log-determinant of a finite-difference Jacobian.
func TestFlowDensityMatchesJacobian(t *testing.T) {
	cfg := tinyFlowConfig()
	_, data := randomWeights(cfg, 21)
	// Random weights everywhere would saturate the bounded log-scales;
	// shrink them so the map stays well conditioned for finite differences.
	for i := range data {
		for k := range data[i] {
			data[i][k] *= 0.6
		}
	}
	e, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	w := e.Weights(data)
	for _, d := range []int{1, 3} {
		tasks := mixedTasks(t, 22, d, 4, 1)
		b, err := arch.NewBatch(context.Background(), tasks, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Sample points: eps and 2d perturbed copies (central differences).
		rng := rand.New(rand.NewPCG(23, uint64(d)))
		base := make([]float32, d)
		for i := range base {
			base[i] = float32(rng.NormFloat64())
		}
		const h = 1e-2
		s := 1 + 2*d
		eps := make([]float32, s*d)
		for n := range s {
			copy(eps[n*d:], base)
		}
		for i := range d {
			eps[(1+2*i)*d+i] += h
			eps[(2+2*i)*d+i] -= h
		}
		z, logq, err := e.FlowSample(context.Background(), w, b, eps, s, 1)
		if err != nil {
			t.Fatal(err)
		}
		jac := make([]float64, d*d) // J[i][j] = ∂z_i/∂eps_j
		for j := range d {
			for i := range d {
				jac[i*d+j] = (float64(z[(1+2*j)*d+i]) - float64(z[(2+2*j)*d+i])) / (2 * h)
			}
		}
		var sq float64
		for _, v := range base {
			sq += float64(v) * float64(v)
		}
		want := -0.5*sq - 0.5*float64(d)*math.Log(2*math.Pi) - math.Log(math.Abs(det(jac, d)))
		if math.Abs(float64(logq[0])-want) > 2e-3*(1+math.Abs(want)) {
			t.Errorf("d=%d: sampled log q = %g, change of variables with numerical Jacobian gives %g", d, logq[0], want)
		}
		// Density at the sampled point agrees, and inverting recovers eps.
		lq2, back, err := e.FlowDensity(context.Background(), w, b, z[:d], 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(lq2[0]-logq[0])) > 1e-4*(1+math.Abs(float64(logq[0]))) {
			t.Errorf("d=%d: density %g at own sample, sampler said %g", d, lq2[0], logq[0])
		}
		assertClose(t, "inverted base point", back, base, 1e-4)
	}
}

// At strength 0 the flow is the identity: q = N(0, I).
func TestFlowStrengthZeroIsStandardNormal(t *testing.T) {
	cfg := tinyFlowConfig()
	_, data := randomWeights(cfg, 31)
	e, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := arch.NewBatch(context.Background(), mixedTasks(t, 32, 2, 3, 1), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	eps := []float32{0.3, -1.2}
	z, lq, err := e.FlowSample(context.Background(), e.Weights(data), b, eps, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "z", z, eps, 1e-6)
	want := -0.5*(0.09+1.44) - math.Log(2*math.Pi)
	if math.Abs(float64(lq[0])-want) > 1e-5 {
		t.Errorf("log q = %g, want %g", lq[0], want)
	}
}

func det(a []float64, d int) float64 {
	m := append([]float64(nil), a...)
	det := 1.0
	for c := range d {
		p := c
		for r := c + 1; r < d; r++ {
			if math.Abs(m[r*d+c]) > math.Abs(m[p*d+c]) {
				p = r
			}
		}
		if m[p*d+c] == 0 {
			return 0
		}
		if p != c {
			for k := range d {
				m[c*d+k], m[p*d+k] = m[p*d+k], m[c*d+k]
			}
			det = -det
		}
		det *= m[c*d+c]
		for r := c + 1; r < d; r++ {
			f := m[r*d+c] / m[c*d+c]
			for k := c; k < d; k++ {
				m[r*d+k] -= f * m[c*d+k]
			}
		}
	}
	return det
}
