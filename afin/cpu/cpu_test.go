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

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/gemm"
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
	b, err := arch.NewBatch(context.Background(), []*factor.Task{task}, 0, nil)
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
			if _, err := net.embed(context.Background(), w, b, task, nil); err != nil {
				t.Fatal(err)
			}
			net.gaussianDecoder(w, tc.d, make([]float32, tc.d), make([]float32, tc.d*tc.d))
			if want := FLOPs(net.cfg, tc.d, tc.n); w.flops != want {
				t.Fatalf("executed %d FLOPs, model says %d", w.flops, want)
			}
		})
	}
}

// cancelBoundFLOPs is the work the forward may do after a cancel before
// it returns: one attention tile (2·attendTileMACs·2 FLOPs), a few
// milliseconds of one core, whatever the size of the task.
const cancelBoundFLOPs = 1 << 28

// TestCancel cancels the forward from inside its work, after matrix
// products spread over the whole pass (adapters, encoder, attention,
// pooling), and checks it returns context.Canceled having
// done at most cancelBoundFLOPs more. A cancel before the call returns
// at once.
func TestCancel(t *testing.T) {
	net := newTestNet(t, "small")
	b := benchTask(t, 12, 512, 2) // attention tiles are cut at d = 12, N = 512
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := net.Gaussian(ctx, b); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before the call: err = %v, want context.Canceled", err)
	}
	embed := func(ctx context.Context, w *workspace, tk task) error {
		_, err := net.embed(ctx, w, b, tk, nil)
		return err
	}
	checkCancelBound(t, b, embed)
}

// TestCancelAdapters is TestCancel for the adapters alone on a task whose
// adapters do several times the bound (they ran as one call per family
// run, with no look at the context, so a 4096-site task in d = 32 kept
// going for seconds after a cancel).
func TestCancelAdapters(t *testing.T) {
	net := newTestNet(t, "small")
	b := benchTask(t, 32, 1024, 4)
	checkCancelBound(t, b, func(ctx context.Context, w *workspace, tk task) error {
		K, d, c := 1+len(tk.sites), b.D, net.cfg.C
		w.x, w.p = grow(w.x, K*d*c), grow(w.p, K*d*d*c)
		return net.adapters(ctx, w, b, tk)
	})
}

// checkCancelBound runs pass on task 0 of b uncancelled, then cancels it
// from inside at products spread over its work and checks each run
// returns context.Canceled within cancelBoundFLOPs.
func checkCancelBound(t *testing.T, b *arch.Batch, pass func(ctx context.Context, w *workspace, tk task) error) {
	t.Helper()
	run := func(ctx context.Context, afterMul func(w *workspace)) (*workspace, error) {
		w := &workspace{}
		w.afterMul = func() { afterMul(w) }
		tk, err := locate(w, b, 0)
		if err != nil {
			t.Fatal(err)
		}
		return w, pass(ctx, w, tk)
	}
	full, err := run(context.Background(), func(*workspace) {})
	if err != nil {
		t.Fatal(err)
	}
	if full.flops < 5*cancelBoundFLOPs {
		t.Fatalf("the pass does %d FLOPs, too few to test a bound of %d", full.flops, cancelBoundFLOPs)
	}
	// Cancel points: the first products, then the product that crosses
	// each sixteenth of the pass's FLOPs.
	type point struct {
		k     int
		flops int64
	}
	var points []point
	for _, k := range []int{1, 2, 3, 5, 8, 13} {
		points = append(points, point{k: k})
	}
	for q := int64(1); q < 16; q++ {
		points = append(points, point{flops: full.flops * q / 16})
	}
	for _, p := range points {
		ctx, cancel := context.WithCancel(context.Background())
		var at int64 = -1
		seen := 0
		w, err := run(ctx, func(w *workspace) {
			if seen++; at < 0 && (seen == p.k || p.k == 0 && w.flops >= p.flops) {
				at = w.flops
				cancel()
			}
		})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancel at product %d (%d FLOPs of %d): err = %v, want context.Canceled", seen, at, full.flops, err)
		}
		if after := w.flops - at; after > cancelBoundFLOPs {
			t.Errorf("cancel at %d of %d FLOPs: %d FLOPs more, want ≤ %d", at, full.flops, after, cancelBoundFLOPs)
		}
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
// allocates only its two result slices, under every matrix kernel.
func TestSteadyStateAllocations(t *testing.T) {
	net := newTestNet(t, "small")
	b := benchTask(t, 4, 50, 1)
	def := gemm.Kernel()
	defer func() {
		if err := gemm.Use(def); err != nil {
			t.Fatal(err)
		}
	}()
	for _, k := range gemm.Kernels() {
		if err := gemm.Use(k); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(5, func() {
			if _, _, err := net.Gaussian(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 4 {
			t.Errorf("%s: %.0f allocations per forward, want ≤ 4", k, allocs)
		}
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

// TestEmbedSavingMatchesInference runs the one native forward with
// saving off (inference) and on (training) and checks both give the same
// task embedding Ē (to float32 rounding: training attends all keys at
// once, inference through the online softmax) and that saving filled a
// record for every encoder layer and merge block.
func TestEmbedSavingMatchesInference(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		d, n int
	}{{"small", 3, 5}, {"small", 1, 1}, {"paper", 4, 9}} {
		t.Run(fmt.Sprintf("%s/d=%d,N=%d", tc.cfg, tc.d, tc.n), func(t *testing.T) {
			net := newTestNet(t, tc.cfg)
			b := benchTask(t, tc.d, tc.n, 4)
			embed := func(sv *taskSave) (x, p []float32) {
				w := &workspace{}
				tk, err := locate(w, b, 0)
				if err != nil {
					t.Fatal(err)
				}
				K, err := net.embed(context.Background(), w, b, tk, sv)
				if err != nil {
					t.Fatal(err)
				}
				if K != 1+tc.n {
					t.Fatalf("K = %d, want %d", K, 1+tc.n)
				}
				return w.poolX, w.poolP
			}
			x0, p0 := embed(nil)
			sv := &taskSave{}
			x1, p1 := embed(sv)
			for _, c := range []struct {
				what      string
				got, want []float32
			}{{"node", x1, x0}, {"pair", p1, p0}} {
				var scale, worst float64
				for i, w := range c.want {
					scale = math.Max(scale, math.Abs(float64(w)))
					worst = math.Max(worst, math.Abs(float64(c.got[i])-float64(w)))
				}
				if !(worst <= 1e-5*scale) || scale == 0 {
					t.Errorf("%s: saving changed Ē by %.3g at scale %.3g", c.what, worst, scale)
				}
			}
			if len(sv.encP) != len(net.encoder) || len(sv.blocks) != len(net.blocks) {
				t.Fatalf("saved %d encoder layers and %d blocks, want %d and %d",
					len(sv.encP), len(sv.blocks), len(net.encoder), len(net.blocks))
			}
			for i, bs := range sv.blocks {
				if len(bs.a) != net.cfg.Heads*(1+tc.n)*(1+tc.n) || len(bs.x2) != len(x0)*(1+tc.n) {
					t.Errorf("block %d: saved %d probabilities and %d FFN inputs", i, len(bs.a), len(bs.x2))
				}
			}
		})
	}
}
