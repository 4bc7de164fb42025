package cpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/factor"
)

// randomNetwork declares cfg with every tensor random (zero-initialised
// layers included) so every path carries signal.
func randomNetwork(t testing.TB, cfg arch.Config, seed uint64) *arch.Network {
	t.Helper()
	net, err := arch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for _, ts := range net.Tensors() {
		ts.Data = make([]float32, ts.Size())
		scale := 0.3
		if len(ts.Shape) == 2 {
			scale = 1.5 / math.Sqrt(float64(ts.Shape[0]))
		}
		for i := range ts.Data {
			ts.Data[i] = float32((2*rng.Float64() - 1) * scale)
			if strings.HasSuffix(ts.Name, "/g") {
				ts.Data[i]++
			}
		}
	}
	return net
}

// benchTask is the benchmark's task: a diag_gaussian prior and n
// lin_gaussian sites (the families FLOPs assumes).
func benchTask(t testing.TB, d, n int, seed uint64) *arch.Batch {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	task, err := factor.Simulate(rng, factor.SimOptions{D: d, N: n, Prior: factor.DiagGaussianFamily,
		Likelihoods: []string{factor.LinGaussianFamily}, Design: factor.DesignIID})
	if err != nil {
		t.Fatal(err)
	}
	b, err := arch.NewBatch([]*factor.Task{task}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newTestNet(t testing.TB, name string) *Net {
	t.Helper()
	cfg, err := arch.ConfigByName(name, "gaussian")
	if err != nil {
		t.Fatal(err)
	}
	n, err := NewNet(randomNetwork(t, cfg, 11))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFLOPsMatchExecuted checks the analytic FLOP model against the
// products the forward actually runs.
func TestFLOPsMatchExecuted(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		d, n int
	}{{"small", 1, 1}, {"small", 4, 30}, {"small", 9, 3}, {"paper", 3, 5}, {"paper", 2, 1}} {
		t.Run(fmt.Sprintf("%s/d=%d,N=%d", tc.cfg, tc.d, tc.n), func(t *testing.T) {
			net := newTestNet(t, tc.cfg)
			b := benchTask(t, tc.d, tc.n, 1)
			w := &workspace{}
			task, err := locate(w, b, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := net.encode(context.Background(), w, b, task); err != nil {
				t.Fatal(err)
			}
			net.decodeGaussian(w, tc.d, make([]float32, tc.d), make([]float32, tc.d*tc.d))
			if want := FLOPs(net.cfg, tc.d, tc.n); w.flops != want {
				t.Fatalf("executed %d FLOPs, model says %d", w.flops, want)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	net := newTestNet(t, "paper")
	b := benchTask(t, 16, 256, 2) // a full forward takes seconds
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := net.Gaussian(ctx, b); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before the call: err = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	_, _, err := net.Gaussian(ctx, b)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// Checks come every token chunk (milliseconds); a generous bound keeps
	// the test meaningful on a loaded machine.
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("cancelled forward took %v", el)
	}
}

// TestConcurrent runs one Net from several goroutines on different shapes
// and checks each gets the answer it gets alone.
func TestConcurrent(t *testing.T) {
	net := newTestNet(t, "small")
	batches := []*arch.Batch{benchTask(t, 3, 10, 1), benchTask(t, 5, 4, 2), benchTask(t, 2, 40, 3)}
	want := make([][]float32, len(batches))
	for i, b := range batches {
		mu, _, err := net.Gaussian(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = mu
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(batches))
	for r := 0; r < 4; r++ {
		for i, b := range batches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mu, _, err := net.Gaussian(context.Background(), b)
				if err == nil && fmt.Sprint(mu) != fmt.Sprint(want[i]) {
					err = fmt.Errorf("batch %d: got %v, want %v", i, mu, want[i])
				}
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSteadyStateAllocations checks a repeated forward of one shape
// allocates only its two result slices.
func TestSteadyStateAllocations(t *testing.T) {
	net := newTestNet(t, "small")
	b := benchTask(t, 4, 50, 1)
	allocs := testing.AllocsPerRun(5, func() {
		if _, _, err := net.Gaussian(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 4 {
		t.Fatalf("%.0f allocations per forward, want ≤ 4", allocs)
	}
}

// TestKeyBlocksMatchOneBlock checks the online softmax over several key
// blocks (and several query chunks) against one block of all keys.
func TestKeyBlocksMatchOneBlock(t *testing.T) {
	net := newTestNet(t, "small")
	b := benchTask(t, 3, 60, 4)
	want, wantLam, err := net.Gaussian(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	defer func(kb int) { keyBlock = kb }(keyBlock)
	for _, kb := range []int{7, 16, 60} {
		keyBlock = kb
		net.pool = sync.Pool{} // fresh workspaces for the new block size
		got, gotLam, err := net.Gaussian(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-5*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("keyBlock %d: mean[%d] = %g, want %g", kb, i, got[i], want[i])
			}
		}
		for i := range wantLam {
			if math.Abs(float64(gotLam[i]-wantLam[i])) > 1e-5*(1+math.Abs(float64(wantLam[i]))) {
				t.Fatalf("keyBlock %d: precision[%d] = %g, want %g", kb, i, gotLam[i], wantLam[i])
			}
		}
	}
}

func TestCheckMemory(t *testing.T) {
	cfg := arch.SmallConfig("gaussian")
	need := PredictPeakBytes(cfg, 4, 100000)
	for _, tc := range []struct {
		avail int64
		fail  bool
	}{{0, false}, {need, false}, {need - 1, true}, {1 << 20, true}} {
		err := CheckMemory(cfg, 4, 100000, tc.avail)
		if (err != nil) != tc.fail {
			t.Errorf("available %d: err = %v, want failure %v", tc.avail, err, tc.fail)
		}
		if err != nil && !errors.Is(err, ErrTooLarge) {
			t.Errorf("refusal %v is not ErrTooLarge", err)
		}
		if err != nil && (!strings.Contains(err.Error(), "needs about") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("message %q: want one line with both numbers", err)
		}
	}
	if a := AvailableBytes(); a < 0 {
		t.Errorf("AvailableBytes() = %d", a)
	}
}

// TestPredictPeakBytesGrowsLinearly checks the prediction is linear in N
// at large N (no K² term).
func TestPredictPeakBytesGrowsLinearly(t *testing.T) {
	cfg := arch.PaperConfig("gaussian")
	a, b := PredictPeakBytes(cfg, 4, 100000), PredictPeakBytes(cfg, 4, 200000)
	if r := float64(b) / float64(a); r > 2.01 {
		t.Fatalf("doubling N multiplies the prediction by %.3f", r)
	}
}

// BenchmarkNewNet times packing the paper config's weights (done once
// per model load, or once per optimiser step when training natively).
func BenchmarkNewNet(b *testing.B) {
	cfg := arch.PaperConfig("gaussian")
	net := randomNetwork(b, cfg, 1)
	b.ReportAllocs()
	for range b.N {
		if _, err := NewNet(net); err != nil {
			b.Fatal(err)
		}
	}
}
