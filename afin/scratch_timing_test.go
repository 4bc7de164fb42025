package afin

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/afin-bench/afin/factor"
)

func TestScratchTiming(t *testing.T) {
	if os.Getenv("AFIN_SCRATCH") == "" {
		t.Skip()
	}
	cfg := SmallConfig("gaussian")
	rng := rand.New(rand.NewPCG(1, 2))
	params := NewParams(cfg, rng)
	e, err := newEngine(cfg, params, false)
	if err != nil {
		t.Fatal(err)
	}
	data := make([][]float32, len(params))
	for i, p := range params {
		data[i] = p.Data
	}
	w := paramTensors(params, data)
	total, _ := CountParams(cfg)
	t.Logf("small params %d", total)
	for _, dn := range scratchSizes() {
		tasks, err := factor.SimulateBatch(rng, factor.SimOptions{D: dn[0], N: dn[1]}, 8)
		if err != nil {
			t.Fatal(err)
		}
		var zs [][]float64
		for _, tk := range tasks {
			zs = append(zs, tk.TrueZ)
		}
		b, err := NewBatch(tasks, BucketN(dn[1]), zs)
		if err != nil {
			t.Fatal(err)
		}
		for rep := 0; rep < 2; rep++ {
			t0 := time.Now()
			loss, _, _, err := e.lossGrad(w, b)
			if err != nil {
				t.Fatal(err)
			}
			t1 := time.Now()
			_, _, err = e.forward(w, b)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("d=%d N=%d B=8 loss=%.4f step %.3fs fwd %.3fs", dn[0], dn[1], loss, t1.Sub(t0).Seconds(), time.Since(t1).Seconds())
		}
	}
}

func scratchSizes() [][2]int {
	if os.Getenv("AFIN_SCRATCH") == "big" {
		return [][2]int{{4, 32}, {8, 64}, {16, 64}, {16, 256}}
	}
	if os.Getenv("AFIN_SCRATCH") == "prof" {
		return [][2]int{{8, 64}}
	}
	return [][2]int{{2, 4}, {4, 8}}
}
