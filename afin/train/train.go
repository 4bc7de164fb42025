// Package train trains the network: the AdamW loop with clipping, EMA and
// the flow's strength ramp (paper Sec. 4.3, App. D.1), on either
// implementation (package engine), and the run's state in a portable
// checkpoint (package checkpoint), resumable bit for bit.
package train

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/engine"
	"github.com/afin-bench/afin/afin/heldout"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/atomicfile"
	"github.com/afin-bench/afin/internal/optim"
	"github.com/afin-bench/afin/internal/streams"
)

// TrainOptions are the settings of a training run (objective: paper eq.
// (training_loss); schedule values: the authors' public trainer).
type TrainOptions struct {
	Steps       int     `json:"steps"`
	BatchTasks  int     `json:"batch_tasks"`   // tasks per micro-batch, sharing (d, N)
	MicroBatch  int     `json:"micro_batches"` // micro-batches per step, gradients averaged (0 means 1)
	LR          float64 `json:"lr"`
	WeightDecay float64 `json:"weight_decay"`
	Warmup      int     `json:"warmup"`      // linear warm-up from 0.01·LR
	MinLRFrac   float64 `json:"min_lr_frac"` // cosine floor as a fraction of LR
	ClipNorm    float64 `json:"clip_norm"`
	EMADecay    float64 `json:"ema_decay"`
	EMAStart    int     `json:"ema_start"` // steps during which the EMA mirrors the weights
	Seed        uint64  `json:"seed"`

	// Simulator support for (d, N); zero values mean the paper's 1..16, 1..256.
	DMin int `json:"d_min"`
	DMax int `json:"d_max"`
	NMin int `json:"n_min"`
	NMax int `json:"n_max"`

	CheckpointEvery   int     `json:"checkpoint_every"`   // steps; 0 = only by time
	CheckpointSeconds float64 `json:"checkpoint_seconds"` // wall seconds between checkpoints; 0 = only by steps
	EvalEvery         int     `json:"eval_every"`         // steps between held-out evaluations; 0 = never
	LogEvery          int     `json:"log_every"`

	// Workers spreads a micro-batch's tasks over goroutines on the native
	// engine. It is stored, because the gradient sum's order follows it: a
	// resumed run with the same workers continues bit for bit. 0 means
	// GOMAXPROCS at the start of a run.
	Workers int `json:"workers,omitempty"`

	// Precision is the GoMLX engine's training arithmetic: "" or "fp32",
	// "tf32" (float32 with TF32 matrix products on a CUDA device; the
	// command sets it on the backend) or "bf16" (bfloat16 activations
	// from float32 master weights; loss, gradients and optimiser in
	// float32). Stored: it changes the numbers a resumed run continues.
	Precision string `json:"precision,omitempty"`
}

// DefaultTrainOptions are the paper's settings (the authors' trainer): 4 micro-batches
// of 32 tasks per step.
func DefaultTrainOptions() TrainOptions {
	return TrainOptions{
		Steps: 100000, BatchTasks: 32, MicroBatch: 4, LR: 2e-4, WeightDecay: 1e-4,
		Warmup: 1000, MinLRFrac: 0.1, ClipNorm: 5, EMADecay: 0.999, EMAStart: 200,
		CheckpointEvery: 2500, CheckpointSeconds: 300, EvalEvery: 2500, LogEvery: 10,
	}
}

// LearningRate is the warm-up + cosine schedule at a step.
func (o TrainOptions) LearningRate(step int) float64 {
	if step < o.Warmup {
		return o.LR * (0.01 + 0.99*float64(step)/float64(o.Warmup))
	}
	span := o.Steps - o.Warmup
	if span <= 0 {
		return o.LR
	}
	frac := math.Min(1, float64(step-o.Warmup)/float64(span))
	floor := o.MinLRFrac * o.LR
	return floor + (o.LR-floor)*0.5*(1+math.Cos(math.Pi*frac))
}

