package methods

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/gemm"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// AFIN is AFIN single shot: one forward pass of the trained network,
// then draws from its posterior.
const AFIN = "afin"

func init() {
	registerNetwork(catalog.Entry{
		Name: AFIN, Summary: "AFIN single shot: one pass of the trained network, then draws from its posterior",
		Kind: KindDraws, Family: catalog.Amortised, QualifiedBy: AFINSNIS,
		Rank: 5, Label: "AFIN", Legend: 1, Colour: "#E69F00", Marker: "circle",
	}, func(n onNetwork) Method { return afinMethod{n} }, afinMethod{}.Slots,
		func(fs *flag.FlagSet, f *InferFlags) {
			f.Budget = fs.Int("draws", 2000, "draws from the posterior (0: moments only; a flow checkpoint needs ≥ 2)")
		})
}

// onNetwork is what every method that runs AFIN's network holds: the
// Env's loaded network, whose checkpoint its records name.
type onNetwork struct{ net *network }

func (m onNetwork) CheckpointHash() string { return m.net.model.Hash }

// registerNetwork registers a method that runs AFIN's network (afin,
// afin-snis, afin-imh, auto): its entry is marked Network, New loads the
// Env's network once and hands it to build, and --checkpoint is bound
// beside the method's own flags.
func registerNetwork(e catalog.Entry, build func(onNetwork) Method, slots func([]int) []Slot, flags func(*flag.FlagSet, *InferFlags)) {
	e.Network = true
	mustRegister(Descriptor{
		Entry: e,
		New: func(_ string, env *Env) (Method, error) {
			net, err := env.network()
			if err != nil {
				return nil, err
			}
			return build(onNetwork{net}), nil
		},
		Slots: slots,
		Flags: func(fs *flag.FlagSet, f *InferFlags) {
			f.Checkpoint = fs.String("checkpoint", "", "checkpoint directory (default $AFIN_CHECKPOINT or the shipped checkpoints/"+afin.DefaultCheckpointName+")")
			flags(fs, f)
		},
	})
}

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
			if dir, err = afin.DefaultCheckpointDir(e.CacheDir); err != nil {
				e.net.err = fmt.Errorf("%w: %w", ErrUnavailable, err)
				return
			}
		}
		m, err := afin.Load(dir, e.Engine)
		switch {
		case errors.Is(err, checkpoint.ErrInvalid):
			// The error names the directory or file already.
			e.net.err = fmt.Errorf("%w: %w", ErrUnavailable, err)
			return
		case err != nil:
			e.net.err = fmt.Errorf("%w: loading checkpoint %s: %w", ErrUnavailable, dir, err)
			return
		}
		e.net.net = &network{model: m, warm: map[[3]int]bool{}, warn: e.Warn}
	})
	return e.net.net, e.net.err
}

// network is a loaded checkpoint shared by the AFIN adapters of one Env,
// with the input shapes it has already compiled.
type network struct {
	model *afin.Model
	mu    sync.Mutex
	warm  map[[3]int]bool // (d, N, draws per flow pass); draws 0 for the Gaussian decoder
	// The last task assessed and what the support said of it (every
	// point of a job asks about the same task).
	lastTask *factor.Task
	last     *assessment
	// warn hears what is said before a forward pass (Env.Warn; nil:
	// nobody), once per task: warned is the last task it was told of.
	warn   func(string)
	warned *factor.Task
}

// assessment is what the checkpoint's support says of one task: why it
// lies outside ("" when inside), and when a change of variables brings
// it inside, the rescaled task the network answers instead.
type assessment struct {
	outside  string
	rescaled *afin.Rescaled
	whyNot   string // why no rescaling helped, for a task outside
}

func (n *network) assess(task *factor.Task) *assessment {
	n.mu.Lock()
	if n.lastTask == task {
		a := n.last
		n.mu.Unlock()
		return a
	}
	n.mu.Unlock()
	o, r, why := n.model.Assess(task)
	a := &assessment{outside: o, rescaled: r, whyNot: why}
	n.mu.Lock()
	n.lastTask, n.last = task, a
	n.mu.Unlock()
	return a
}

