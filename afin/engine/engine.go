package afin

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/afin-bench/afin/afin/cpu"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// The network has two implementations of one declaration (package arch):
// the GoMLX graph (model.go, flow.go), which runs on any GoMLX backend and
// is the GPU path, and the native CPU path (package cpu), hand-written
// forward and backward passes over an AVX-512 matmul kernel, 27–35× faster
// than GoMLX's pure Go backend on one core in the forward pass and 17–19×
// in a training step (the benchmark tables of cpu's package doc). Both
// are tested against the authors' reference outputs and each other; the
// engine is chosen once per process.

// EngineEnv names the environment variable that picks the implementation:
// "native" or "gomlx". Unset, afin runs natively whenever GoMLX would run on
// the pure Go backend (GOMLX_BACKEND unset, "go" or "go:…"), and GoMLX
// otherwise (an XLA plugin, on a GPU).
const EngineEnv = "AFIN_ENGINE"

// useNative reports whether the native CPU path runs the network.
func useNative() (bool, error) {
	switch e := os.Getenv(EngineEnv); e {
	case "native":
		return true, nil
	case "gomlx":
		return false, nil
	case "":
		b := os.Getenv("GOMLX_BACKEND")
		return b == "" || b == "go" || strings.HasPrefix(b, "go:"), nil
	default:
		return false, fmt.Errorf("afin: %s=%q: want native or gomlx", EngineEnv, e)
	}
}

// Engine names the implementation this process runs the network with, for
// provenance: "native" or "gomlx:<GOMLX_BACKEND>".
func Engine() string {
	if n, err := useNative(); err == nil && n {
		return "native"
	}
	return "gomlx:" + gomlxBackend()
}

// gomlxBackend is the GoMLX backend this process uses ("go" when unset).
func gomlxBackend() string {
	if b := os.Getenv("GOMLX_BACKEND"); b != "" {
		return b
	}
	return "go"
}

// bound is the network with one set of weights, on one implementation.
// Flow sampling and density run at strength 1 (inference); training passes
// the ramp's strength to lossGrad.
type bound interface {
	gaussian(ctx context.Context, b *Batch) (mu, lam []float32, err error)
	flowSample(ctx context.Context, b *Batch, eps []float32, s int) (z, logq []float32, err error)
	flowLogQ(ctx context.Context, b *Batch, z []float32, s int) ([]float32, error)
	lossGrad(ctx context.Context, b *Batch, strength float32) (loss float64, grads [][]float32, err error)
	release()
}

// nativeNet is the native CPU path; workers spreads a training batch's
// tasks over goroutines (the sum is in a fixed order, so a result depends
// on workers but not on scheduling).
type nativeNet struct {
	net     *cpu.Net
	workers int
}

func (n nativeNet) gaussian(ctx context.Context, b *Batch) ([]float32, []float32, error) {
	return n.net.Gaussian(ctx, b)
}

func (n nativeNet) flowSample(ctx context.Context, b *Batch, eps []float32, s int) ([]float32, []float32, error) {
	return n.net.FlowSample(ctx, b, eps, s)
}

func (n nativeNet) flowLogQ(ctx context.Context, b *Batch, z []float32, s int) ([]float32, error) {
	return n.net.FlowLogQ(ctx, b, z, s)
}

func (n nativeNet) lossGrad(ctx context.Context, b *Batch, strength float32) (float64, [][]float32, error) {
	if n.net.Flow() {
		return n.net.FlowLossGrad(ctx, b, strength, n.workers)
	}
	return n.net.LossGradWorkers(ctx, b, n.workers)
}

func (nativeNet) release() {}

// gomlxNet is the GoMLX graph with its weights as device tensors. GoMLX
// executions are serialised (its compiled programs are shared), and ctx is
// only checked between calls: a graph runs to its end.
type gomlxNet struct {
	eng *engine
	w   []any
}

func (g gomlxNet) gaussian(ctx context.Context, b *Batch) ([]float32, []float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return g.eng.forward(g.w, b)
}

func (g gomlxNet) flowSample(ctx context.Context, b *Batch, eps []float32, s int) ([]float32, []float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return g.eng.flowSample(g.w, b, eps, s, 1)
}

func (g gomlxNet) flowLogQ(ctx context.Context, b *Batch, z []float32, s int) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lq, _, err := g.eng.flowDensity(g.w, b, z, s, 1)
	return lq, err
}

func (g gomlxNet) lossGrad(ctx context.Context, b *Batch, strength float32) (float64, [][]float32, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	loss, _, grads, err := g.eng.lossGrad(g.w, b, strength)
	return loss, grads, err
}

func (g gomlxNet) release() { releaseTensors(g.w) }

// binder binds weights to the implementation chosen for a configuration;
// the GoMLX engine (and its compiled programs) outlives the weights.
type binder struct {
	native  bool
	cfg     Config
	eng     *engine
	workers int
}

func newBinder(cfg Config, workers int) (*binder, error) {
	native, err := useNative()
	if err != nil {
		return nil, err
	}
	bd := &binder{native: native, cfg: cfg, workers: max(workers, 1)}
	if !native {
		if bd.eng, err = newEngine(cfg, false); err != nil {
			return nil, err
		}
	}
	return bd, nil
}

func (bd *binder) bind(weights [][]float32) (bound, error) {
	if bd.native {
		net, err := cpu.NewNetFromData(bd.cfg, weights)
		if err != nil {
			return nil, fmt.Errorf("afin: native network: %w", err)
		}
		return nativeNet{net: net, workers: bd.workers}, nil
	}
	return gomlxNet{eng: bd.eng, w: paramTensors(bd.eng.params, weights)}, nil
}

// releaseTensors frees GoMLX weight tensors now rather than at garbage
// collection (a training run binds new weights every step).
func releaseTensors(w []any) {
	for _, t := range w {
		if t, ok := t.(*tensors.Tensor); ok {
			t.FinalizeAll()
		}
	}
}

// padN is the site count a training batch is padded to: GoMLX buckets N
// so shapes repeat and compiled programs are reused; the native path
// needs no padding (it would only skip the padded sites).
func (bd *binder) padN(n int) int {
	if bd.native {
		return 0
	}
	return BucketN(n)
}