// Check reports the first option out of range, naming it and its value.
func (o TrainOptions) Check() error {
	switch {
	case o.Steps < 1:
		return fmt.Errorf("steps must be ≥ 1, got %d", o.Steps)
	case o.BatchTasks < 1:
		return fmt.Errorf("batch tasks must be ≥ 1, got %d", o.BatchTasks)
	case o.MicroBatch < 0:
		return fmt.Errorf("micro-batches must be ≥ 1, got %d", o.MicroBatch)
	case !(o.LR > 0) || math.IsInf(o.LR, 0):
		return fmt.Errorf("learning rate must be finite and > 0, got %g", o.LR)
	case o.Workers < 0:
		return fmt.Errorf("workers must be ≥ 0, got %d", o.Workers)
	case o.Warmup < 0:
		return fmt.Errorf("warm-up steps must be ≥ 0, got %d", o.Warmup)
	case !(o.WeightDecay >= 0) || math.IsInf(o.WeightDecay, 0):
		return fmt.Errorf("weight decay must be finite and ≥ 0, got %g", o.WeightDecay)
	case !(o.ClipNorm >= 0) || math.IsInf(o.ClipNorm, 0):
		return fmt.Errorf("clip norm must be finite and ≥ 0 (0: none), got %g", o.ClipNorm)
	case !(o.EMADecay >= 0 && o.EMADecay < 1):
		return fmt.Errorf("EMA decay must be in [0, 1), got %g", o.EMADecay)
	case o.Precision != "" && o.Precision != "fp32" && o.Precision != "tf32" && o.Precision != "bf16":
		return fmt.Errorf("precision must be fp32, tf32 or bf16, got %q", o.Precision)
	case !(o.CheckpointSeconds >= 0) || math.IsInf(o.CheckpointSeconds, 0):
		return fmt.Errorf("checkpoint seconds must be finite and ≥ 0 (0: by steps only), got %g", o.CheckpointSeconds)
	}
	return factor.SimOptions{DMin: o.DMin, DMax: o.DMax, NMin: o.NMin, NMax: o.NMax}.Check()
}

// LogRecord is one line of the training log (JSON lines).
type LogRecord struct {
	Step       int     `json:"step"`
	Loss       float64 `json:"loss"` // mean −log q(z)/d since the last record
	LR         float64 `json:"lr"`
	GradNorm   float64 `json:"grad_norm"`
	TasksPerS  float64 `json:"tasks_per_s"`
	Seconds    float64 `json:"seconds"` // cumulative training wall time
	Skipped    int     `json:"skipped,omitempty"`
	EvalLogQ   float64 `json:"eval_logq_per_d,omitempty"`
	EvalM1     float64 `json:"eval_m1,omitempty"`
	EvalM1Prio float64 `json:"eval_m1_prior,omitempty"`
	// Programs is the number of GoMLX programs compiled so far and
	// CompileSeconds the time they took (gomlx engine only): with the
	// shapes bucketed both level off; a count that keeps rising means
	// XLA is recompiling. ChunkRetries counts program runs redone with
	// half the tasks after the device ran out of memory.
	Programs       int     `json:"programs,omitempty"`
	CompileSeconds float64 `json:"compile_seconds,omitempty"`
	ChunkRetries   int     `json:"chunk_retries,omitempty"`
	// HostUpdateSeconds is the mean wall time a step spends on the host
	// after its passes since the last record: copying the gradient sums
	// to the host, the global norm, AdamW and the EMA. It says what
	// keeping the optimiser on the host costs beside the step's Seconds
	// (deploy/gpu/bench.sh reports it).
	HostUpdateSeconds float64 `json:"host_update_seconds"`
}

