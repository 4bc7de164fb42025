package methods

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// netOnce loads the network of an Env once.
type netOnce struct {
	once sync.Once
	net  *network
	err  error
}

func (e *Env) network() (*network, error) {
	if e.net == nil {
		e.net = &netOnce{}
	}
	e.net.once.Do(func() {
		dir := e.Checkpoint
		if dir == "" {
			var err error
			if dir, err = afin.DefaultCheckpointDir(); err != nil {
				e.net.err = fmt.Errorf("%w: %w", ErrUnavailable, err)
				return
			}
		}
		m, err := afin.Load(dir)
		switch {
		case errors.Is(err, checkpoint.ErrInvalid):
			// The error names the directory or file already.
			e.net.err = fmt.Errorf("%w: %w", ErrUnavailable, err)
			return
		case err != nil:
			e.net.err = fmt.Errorf("%w: loading checkpoint %s: %w", ErrUnavailable, dir, err)
			return
		}
		e.net.net = &network{model: m, warm: map[[3]int]bool{}}
	})
	return e.net.net, e.net.err
}

// network is a loaded checkpoint shared by the AFIN adapters of one Env,
// with the input shapes it has already compiled.
type network struct {
	model *afin.Model
	mu    sync.Mutex
	warm  map[[3]int]bool // (d, N, draws per flow pass); draws 0 for the Gaussian decoder
}

// flow reports whether the checkpoint has a flow decoder.
func (n *network) flow() bool { return n.model.Cfg.Decoder == "flow" }

// cold marks a shape as compiled and reports whether it was not yet.
func (n *network) cold(key [3]int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := !n.warm[key]
	n.warm[key] = true
	return c
}

// proposal is one timed AFIN pass: s draws with their log q, and for the
// Gaussian decoder the Gaussian itself. warmup is the untimed pass that
// compiled the shape first (GoMLX only; 0 otherwise).
type proposal struct {
	g                     *afin.Gaussian // nil for the flow decoder
	draws                 *posterior.Draws
	logQ                  []float64
	fwd, sampling, warmup float64
}

// run passes task through the network and draws s points from rng. On
// the GoMLX engine the first pass of each input shape is run once
// beforehand, so the seconds never include graph compilation; its time
// is kept apart (proposal.warmup) and its buffers are collected before
// the timed pass allocates its own. The native engine compiles nothing
// and runs one pass. A task whose forward pass would not fit in the
// memory available is refused (ErrBadInput) before any work, and ctx
// stops the pass between layers.
func (n *network) run(ctx context.Context, task *factor.Task, s int, rng *rand.Rand) (*proposal, error) {
	p := &proposal{}
	if n.model.Compiled() && n.cold([3]int{task.D, task.N(), s * boolInt(n.flow())}) {
		start := time.Now()
		var err error
		if n.flow() {
			_, _, err = n.model.SampleFlowContext(ctx, task, s, streams.New(0, streams.AFINWarmup))
		} else {
			_, err = n.model.ForwardContext(ctx, []*factor.Task{task})
		}
		if err != nil {
			return nil, n.passError(err)
		}
		runtime.GC()
		p.warmup = time.Since(start).Seconds()
	}
	start := time.Now()
	if n.flow() {
		z, lq, err := n.model.SampleFlowContext(ctx, task, s, rng)
		if err != nil {
			return nil, n.passError(err)
		}
		// Forward pass and sampling are one graph: all of it is forward.
		p.draws, p.logQ, p.fwd = &posterior.Draws{D: task.D, Z: z}, lq, time.Since(start).Seconds()
		return p, nil
	}
	gs, err := n.model.ForwardContext(ctx, []*factor.Task{task})
	if err != nil {
		return nil, n.passError(err)
	}
	p.g, p.fwd = gs[0], time.Since(start).Seconds()
	start = time.Now()
	p.draws, p.logQ = posterior.DrawsOf(p.g, rng, s)
	p.sampling = time.Since(start).Seconds()
	return p, nil
}

