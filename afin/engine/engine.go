// Package engine binds a network's weights to one of its two
// implementations of one declaration (package arch): the native CPU path
// (package cpu), hand-written forward and backward passes over matrix
// kernels in Go assembly, and the GoMLX graph (package gomlx), which runs
// on any GoMLX backend and is the GPU path. Both are tested against the
// authors' reference outputs and each other; the caller chooses one per
// process (Choice) and passes it down.
package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/cpu"
	"github.com/afin-bench/afin/afin/gomlx"
	"github.com/afin-bench/afin/internal/optim"
)

// Choice names the implementation that runs the network and the GoMLX
// backend it would use; the zero value is the default (native on the
// pure Go backend). cmd/afin fills it from AFIN_ENGINE and GOMLX_BACKEND.
type Choice struct {
	// Engine is "native", "gomlx" or "" (native whenever GoMLX would run
	// on the pure Go backend, GoMLX otherwise: an XLA plugin, on a GPU).
	Engine string
	// Backend is a GOMLX_BACKEND value: "" or "go" for the pure Go
	// backend, "xla:…" for an XLA plugin.
	Backend string
}

// Native reports whether the native CPU path runs the network.
func (c Choice) Native() (bool, error) {
	switch c.Engine {
	case "native":
		return true, nil
	case "gomlx":
		return false, nil
	case "":
		b := c.Backend
		return b == "" || b == "go" || strings.HasPrefix(b, "go:"), nil
	default:
		return false, fmt.Errorf("afin: engine %q: want native or gomlx", c.Engine)
	}
}

// String names the implementation for provenance: "native" or
// "gomlx:<backend>" ("go" when the backend is unset).
func (c Choice) String() string {
	if n, err := c.Native(); err == nil && n {
		return "native"
	}
	if c.Backend == "" {
		return "gomlx:go"
	}
	return "gomlx:" + c.Backend
}

// Bound is the network with one set of weights, on one implementation.
// Flow sampling and density run at strength 1 (inference); training passes
// the ramp's strength to LossGrad.
type Bound interface {
	Gaussian(ctx context.Context, b *arch.Batch) (mu, lam []float32, err error)
	FlowSample(ctx context.Context, b *arch.Batch, eps []float32, s int) (z, logq []float32, err error)
	FlowLogQ(ctx context.Context, b *arch.Batch, z []float32, s int) ([]float32, error)
	LossGrad(ctx context.Context, b *arch.Batch, strength float32) (loss float64, grads [][]float32, err error)
	// Accumulate starts a training step's gradient sums, kept where the
	// implementation computes them (on the device for GoMLX).
	Accumulate() Accumulator
	Release()
}

// Accumulator sums a training step's micro-batch gradients.
type Accumulator interface {
	// Add adds scale times the batch's mean loss gradient and returns
	// scale times its mean loss.
	Add(ctx context.Context, b *arch.Batch, strength float32, scale float64) (loss float64, err error)
	// Grads returns the sums on the host and ends the accumulator.
	Grads() [][]float32
	// Release ends the accumulator unread.
	Release()
}

// nativeNet is the native CPU path; workers spreads a training batch's
// tasks over goroutines (the sum is in a fixed order, so a result depends
// on workers but not on scheduling).
type nativeNet struct {
	net     *cpu.Net
	workers int
}

func (n nativeNet) Gaussian(ctx context.Context, b *arch.Batch) ([]float32, []float32, error) {
	return n.net.Gaussian(ctx, b)
}

func (n nativeNet) FlowSample(ctx context.Context, b *arch.Batch, eps []float32, s int) ([]float32, []float32, error) {
	return n.net.FlowSample(ctx, b, eps, s)
}

func (n nativeNet) FlowLogQ(ctx context.Context, b *arch.Batch, z []float32, s int) ([]float32, error) {
	return n.net.FlowLogQ(ctx, b, z, s)
}

func (n nativeNet) LossGrad(ctx context.Context, b *arch.Batch, strength float32) (float64, [][]float32, error) {
	if n.net.Flow() {
		return n.net.FlowLossGrad(ctx, b, strength, n.workers)
	}
	return n.net.LossGradWorkers(ctx, b, n.workers)
}