// outside is the OutsideSupport flag of a task: "" when inside or when
// a rescaling brought it inside.
func (n *network) outside(task *factor.Task) string {
	a := n.assess(task)
	if a.outside == "" || a.rescaled != nil {
		return ""
	}
	if a.whyNot != "" {
		return a.outside + " (no rescaling of the prior brings it inside: " + a.whyNot + ")"
	}
	return a.outside
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
// Gaussian decoder the Gaussian itself. q is the network's posterior for
// the task as a DrawEvaluator: what measures the draws' fit. warmup is the
// untimed pass that compiled the shape first (GoMLX only; 0 otherwise).
type proposal struct {
	g             *afin.Gaussian // nil for the flow decoder
	q             posterior.DrawEvaluator
	draws         *posterior.Draws
	logQ          []float64
	fwd, sampling float64
	warmup        float64
	rescaled      *afin.Rescaled // the task the network answered instead, mapped back
	forecast      afin.Forecast  // the pass as predicted before it ran
}

// flowQ is a flow decoder's posterior for one task: every batch of draws
// or of log q values is one network pass.
type flowQ struct {
	model *afin.Model
	task  *factor.Task
}

func (f flowQ) Dim() int { return f.task.D }

func (f flowQ) Draws(ctx context.Context, rng *rand.Rand, n int) (*posterior.Draws, []float64, error) {
	z, lq, err := f.model.SampleFlowContext(ctx, f.task, n, rng)
	if err != nil {
		return nil, nil, fmt.Errorf("afin flow pass: %w", err)
	}
	return &posterior.Draws{D: f.task.D, Z: z}, lq, nil
}

func (f flowQ) LogQs(ctx context.Context, z []float64) ([]float64, error) {
	return f.model.LogQFlowContext(ctx, f.task, z)
}

// fitDraws is the number of q's draws an AFIN answer's fit is measured
// on (as many Student-t draws join them): fresh draws of q, seeded from
// the answer (fitRNG), not the answer's own draws, which the job's seed
// chooses (for a flow decoder that is one more network pass of fitDraws
// draws). The check's cost is 2·fitDraws target evaluations
// whatever the answer's size; at 64 it stays under a tenth of the answer
// at d=8, N=64 on the shipped checkpoint (BenchmarkAFINFitCheck).
const fitDraws = 64

// measure measures the fit of p's answer: the defensive importance
// weights of fitDraws fresh draws of q against the task's posterior
// (posterior.DefensiveOf, the check FRVI's fits pass), their k̂ and ESS.
// Those draws and the Student-t ones come from rng, not from the answer's
// own draws, so the answer is untouched and, with rng = p.fitRNG(task),
// the verdict depends on the answer alone, not on the job's seed. A fit
// that cannot be measured (a flow whose draws have a singular
// covariance) has k̂ and ESS NaN and FitDraws 0.
func (p *proposal) measure(ctx context.Context, task *factor.Task, rng *rand.Rand) (*FitDiagnostics, error) {
	start := time.Now()
	nan := records.Num(math.NaN())
	fd := &FitDiagnostics{FitParetoK: nan, FitESS: nan, FitMeanShift: nan, FitWideLog: nan, FitNarrowLog: nan, FitCurvNarrowLog: nan}
	defer func() { fd.FitSeconds = records.Num(time.Since(start).Seconds()) }()
	dr, lq, err := p.q.Draws(ctx, rng, fitDraws)
	if err != nil {
		return nil, err
	}
	var mean, cov []float64
	if p.g != nil {
		mean, cov = p.g.Moments()
	} else {
		mean, cov = dr.Mean(), dr.Cov()
	}
	if l, i, ok := curvatureNarrow(task, mean, cov); ok {
		fd.FitCurvNarrowLog, fd.CurvCoord = records.Num(l), i+1
	}
	def, err := posterior.DefensiveOf(ctx, task, p.q, dr, lq, mean, cov, rng)
	if def == nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return fd, nil
	}
	fd.FitParetoK, fd.FitESS, fd.FitDraws = records.Num(def.ParetoK), records.Num(def.ESS), len(def.Z)/def.D
	if g, ok := posterior.MomentGapOf(mean, cov, def.Weighted()); ok {
		fd.FitMeanShift, fd.FitWideLog, fd.FitNarrowLog = records.Num(g.MeanShift), records.Num(g.WideLog), records.Num(g.NarrowLog)
		fd.ShiftCoord, fd.WideCoord, fd.NarrowCoord = g.ShiftCoord+1, g.WideCoord+1, g.NarrowCoord+1
	}
	return fd, nil
}

