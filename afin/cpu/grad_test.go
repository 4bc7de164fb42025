package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/factor"
)

func randomMLP(t *testing.T, rng *rand.Rand, widths []int) (*mlp, arch.MLP) {
	t.Helper()
	var m arch.MLP
	for i := 0; i+1 < len(widths); i++ {
		w := &arch.Tensor{Name: fmt.Sprintf("l%d/w", i), Shape: []int{widths[i], widths[i+1]}}
		b := &arch.Tensor{Name: fmt.Sprintf("l%d/b", i), Shape: []int{widths[i+1]}}
		for _, ts := range []*arch.Tensor{w, b} {
			ts.Data = make([]float32, ts.Size())
			for k := range ts.Data {
				ts.Data[k] = float32(rng.NormFloat64() * 0.6)
			}
		}
		m.Layers = append(m.Layers, arch.Linear{W: w, B: b})
	}
	p, err := packMLP(m)
	if err != nil {
		t.Fatal(err)
	}
	return p, m
}

// objective is Σ dy·MLP(x) in float64, from the packed forward.
func objective(m *mlp, x, dy []float32, rows int) float64 {
	w := &workspace{}
	out := make([]float32, rows*m.out)
	m.run(w, out, x, rows)
	var s float64
	for i, v := range out {
		s += float64(v) * float64(dy[i])
	}
	return s
}

// TestMLPBackwardFiniteDifferences checks the MLP gradients (weights,
// biases, inputs) against central differences, for 1–3 layers.
func TestMLPBackwardFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, widths := range [][]int{{5, 4}, {5, 7, 3}, {6, 9, 8, 2}, {3, 20, 20, 17}} {
		t.Run(fmt.Sprint(widths), func(t *testing.T) {
			const rows = 7
			p, decl := randomMLP(t, rng, widths)
			x := randSlice(rng, rows*p.in)
			dy := randSlice(rng, rows*p.out)
			g := newMLPGrad(p)
			dx := make([]float32, len(x))
			p.backward(&gradWS{}, x, rows, dy, dx, g)
			check := func(what string, v *float32, got float32, repack func()) {
				const eps = 1e-2
				old := *v
				*v = old + eps
				repack()
				up := objective(p, x, dy, rows)
				*v = old - eps
				repack()
				down := objective(p, x, dy, rows)
				*v = old
				repack()
				want := (up - down) / (2 * eps)
				if math.Abs(float64(got)-want) > 2e-3*math.Max(1, math.Abs(want)) {
					t.Errorf("%s: gradient %g, finite difference %g", what, got, want)
				}
			}
			repackAll := func() {
				q, err := packMLP(decl)
				if err != nil {
					t.Fatal(err)
				}
				*p = *q
			}
			for l, layer := range decl.Layers {
				for _, k := range []int{0, layer.W.Size() / 2, layer.W.Size() - 1} {
					check(fmt.Sprintf("W%d[%d]", l, k), &layer.W.Data[k], g.dW[l][k], repackAll)
				}
				for _, k := range []int{0, layer.B.Size() - 1} {
					check(fmt.Sprintf("b%d[%d]", l, k), &layer.B.Data[k], g.dB[l][k], repackAll)
				}
			}
			for _, k := range []int{0, len(x) / 3, len(x) - 1} {
				check(fmt.Sprintf("x[%d]", k), &x[k], dx[k], func() {})
			}
		})
	}
}

func randSlice(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// TestLossGradFiniteDifferences checks LossGrad's gradient of the whole
// network against central differences of its loss, at entries of tensors
// from every module (adapters, encoder, LayerNorm, score mix, attention
// maps, decoder).
func TestLossGradFiniteDifferences(t *testing.T) {
	cfg := arch.SmallConfig("gaussian")
	decl := randomNetwork(t, cfg, 13)
	rng := rand.New(rand.NewPCG(3, 4))
	task, err := factor.Simulate(rng, factor.SimOptions{D: 3, N: 4, Prior: factor.DiagGaussianFamily,
		Likelihoods: []string{factor.LinGaussianFamily}})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := arch.NewBatch(context.Background(), []*factor.Task{task}, 0, [][]float64{task.TrueZ})
	if err != nil {
		t.Fatal(err)
	}
	loss := func() float64 {
		n, err := NewNet(decl)
		if err != nil {
			t.Fatal(err)
		}
		l, _, err := n.LossGrad(context.Background(), batch)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	n, err := NewNet(decl)
	if err != nil {
		t.Fatal(err)
	}
	_, grads, err := n.LossGrad(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"adapters/lik/lin_gaussian/pair/l0/w", "adapters/prior/diag_gaussian/node/l1/b",
		"encoder/0/pair/l0/w", "encoder/1/node/l2/w", "merge/0/ln_attn_pair/g", "merge/0/mix",
		"merge/0/q/pair/l1/w", "merge/0/v/node/l0/b", "merge/0/out/pair/l2/w", "merge/0/ffn/pair/l0/w",
		"gaussian_decoder/offdiag/l0/w", "gaussian_decoder/diag/l2/b", "gaussian_decoder/mean/l1/w"}
	for _, name := range names {
		idx := -1
		for i, ts := range decl.Tensors() {
			if ts.Name == name {
				idx = i
			}
		}
		if idx < 0 {
			t.Fatalf("no tensor %s", name)
		}
		ts := decl.Tensors()[idx]
		for _, k := range []int{0, ts.Size() / 2} {
			const eps = 1e-2
			old := ts.Data[k]
			ts.Data[k] = old + eps
			up := loss()
			ts.Data[k] = old - eps
			down := loss()
			ts.Data[k] = old
			fd, g := (up-down)/(2*eps), float64(grads[idx][k])
			t.Logf("%s[%d]: %.6g vs %.6g", name, k, g, fd)
			if math.Abs(fd-g) > 1e-2*math.Abs(g)+2e-4 {
				t.Errorf("%s[%d]: gradient %.6g, finite difference %.6g", name, k, g, fd)
			}
		}
	}
}

// TestLossGradWorkers checks the multi-goroutine gradient equals the
// sequential one up to summation order.
func TestLossGradWorkers(t *testing.T) {
	cfg := arch.SmallConfig("gaussian")
	n, err := NewNet(randomNetwork(t, cfg, 17))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	tasks, err := factor.SimulateBatch(rng, factor.SimOptions{D: 3, N: 5}, 5)
	if err != nil {
		t.Fatal(err)
	}
	z := make([][]float64, len(tasks))
	for k, task := range tasks {
		z[k] = task.TrueZ
	}
	batch, err := arch.NewBatch(context.Background(), tasks, 0, z)
	if err != nil {
		t.Fatal(err)
	}
	l1, g1, err := n.LossGrad(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{2, 3, 8} {
		l2, g2, err := n.LossGradWorkers(context.Background(), batch, workers)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(l1-l2) > 1e-9*math.Abs(l1) {
			t.Errorf("%d workers: loss %g, want %g", workers, l2, l1)
		}
		for i := range g1 {
			for k := range g1[i] {
				if math.Abs(float64(g1[i][k]-g2[i][k])) > 1e-5*(1+math.Abs(float64(g1[i][k]))) {
					t.Fatalf("%d workers: grads[%d][%d] = %g, want %g", workers, i, k, g2[i][k], g1[i][k])
				}
			}
		}
	}
}