func (n nativeNet) Accumulate() Accumulator { return &hostSums{net: n} }

func (nativeNet) Release() {}

// hostSums are the native engine's step sums, on the host.
type hostSums struct {
	net nativeNet
	sum [][]float32
}

func (h *hostSums) Add(ctx context.Context, b *arch.Batch, strength float32, scale float64) (float64, error) {
	l, g, err := h.net.LossGrad(ctx, b, strength)
	if err != nil {
		return 0, err
	}
	sc := float32(scale)
	if h.sum == nil { // the first micro-batch's gradient becomes the sums
		h.sum = g
		if sc != 1 {
			optim.Each(len(g), func(i int) {
				for j := range g[i] {
					g[i][j] *= sc
				}
			})
		}
		return scale * l, nil
	}
	optim.Each(len(g), func(i int) {
		for j, v := range g[i] {
			h.sum[i][j] += sc * v
		}
	})
	return scale * l, nil
}

func (h *hostSums) Grads() [][]float32 { return h.sum }

func (h *hostSums) Release() { h.sum = nil }

// gomlxNet is the GoMLX graph with its weights as device tensors. GoMLX
// executions are serialised (its compiled programs are shared), and ctx is
// only checked between calls: a graph runs to its end.
type gomlxNet struct {
	eng *gomlx.Engine
	w   []any
}

func (g gomlxNet) Gaussian(ctx context.Context, b *arch.Batch) ([]float32, []float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return g.eng.Forward(ctx, g.w, b)
}

func (g gomlxNet) FlowSample(ctx context.Context, b *arch.Batch, eps []float32, s int) ([]float32, []float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return g.eng.FlowSample(ctx, g.w, b, eps, s, 1)
}

func (g gomlxNet) FlowLogQ(ctx context.Context, b *arch.Batch, z []float32, s int) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lq, _, err := g.eng.FlowDensity(ctx, g.w, b, z, s, 1)
	return lq, err
}

func (g gomlxNet) LossGrad(ctx context.Context, b *arch.Batch, strength float32) (float64, [][]float32, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	loss, _, grads, err := g.eng.LossGrad(ctx, g.w, b, strength)
	return loss, grads, err
}

func (g gomlxNet) Accumulate() Accumulator {
	return &deviceSums{net: g, sums: g.eng.NewGradSums()}
}

func (g gomlxNet) Release() { gomlx.Release(g.w) }

// deviceSums are the GoMLX engine's step sums, on the device: every
// chunk and micro-batch adds there, and the host reads them once.
type deviceSums struct {
	net  gomlxNet
	sums *gomlx.GradSums
}

func (d *deviceSums) Add(ctx context.Context, b *arch.Batch, strength float32, scale float64) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	l, _, err := d.net.eng.AddLossGrad(ctx, d.net.w, b, strength, float32(scale), d.sums)
	return l, err
}

func (d *deviceSums) Grads() [][]float32 { return d.sums.Host() }

func (d *deviceSums) Release() { d.sums.Release() }

// Binder binds weights to the implementation chosen for a configuration;
// the GoMLX engine (and its compiled programs) outlives the weights.
type Binder struct {
	native  bool
	cfg     arch.Config
	eng     *gomlx.Engine
	workers int
}

// NewBinder returns the binder of a configuration on the chosen
// implementation; workers spreads a native training batch over
// goroutines.
func NewBinder(cfg arch.Config, workers int, c Choice) (*Binder, error) {
	native, err := c.Native()
	if err != nil {
		return nil, err
	}
	bd := &Binder{native: native, cfg: cfg, workers: max(workers, 1)}
	if !native {
		if bd.eng, err = gomlx.New(cfg, c.Backend); err != nil {
			return nil, err
		}
	}
	return bd, nil
}

// Bind returns the network with these weights.
func (bd *Binder) Bind(weights [][]float32) (Bound, error) {
	if bd.native {
		net, err := cpu.NewNetFromData(bd.cfg, weights)
		if err != nil {
			return nil, fmt.Errorf("afin: native network: %w", err)
		}
		return nativeNet{net: net, workers: bd.workers}, nil
	}
	return gomlxNet{eng: bd.eng, w: bd.eng.Weights(weights)}, nil
}