// run passes task through the network and draws s points from rng. A
// task whose forward pass would not fit in the memory available is
// refused (ErrBadInput) before any work, and ctx stops the pass between
// layers. A task outside the training support that a change of the
// prior's location and scale brings inside is answered on the changed
// task and mapped back exactly.
func (n *network) run(ctx context.Context, task *factor.Task, s int, rng *rand.Rand) (*proposal, error) {
	fc := n.preflight(task)
	r := n.assess(task).rescaled
	if r == nil {
		p, err := n.pass(ctx, task, s, rng)
		if p != nil {
			p.forecast = fc
		}
		return p, err
	}
	p, err := n.pass(ctx, r.Task, s, rng)
	if err != nil {
		return nil, err
	}
	p.forecast = fc
	// θ = a + s⊙θ′: draws map back, log q gets −Σ log s, the Gaussian
	// maps exactly (mean a + s⊙m′, precision Λ′ᵢⱼ/(sᵢsⱼ)).
	p.rescaled = r
	rp, d := r.Reparam, task.D
	if p.draws != nil {
		for i := 0; i+d <= len(p.draws.Z); i += d {
			rp.Draw(p.draws.Z[i : i+d])
		}
	}
	ld := rp.LogDet()
	for i := range p.logQ {
		p.logQ[i] -= ld
	}
	if p.g != nil {
		mean, _, prec := rp.Gaussian(p.g.Mean, nil, p.g.Precision)
		g, err := posterior.NewGaussianPrecision(mean, prec)
		if err != nil {
			return nil, fmt.Errorf("afin: mapping the rescaled task's Gaussian back: %w", err)
		}
		g.Jitter = max(g.Jitter, p.g.Jitter)
		p.g = g
	}
	// The fit is measured against the original task, so q must speak
	// in θ too.
	p.q = reparamQ{inner: p.q, r: rp}
	return p, nil
}

// preflight forecasts task's forward pass and, the first time it sees
// task, tells n.warn before any work what a person should hear first:
// that the task lies outside the checkpoint's support (the same words as
// the OutsideSupport flag's warning), and that the pass is predicted to
// be long, with the prediction.
func (n *network) preflight(task *factor.Task) afin.Forecast {
	fc := n.model.Forecast(task.D, task.N())
	n.mu.Lock()
	first := n.warned != task
	n.warned = task
	n.mu.Unlock()
	if n.warn == nil || !first || fc.TooLarge {
		return fc
	}
	if why := n.outside(task); why != "" {
		n.warn(warnings(&Flags{OutsideSupport: why})[0])
	}
	if fc.Long() {
		n.warn(fc.String())
	}
	return fc
}

// reparamQ is q′ of the changed task seen in the original coordinates,
// θ = a + s⊙θ′: draws map forward, log q(θ) = log q′(θ′) − Σ log s.
type reparamQ struct {
	inner posterior.DrawEvaluator
	r     factor.Reparam
}

func (q reparamQ) Dim() int { return q.inner.Dim() }

func (q reparamQ) Draws(ctx context.Context, rng *rand.Rand, n int) (*posterior.Draws, []float64, error) {
	dr, lq, err := q.inner.Draws(ctx, rng, n)
	if err != nil {
		return nil, nil, err
	}
	d, ld := dr.D, q.r.LogDet()
	for i := 0; i+d <= len(dr.Z); i += d {
		q.r.Draw(dr.Z[i : i+d])
	}
	for i := range lq {
		lq[i] -= ld
	}
	return dr, lq, nil
}