// Trainer runs AFIN training into a checkpoint directory.
type Trainer struct {
	Dir      string
	Progress func(step, total int) // optional, called after every step
	Log      io.Writer             // optional human-readable notes
	// Override names the options (TrainOptions JSON names, e.g. "steps",
	// "lr") a resumed run takes from the options passed to Train; all
	// others keep their stored values. See ResolveResume.
	Override []string
	// Engine is the implementation that trains the network (the zero
	// value: native).
	Engine engine.Choice
	// MemoryBudget is the device memory (bytes) the GoMLX engine's memory
	// plan fits each program run into; 0 plans nothing.
	MemoryBudget int64
	// CompileAhead compiles every training program of the run's support
	// before the first step, in parallel (GoMLX engine).
	CompileAhead bool
	// TimeBudget, when positive, is the wall seconds this session may
	// train: the run's Steps are refitted to the step rate so that the
	// schedule ends with the budget, and the run stops there.
	TimeBudget float64
}

// Train starts (or, with resume, continues) a run. It returns when the
// run's Steps are reached or ctx is cancelled, after writing a checkpoint.
func (tr *Trainer) Train(ctx context.Context, cfg arch.Config, opts TrainOptions, resume bool) error {
	s, err := tr.start(cfg, opts, resume)
	if err != nil {
		return err
	}
	return tr.run(ctx, s)
}

// start returns the run's state: freshly initialised from opts.Seed, or
// the stored one with its options resolved by ResolveResume. A resumed run
// keeps the stored architecture whatever cfg says (a zero cfg: no note).
func (tr *Trainer) start(cfg arch.Config, opts TrainOptions, resume bool) (*state, error) {
	if !resume {
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		if err := opts.Check(); err != nil {
			return nil, fmt.Errorf("afin train: %w", err)
		}
		if opts.Workers == 0 {
			opts.Workers = runtime.GOMAXPROCS(0)
		}
		return newState(cfg, opts)
	}
	s, err := loadState(tr.Dir)
	if err != nil {
		return nil, err
	}
	if tr.Log != nil && cfg.Name != "" && (cfg.Name != s.Config.Name || cfg.Decoder != s.Config.Decoder) {
		fmt.Fprintf(tr.Log, "afin train: resuming the %s/%s network stored in %s (not %s/%s)\n",
			s.Config.Name, s.Config.Decoder, tr.Dir, cfg.Name, cfg.Decoder)
	}
	if s.Options, err = ResolveResume(s.Options, opts, tr.Override); err != nil {
		return nil, fmt.Errorf("afin train: %w", err)
	}
	if s.Options.Workers == 0 { // a run from before the option: fixed from now on
		s.Options.Workers = runtime.GOMAXPROCS(0)
	}
	if err := trimLog(filepath.Join(tr.Dir, LogFile), s.Step); err != nil {
		return nil, err
	}
	return s, nil
}

// ResolveResume is the one place a resumed run's options are decided:
// the stored options, with the fields named in override (JSON names)
// taken from given. The result is checked.
func ResolveResume(stored, given TrainOptions, override []string) (TrainOptions, error) {
	var src, dst map[string]json.RawMessage
	a, _ := json.Marshal(given)
	b, _ := json.Marshal(stored)
	if err := json.Unmarshal(a, &src); err != nil {
		return stored, err
	}
	if err := json.Unmarshal(b, &dst); err != nil {
		return stored, err
	}
	for _, k := range override {
		v, ok := src[k]
		if !ok {
			return stored, fmt.Errorf("unknown training option %q", k)
		}
		dst[k] = v
	}
	merged, _ := json.Marshal(dst)
	var out TrainOptions
	if err := json.Unmarshal(merged, &out); err != nil {
		return stored, err
	}
	return out, out.Check()
}

// newState initialises a run: weights from the seed, EMA equal to them,
// zero moments.
func newState(cfg arch.Config, opts TrainOptions) (*state, error) {
	pcg := rand.NewPCG(opts.Seed, uint64(streams.TrainTasks))
	decl := arch.MustNew(cfg)
	decl.Init(rand.New(pcg))
	params := decl.Tensors()
	s := &state{Config: cfg, Options: opts}
	for _, p := range params {
		s.Names = append(s.Names, p.Name)
		s.Shapes = append(s.Shapes, p.Shape)
		s.Params = append(s.Params, p.Data)
		s.EMA = append(s.EMA, append([]float32(nil), p.Data...))
		s.M = append(s.M, make([]float32, len(p.Data)))
		s.V = append(s.V, make([]float32, len(p.Data)))
	}
	var err error
	s.RNG, err = pcg.MarshalBinary()
	return s, err
}