// Native reports whether the binder's networks run on the native CPU path.
func (bd *Binder) Native() bool { return bd.native }

// Settings are the training settings a binder's engine runs with. The
// native engine computes in float32 and plans its own memory, so it takes
// only the zero value's Precision ("" or "fp32").
type Settings struct {
	// Precision is "fp32", "tf32" (a setting of the XLA backend: the
	// graphs stay float32) or "bf16" (bfloat16 activations from float32
	// master weights).
	Precision string
	// MemoryBudget is the modelled device memory (bytes) each program
	// run is planned to fit; 0 plans nothing.
	MemoryBudget int64
	// Notes, when set, receives one line for each event a user should
	// know of (a program's memory plan, a chunk halved after the device
	// ran out of memory).
	Notes func(string)
}

// Configure applies the settings; set them before the first pass.
func (bd *Binder) Configure(s Settings) error {
	if bd.native {
		if s.Precision == "bf16" || s.Precision == "tf32" {
			return fmt.Errorf("precision %s needs the gomlx engine (AFIN_ENGINE=gomlx)", s.Precision)
		}
		return nil
	}
	return configure(bd.eng, s)
}

func configure(e *gomlx.Engine, s Settings) error {
	if s.Precision == "bf16" {
		if err := e.SetPrecision("bf16"); err != nil {
			return err
		}
	}
	e.SetBudget(s.MemoryBudget)
	e.Notes = s.Notes
	return nil
}

// Stats are what a binder's engine has compiled and redone so far.
type Stats struct {
	// Programs is the number of programs compiled, CompileSeconds the
	// wall time they took (both 0 on the native engine).
	Programs       int
	CompileSeconds float64
	// ChunkRetries counts program runs redone with half the chunk after
	// the device ran out of memory.
	ChunkRetries int
}

// Stats returns the engine's statistics so far.
func (bd *Binder) Stats() Stats { return statsOf(bd.eng) }

func statsOf(e *gomlx.Engine) Stats {
	if e == nil {
		return Stats{}
	}
	return Stats{Programs: e.Compiles(), CompileSeconds: e.CompileSeconds(), ChunkRetries: e.Retries()}
}

// CompileAhead compiles the training programs of every (d, N) bucket up
// to (dMax, nMax) for batches of tasks tasks, workers at a
// time, and returns how many it compiled (none on the native engine,
// which compiles nothing).
func (bd *Binder) CompileAhead(ctx context.Context, dMax, nMax, tasks, workers int) (int, error) {
	if bd.native {
		return 0, nil
	}
	return bd.eng.CompileAhead(ctx, dMax, nMax, tasks, workers)
}

// Census lists the training programs the GoMLX engine would
// compile for a run of cfg with these settings over d ≤ dMax, N ≤ nMax in
// micro-batches of tasks tasks, whichever engine the run chooses: what a
// GPU will compile, as a CPU can show it (the graphs are built on the Go
// backend and never compiled).
func Census(cfg arch.Config, s Settings, dMax, nMax, tasks int) ([]gomlx.ProgramCensus, error) {
	e, err := gomlx.New(cfg, "")
	if err != nil {
		return nil, err
	}
	if err := configure(e, s); err != nil {
		return nil, err
	}
	return e.Census(dMax, nMax, tasks)
}

// NativeNet is the native network behind b, if b runs on the native path
// (callers reuse it rather than build a second copy of the weights).
func NativeNet(b Bound) (*cpu.Net, bool) {
	n, ok := b.(nativeNet)
	return n.net, ok
}

// BindNative binds a native network (to compare the two implementations).
func BindNative(net *cpu.Net) Bound { return nativeNet{net: net, workers: 1} }

// PadN is the site count a training batch is padded to: GoMLX buckets N
// so shapes repeat and compiled programs are reused; the native path
// needs no padding (it would only skip the padded sites).
func (bd *Binder) PadN(n int) int {
	if bd.native {
		return 0
	}
	return gomlx.BucketN(n)
}
