package gomlx

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/factor"
)

func trainBatch(t *testing.T, seed uint64, d, n, b int) *arch.Batch {
	t.Helper()
	tasks := mixedTasks(t, seed, d, n, b)
	z := make([][]float64, len(tasks))
	for i, tk := range tasks {
		z[i] = tk.TrueZ
	}
	batch, err := arch.NewBatch(context.Background(), tasks, 0, z)
	if err != nil {
		t.Fatal(err)
	}
	return batch
}

// relErr is ‖got − want‖/‖want‖ over all tensors.
func relErr(got, want [][]float32) float64 {
	var num, den float64
	for i := range want {
		for k := range want[i] {
			e := float64(got[i][k] - want[i][k])
			num += e * e
			den += float64(want[i][k]) * float64(want[i][k])
		}
	}
	return math.Sqrt(num / den)
}

// The padded programs (d to its bucket with coordinate masks, N to its
// bucket, tasks to a chunk) compute the unpadded network: forward, loss
// and every gradient, at sizes that pad each axis, on the Go backend.
func TestPaddedProgramsEqualExact(t *testing.T) {
	cfg := tinyConfig()
	_, data := randomWeights(cfg, 7)
	for _, tc := range []struct{ d, n, b int }{{1, 1, 1}, {3, 5, 2}, {5, 17, 3}, {8, 2, 2}, {13, 0, 1}} {
		t.Run(fmt.Sprintf("d=%d,N=%d,B=%d", tc.d, tc.n, tc.b), func(t *testing.T) {
			e, err := newEngine(cfg, false, "")
			if err != nil {
				t.Fatal(err)
			}
			w := e.Weights(data)
			b := trainBatch(t, uint64(tc.d*100+tc.n), tc.d, tc.n, tc.b)
			refMu, refLam := wholeForward(t, e, w, b)
			mu, lam, err := e.Forward(context.Background(), w, b)
			if err != nil {
				t.Fatal(err)
			}
			assertClose(t, "mu", mu, refMu, 1e-5)
			assertClose(t, "lambda", lam, refLam, 1e-5)

			wantLoss, want := wholeLossGrad(t, e, w, b, 1)
			loss, _, got, err := e.LossGrad(context.Background(), w, b, 1)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(loss-wantLoss) > 1e-5*math.Max(1, math.Abs(wantLoss)) {
				t.Errorf("loss %g, want %g", loss, wantLoss)
			}
			if r := relErr(got, want); r > 1e-5 {
				t.Errorf("gradient differs from the unpadded one by %.2e relative", r)
			}
		})
	}
}