// passError names the failed pass; a task too large for the memory
// available is bad input.
func (n *network) passError(err error) error {
	what := "afin forward"
	if n.flow() {
		what = "afin flow pass"
	}
	if errors.Is(err, afin.ErrTooLarge) {
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// flags marks a task outside the checkpoint's training support (nil when
// inside): the network's answer there is an extrapolation.
func (n *network) flags(task *factor.Task) *Flags {
	if why := n.model.Outside(task); why != "" {
		return &Flags{OutsideSupport: why}
	}
	return nil
}

func (n *network) diagnostics(p *proposal) *AFINDiagnostics {
	m := n.model
	dg := &AFINDiagnostics{Checkpoint: m.Dir, CheckpointStep: m.Step, CheckpointHash: m.Hash, Config: m.Cfg.Name,
		Decoder: m.Cfg.Decoder, ForwardSeconds: records.Num(p.fwd), SamplingSeconds: records.Num(p.sampling),
		WarmupSeconds: records.Num(p.warmup)}
	if p.g != nil {
		dg.Jitter = records.Num(p.g.Jitter)
	}
	return dg
}

// afinMethod is AFIN single shot: a forward pass, then draws from the
// network's posterior.
type afinMethod struct{ net *network }

func (afinMethod) Name() string              { return "afin" }
func (afinMethod) Kind() string              { return KindDraws }
func (afinMethod) Slots(ladder []int) []Slot { return ladderSlots(KindDraws, ladder) }
func (m afinMethod) CheckpointHash() string  { return m.net.model.Hash }

func (m afinMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	// A flow decoder's moments come from its draws: it needs some.
	least := 0
	if m.net.flow() {
		least = 2
	}
	if err := checkLadder(KindDraws, job.Ladder, least); err != nil {
		return fmt.Errorf("%w (a flow checkpoint reports moments of its draws)", err)
	}
	for i, n := range job.Ladder {
		p, err := m.net.run(ctx, job.Task, n, streams.New(job.Seed, streams.AFINLadder.At(i)))
		if err != nil {
			return err
		}
		pt := Point{
			Slot:        Slot{Kind: KindDraws, Budget: n},
			Seconds:     p.fwd + p.sampling,
			Diagnostics: Diagnostics{AFINDiagnostics: m.net.diagnostics(p), Flags: m.net.flags(job.Task)},
			Settings:    Settings{CheckpointStep: m.net.model.Step},
		}
		if n > 0 {
			pt.Draws = p.draws
		}
		if p.g != nil {
			pt.Mean, pt.Cov = p.g.Moments()
		}
		if err := emit(pt); err != nil {
			return err
		}
	}
	return nil
}

// afinSNISMethod uses the AFIN posterior as an SNIS proposal along a
// ladder of proposal counts, and emits the proposal itself (the star)
// with as many draws as the largest budget. Every point pays its own
// forward pass.
type afinSNISMethod struct{ net *network }

func (afinSNISMethod) Name() string              { return "afin-snis" }
func (afinSNISMethod) Kind() string              { return KindProposals }
func (afinSNISMethod) Slots(ladder []int) []Slot { return snisSlots(ladder) }
func (m afinSNISMethod) CheckpointHash() string  { return m.net.model.Hash }

func (m afinSNISMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	if err := checkLadder(KindProposals, job.Ladder, posterior.MinParetoKDraws); err != nil {
		return err
	}
	settings := Settings{CheckpointStep: m.net.model.Step}
	if !job.SkipProposal {
		top := job.Ladder[len(job.Ladder)-1]
		p, err := m.net.run(ctx, job.Task, top, streams.New(job.Seed, streams.AFINProposal))
		if err != nil {
			return err
		}
		err = emit(Point{Slot: Slot{Stage: StageProposal, Kind: KindProposals, Budget: top}, Draws: p.draws,
			Seconds: p.fwd + p.sampling, Diagnostics: Diagnostics{AFINDiagnostics: m.net.diagnostics(p), Flags: m.net.flags(job.Task)}, Settings: settings})
		if err != nil {
			return err
		}
	}
	for i, n := range job.Ladder {
		p, err := m.net.run(ctx, job.Task, n, streams.New(job.Seed, streams.AFINLadder.At(i)))
		if err != nil {
			return err
		}
		start := time.Now()
		draws, info, err := posterior.SNISDraws(ctx, job.Task, p.draws, p.logQ)
		if err != nil {
			return fmt.Errorf("afin-snis with %d proposals: %w", n, err)
		}
		secs := time.Since(start).Seconds()
		err = emit(Point{
			Slot: Slot{Kind: KindProposals, Budget: n}, Draws: draws, Seconds: p.fwd + p.sampling + secs,
			Diagnostics: Diagnostics{AFINDiagnostics: m.net.diagnostics(p), SNISDiagnostics: newSNISDiagnostics(n, info, secs),
				Flags: m.net.flags(job.Task)},
			Settings: settings,
		})
		if err != nil {
			return err
		}
	}
	return nil
}