func (q reparamQ) LogQs(ctx context.Context, z []float64) ([]float64, error) {
	d := q.inner.Dim()
	zp := slices.Clone(z)
	for i := 0; i+d <= len(zp); i += d {
		q.r.Undraw(zp[i : i+d])
	}
	lq, err := q.inner.LogQs(ctx, zp)
	if err != nil {
		return nil, err
	}
	ld := q.r.LogDet()
	for i := range lq {
		lq[i] -= ld
	}
	return lq, nil
}

// pass is one network pass on task with s draws. On the GoMLX engine the
// first pass of each input shape is run once beforehand, so the seconds
// never include graph compilation; its time is kept apart
// (proposal.warmup) and its buffers are collected before the timed pass
// allocates its own. The native engine compiles nothing and runs one pass.
func (n *network) pass(ctx context.Context, task *factor.Task, s int, rng *rand.Rand) (*proposal, error) {
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
		p.q = flowQ{n.model, task}
		p.draws, p.logQ, p.fwd = &posterior.Draws{D: task.D, Z: z}, lq, time.Since(start).Seconds()
		return p, nil
	}
	gs, err := n.model.ForwardContext(ctx, []*factor.Task{task})
	if err != nil {
		return nil, n.passError(err)
	}
	p.g, p.q, p.fwd = gs[0], posterior.Batch(gs[0]), time.Since(start).Seconds()
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
// inside, or brought inside by a rescaling): the network's answer there
// is an extrapolation.
func (n *network) flags(task *factor.Task) *Flags {
	if why := n.outside(task); why != "" {
		return &Flags{OutsideSupport: why}
	}
	return nil
}

func (n *network) diagnostics(p *proposal) *AFINDiagnostics {
	m := n.model
	dg := &AFINDiagnostics{Checkpoint: m.Dir, CheckpointStep: m.Step, CheckpointHash: m.Hash, Config: m.Cfg.Name,
		Decoder: m.Cfg.Decoder, ForwardSeconds: records.Num(p.fwd), SamplingSeconds: records.Num(p.sampling),
		Engine: m.Engine.String(), Kernel: gemm.Kernel(), CPUFeatures: gemm.CPUFeatures(),
		WarmupSeconds: records.Num(p.warmup)}
	if progs, secs := m.GoMLXPrograms(); progs > 0 {
		dg.Programs, dg.CompileSeconds = progs, records.Num(secs)
	}
	if p.g != nil {
		dg.Jitter = records.Num(p.g.Jitter)
	}
	fc := p.forecast
	dg.PredictedFLOPs, dg.PredictedPeakBytes, dg.LongForward = fc.FLOPs, fc.PeakBytes, fc.Long()
	if fc.Seconds > 0 {
		dg.PredictedForwardSeconds = records.Num(fc.Seconds)
	}
	if r := p.rescaled; r != nil {
		dg.Rescaled = true
		dg.Rescaling = fmt.Sprintf("answered on the task reparametrised by %v (as given: %s); draws, log q and moments mapped back exactly", r.Reparam, r.Was)
	}
	return dg
}

// afinMethod is AFIN single shot: a forward pass, then draws from the
// network's posterior.
type afinMethod struct{ onNetwork }

func (afinMethod) Name() string              { return AFIN }
func (afinMethod) Kind() string              { return KindDraws }
func (afinMethod) Slots(ladder []int) []Slot { return ladderSlots(KindDraws, ladder) }

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
		fit, err := p.measure(ctx, job.Task, p.fitRNG(job.Task))
		if err != nil {
			return fmt.Errorf("afin with %d draws: measuring the fit: %w", n, err)
		}
		pt := Point{
			Slot:        Slot{Kind: KindDraws, Budget: n},
			Seconds:     p.fwd + p.sampling,
			Diagnostics: Diagnostics{AFINDiagnostics: m.net.diagnostics(p), FitDiagnostics: fit, Flags: m.net.flags(job.Task)},
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