// A batch split into chunks by the memory plan has the loss and gradient
// of the whole batch: each task is weighted 1/B whichever chunk holds it.
func TestChunkedEqualsUnchunked(t *testing.T) {
	cfg := tinyConfig()
	_, data := randomWeights(cfg, 8)
	b := trainBatch(t, 31, 6, 9, 11)
	whole, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	wantLoss, _, want, err := whole.LossGrad(context.Background(), whole.Weights(data), b, 1)
	if err != nil {
		t.Fatal(err)
	}
	one, err := whole.PredictBytes("gaussian_loss", 1, 6, 9)
	if err != nil {
		t.Fatal(err)
	}
	// A budget of a single task's peak leaves one task a run: 11 runs.
	chunked, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	chunked.SetBudget(one)
	loss, _, got, err := chunked.LossGrad(context.Background(), chunked.Weights(data), b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c := chunked.chunks[planKey{kind: "gaussian_loss", d: BucketD(6), np: BucketN(9)}]; c != 1 {
		t.Fatalf("planned chunk %d, want 1 under a one-task budget", c)
	}
	if math.Abs(loss-wantLoss) > 1e-6*math.Max(1, math.Abs(wantLoss)) {
		t.Errorf("chunked loss %.8g, unchunked %.8g", loss, wantLoss)
	}
	if r := relErr(got, want); r > 1e-6 {
		t.Errorf("chunked gradient differs by %.2e relative", r)
	}
}

// The training mixture over d ≤ 16, N ≤ 256 meets at most 24 buckets,
// and a training run compiles each bucket's programs once: the engine's count over many
// micro-batches stays within the bucket set.
func TestTrainingProgramsBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[[2]int]bool{}
	for range 20000 {
		d, n := factor.SampleDN(rng, factor.SimOptions{})
		seen[[2]int{BucketD(d), BucketN(n)}] = true
	}
	if all := len(Buckets(16, 256)); len(seen) > all || all > 24 {
		t.Fatalf("training mixture meets %d (d, N) buckets of %d; want ≤ 24", len(seen), all)
	}
	cfg := tinyConfig()
	_, data := randomWeights(cfg, 9)
	e, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	w := e.Weights(data)
	sim := factor.SimOptions{DMax: 6, NMax: 20}
	buckets := map[[2]int]bool{}
	for range 24 {
		tasks, err := factor.SimulateBatch(rng, sim, 3)
		if err != nil {
			t.Fatal(err)
		}
		z := make([][]float64, len(tasks))
		for i, tk := range tasks {
			z[i] = tk.TrueZ
		}
		b, err := arch.NewBatch(context.Background(), tasks, BucketN(tasks[0].N()), z)
		if err != nil {
			t.Fatal(err)
		}
		buckets[[2]int{BucketD(b.D), BucketN(b.NPad)}] = true
		if _, _, _, err := e.LossGrad(context.Background(), w, b, 1); err != nil {
			t.Fatal(err)
		}
	}
	perPass := len(e.passPrograms(planKey{kind: "gaussian_loss", d: 4, np: 16}, 4))
	if got := e.Compiles(); got != perPass*len(buckets) {
		t.Errorf("%d programs compiled over %d distinct buckets; want the %d of a pass for each", got, len(buckets), perPass)
	}
}

// countingCtx reports cancellation from its after-th look on: a test can
// cancel from inside a pass at a chosen point.
type countingCtx struct {
	context.Context
	looks, after int
}

func (c *countingCtx) Err() error {
	c.looks++
	if c.looks > c.after {
		return context.Canceled
	}
	return nil
}

// A chunked pass looks at its context between program runs: cancelled
// after the third chunk, it stops there with the context's error.
func TestChunkedPassStopsBetweenRuns(t *testing.T) {
	cfg := tinyConfig()
	_, data := randomWeights(cfg, 14)
	b := trainBatch(t, 61, 4, 3, 9)
	e, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	one, err := e.PredictBytes("gaussian_loss", 1, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	e.SetBudget(one) // one task a run: nine runs
	ctx := &countingCtx{Context: context.Background(), after: 3}
	_, _, _, err = e.LossGrad(ctx, e.Weights(data), b, 1)
	if err != context.Canceled {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if ctx.looks != 4 {
		t.Errorf("the pass looked at its context %d times before stopping, want 4 (once a run)", ctx.looks)
	}
	ctx = &countingCtx{Context: context.Background(), after: 0}
	before := e.Compiles()
	if _, err := e.CompileAhead(ctx, 16, 256, 32, 2); err != context.Canceled {
		t.Errorf("compile-ahead under a cancelled context: %v, want context.Canceled", err)
	}
	if n := e.Compiles() - before; n > 1 {
		t.Errorf("compile-ahead under a cancelled context compiled %d programs", n)
	}
}

// A compile cannot be stopped, so a cancel returns from waiting on one
// at once and leaves it to finish unused: untilDone with a call still
// blocked returns the context's error.
func TestUntilDoneReturnsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- untilDone(ctx, func() error { close(started); <-release; return nil })
	}()
	<-started
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("untilDone returned %v while its call was blocked, want context.Canceled", err)
	}
	if err := untilDone(context.Background(), func() error { return context.DeadlineExceeded }); err != context.DeadlineExceeded {
		t.Errorf("untilDone lost its call's error: %v", err)
	}
}