// runner is one training session over a state: the step function and the
// hooks around it (progress, log, evaluation, checkpoint cadence).
type runner struct {
	tr    *Trainer
	s     *state
	pcg   *rand.PCG
	rng   *rand.Rand
	bd    *engine.Binder
	sim   factor.SimOptions
	eval  *heldout.Training
	logf  *os.File
	win   logWindow
	saved time.Time
}

// logWindow accumulates the steps between two log records.
type logWindow struct {
	lossSum, normSum, hostSum float64
	lossN, tasks, steps       int
	start                     time.Time
}

// stepResult is what one optimiser step reports to the hooks.
type stepResult struct {
	loss, gradNorm, lr float64
	skipped            bool
	tasks              int
	hostSeconds        float64 // the step's host update (LogRecord.HostUpdateSeconds)
}

func (tr *Trainer) run(ctx context.Context, s *state) error {
	r, err := tr.newRunner(s)
	if err != nil {
		return err
	}
	defer r.logf.Close()
	clock := newTimeBudget(tr.TimeBudget)
	if err := tr.compileAhead(ctx, r.bd, s.Options); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	for s.Step < s.Options.Steps && ctx.Err() == nil {
		res, err := r.step(ctx)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			break // the step was dropped whole: save the last one done
		}
		if err != nil {
			return err
		}
		if err := r.afterStep(ctx, res); err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				break
			}
			return err
		}
		if clock.fit(s, tr.Log) {
			break
		}
	}
	if err := r.save(); err != nil {
		return err
	}
	if tr.Log != nil {
		fmt.Fprintf(tr.Log, "afin train: step %d of %d, %.0f s of training, checkpoint in %s\n", s.Step, s.Options.Steps, s.Seconds, tr.Dir)
	}
	return ctx.Err()
}

