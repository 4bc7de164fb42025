package afin

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// BenchmarkForward times one forward pass for one task (the paper's
// easy/medium/hard tiers) with freshly initialised weights; the graph is
// compiled before the timer starts.
func BenchmarkForward(b *testing.B) {
	for _, name := range []string{"small", "paper"} {
		cfg, _ := ConfigByName(name, "gaussian")
		params := NewParams(cfg, rand.New(rand.NewPCG(1, 1)))
		data := make([][]float32, len(params))
		for i, p := range params {
			data[i] = p.Data
		}
		m, err := newModel("", cfg, 0, data)
		if err != nil {
			b.Fatal(err)
		}
		for _, dn := range [][2]int{{4, 256}, {8, 64}, {16, 1}} {
			rng := rand.New(rand.NewPCG(2, 2))
			task, err := factor.Simulate(rng, factor.SimOptions{D: dn[0], N: dn[1], Design: factor.DesignIID})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/d=%d/N=%d", name, dn[0], dn[1]), func(b *testing.B) {
				if _, err := m.Forward([]*factor.Task{task}); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, err := m.Forward([]*factor.Task{task}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkTrainStep times one optimiser step's forward and backward pass
// on a micro-batch of 8 tasks at (d, N) = (8, 64).
func BenchmarkTrainStep(b *testing.B) {
	for _, name := range []string{"small"} {
		cfg, _ := ConfigByName(name, "gaussian")
		params := NewParams(cfg, rand.New(rand.NewPCG(1, 1)))
		data := make([][]float32, len(params))
		for i, p := range params {
			data[i] = p.Data
		}
		eng, err := newEngine(cfg, false)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(2, 2))
		tasks, err := factor.SimulateBatch(rng, factor.SimOptions{D: 8, N: 64}, 8)
		if err != nil {
			b.Fatal(err)
		}
		z := make([][]float64, len(tasks))
		for k, t := range tasks {
			z[k] = t.TrueZ
		}
		batch, err := NewBatch(tasks, 64, z)
		if err != nil {
			b.Fatal(err)
		}
		w := paramTensors(params, data)
		b.Run(name+"/B=8/d=8/N=64", func(b *testing.B) {
			for range b.N {
				if _, _, _, err := eng.lossGrad(w, batch, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