func (tr *Trainer) newRunner(s *state) (*runner, error) {
	r := &runner{tr: tr, s: s, pcg: &rand.PCG{}, saved: time.Now()}
	if err := r.pcg.UnmarshalBinary(s.RNG); err != nil {
		return nil, fmt.Errorf("afin: checkpoint RNG state: %w", err)
	}
	r.rng = rand.New(r.pcg)
	o := s.Options
	r.sim = factor.SimOptions{DMin: o.DMin, DMax: o.DMax, NMin: o.NMin, NMax: o.NMax}
	var err error
	if r.bd, err = engine.NewBinder(s.Config, o.Workers, tr.Engine); err != nil {
		return nil, err
	}
	if err := tr.configureEngine(r.bd, o); err != nil {
		return nil, err
	}
	if r.eval, err = heldout.NewTraining(o.Seed); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(tr.Dir, 0o755); err != nil {
		return nil, err
	}
	if r.logf, err = os.OpenFile(filepath.Join(tr.Dir, LogFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		return nil, err
	}
	r.win.start = time.Now()
	return r, nil
}

// step is one optimiser step (paper Sec. 4.3; App. D.1): accumulate the
// micro-batch gradients, skip the update when the loss or gradient is not
// finite (as the reference skips failed factorisations), else clip the
// global norm and apply AdamW; then advance the EMA. Cancelled (ctx is
// looked at through the batch building and the forward and backward
// passes), it changes nothing, the task stream's RNG included, so the
// checkpoint saved next resumes exactly where an uninterrupted run goes.
func (r *runner) step(ctx context.Context) (stepResult, error) {
	s, o := r.s, r.s.Options
	t0 := time.Now()
	rngAt, err := r.pcg.MarshalBinary()
	if err != nil {
		return stepResult{}, err
	}
	loss, grads, ntasks, gradSec, err := r.tr.accumulate(ctx, r.bd, s.Params, r.rng, r.sim, o, flowStrength(s.Step))
	if err != nil {
		if uerr := r.pcg.UnmarshalBinary(rngAt); uerr != nil {
			return stepResult{}, uerr
		}
		return stepResult{}, err
	}
	tu := time.Now()
	res := stepResult{loss: loss, gradNorm: globalNorm(grads), lr: o.LearningRate(s.Step), tasks: ntasks}
	if !finite(res.loss) || !finite(res.gradNorm) {
		res.skipped = true
		s.Skipped++
	} else {
		scale := 1.0
		if o.ClipNorm > 0 && res.gradNorm > o.ClipNorm {
			scale = o.ClipNorm / (res.gradNorm + 1e-6)
		}
		adamW(s, grads, scale, res.lr, o.WeightDecay, s.Step+1)
	}
	s.Step++
	updateEMA(s, o)
	res.hostSeconds = gradSec + time.Since(tu).Seconds()
	s.Seconds += time.Since(t0).Seconds()
	return res, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// afterStep runs the hooks: progress, the log record (with a held-out
// evaluation on its cadence) and the checkpoint cadence.
func (r *runner) afterStep(ctx context.Context, res stepResult) error {
	s, o := r.s, r.s.Options
	if !res.skipped {
		r.win.lossSum += res.loss
		r.win.normSum += res.gradNorm
		r.win.lossN++
	}
	r.win.tasks += res.tasks
	r.win.hostSum += res.hostSeconds
	r.win.steps++
	if r.tr.Progress != nil {
		r.tr.Progress(s.Step, o.Steps)
	}
	evalNow := o.EvalEvery > 0 && s.Step%o.EvalEvery == 0
	if (o.LogEvery > 0 && s.Step%o.LogEvery == 0) || evalNow || s.Step == o.Steps {
		if err := r.writeLog(ctx, res.lr, evalNow); err != nil {
			return err
		}
	}
	if (o.CheckpointEvery > 0 && s.Step%o.CheckpointEvery == 0) ||
		(o.CheckpointSeconds > 0 && time.Since(r.saved).Seconds() >= o.CheckpointSeconds) {
		if err := r.save(); err != nil {
			return err
		}
		r.saved = time.Now()
	}
	return nil
}

// writeLog appends the log record; a cancelled held-out evaluation drops
// the record (the checkpoint saved next is at this step all the same).
func (r *runner) writeLog(ctx context.Context, lr float64, eval bool) error {
	s, w := r.s, &r.win
	rec := LogRecord{Step: s.Step, LR: lr, Seconds: s.Seconds, Skipped: s.Skipped,
		TasksPerS: float64(w.tasks) / time.Since(w.start).Seconds()}
	st := r.bd.Stats()
	rec.Programs, rec.CompileSeconds, rec.ChunkRetries = st.Programs, st.CompileSeconds, st.ChunkRetries
	if w.steps > 0 {
		rec.HostUpdateSeconds = w.hostSum / float64(w.steps)
	}
	if w.lossN > 0 {
		rec.Loss, rec.GradNorm = w.lossSum/float64(w.lossN), w.normSum/float64(w.lossN)
	}
	if eval {
		ev, err := r.eval.Run(ctx, r.bd, s.Config.Decoder, s.EMA)
		if err != nil {
			return err
		}
		rec.EvalLogQ, rec.EvalM1, rec.EvalM1Prio = ev.LogQ, ev.M1, ev.M1Prior
	}
	line, _ := json.Marshal(rec)
	if _, err := r.logf.Write(append(line, '\n')); err != nil {
		return err
	}
	*w = logWindow{start: time.Now()}
	return nil
}

// save writes the checkpoint with the data stream's current RNG state.
func (r *runner) save() error {
	b, err := r.pcg.MarshalBinary()
	if err != nil {
		return err
	}
	r.s.RNG = b
	return saveState(r.tr.Dir, r.s, "afin train")
}

// accumulate averages loss and gradients over the step's micro-batches,
// each with its own (d, N) from the simulator's mixture, summed where the
// engine keeps them (engine.Accumulator; gradSec: the seconds of copying
// the sums to the host). The next micro-batch is simulated while the
// engine runs this one; the stream draws them in the same order either
// way.
func (tr *Trainer) accumulate(ctx context.Context, bd *engine.Binder, params [][]float32, rng *rand.Rand, sim factor.SimOptions, opts TrainOptions, strength float32) (loss float64, sum [][]float32, n int, gradSec float64, err error) {
	k := max(opts.MicroBatch, 1)
	net, err := bd.Bind(params)
	if err != nil {
		return 0, nil, 0, 0, err
	}
	defer net.Release()
	acc := net.Accumulate()
	defer acc.Release()
	next := make(chan simulated, 1)
	next <- simulate(ctx, bd, rng, sim, opts.BatchTasks)
	for i := range k {
		cur := <-next
		if cur.err != nil {
			return 0, nil, 0, 0, cur.err
		}
		if i+1 < k {
			go func() { next <- simulate(ctx, bd, rng, sim, opts.BatchTasks) }()
		}
		l, err := acc.Add(ctx, cur.b, strength, 1/float64(k))
		if err != nil {
			if i+1 < k {
				<-next // the stream's RNG is the caller's again only once this is done
			}
			return 0, nil, 0, 0, err
		}
		loss += l
		n += cur.b.B
	}
	t0 := time.Now()
	sum = acc.Grads()
	return loss, sum, n, time.Since(t0).Seconds(), nil
}

// simulated is one micro-batch drawn from the task stream, as the
// network's input.
type simulated struct {
	b   *arch.Batch
	err error
}

func simulate(ctx context.Context, bd *engine.Binder, rng *rand.Rand, sim factor.SimOptions, tasks int) simulated {
	ts, err := factor.SimulateBatch(rng, sim, tasks)
	if err != nil {
		return simulated{err: err}
	}
	z := make([][]float64, len(ts))
	for i, t := range ts {
		z[i] = t.TrueZ
	}
	b, err := arch.NewBatch(ctx, ts, bd.PadN(ts[0].N()), z)
	return simulated{b: b, err: err}
}

// flowStrength ramps the flow in over its first 2500 steps (the authors'
// trainer), so training starts from the identity flow N(0, I).
func flowStrength(step int) float32 {
	return float32(math.Min(1, float64(step+1)/2500))
}

func globalNorm(g [][]float32) float64 {
	var s float64
	for _, v := range g {
		for _, x := range v {
			s += float64(x) * float64(x)
		}
	}
	return math.Sqrt(s)
}

// adamW applies one decoupled-weight-decay Adam update (PyTorch's AdamW
// with betas 0.9, 0.999 and eps 1e-8) to s.Params; grads are scaled by
// scale first (gradient clipping).
func adamW(s *state, grads [][]float32, scale, lr, wd float64, t int) {
	optim.Each(len(grads), func(i int) {
		optim.Step(optim.Settings{LR: lr, WeightDecay: wd}, t, s.Params[i], grads[i], s.M[i], s.V[i], scale)
	})
}

func updateEMA(s *state, o TrainOptions) {
	mirror := s.Step <= o.EMAStart
	optim.Each(len(s.Params), func(i int) {
		p, e := s.Params[i], s.EMA[i]
		if mirror {
			copy(e, p)
			return
		}
		for k := range p {
			e[k] = float32(o.EMADecay*float64(e[k]) + (1-o.EMADecay)*float64(p[k]))
		}
	})
}

// trimLog drops log records past the checkpoint's step, so a resumed run
// does not log the same steps twice.
func trimLog(path string, step int) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var keep bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r LogRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Step > step {
			continue
		}
		keep.Write(sc.Bytes())
		keep.WriteByte('\n')
	}
	return atomicfile.Write(path, func(w io.Writer) error { _, err := w.Write(keep.Bytes()); return err })
}
