package afin

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"

	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/afin/cpu"
	"github.com/afin-bench/afin/afin/engine"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/gemm"
	"github.com/afin-bench/afin/posterior"
)

// DefaultCheckpointName is the shipped checkpoint's directory under
// checkpoints/.
const DefaultCheckpointName = "small-full"

// DefaultCheckpointDir finds the shipped checkpoint: checkpoints/small-full
// in the working directory or one of its parents (so a checkout's own,
// perhaps newer, weights win inside the repository), else beside the
// executable, else the copy embedded in the binary, extracted once into
// the cache. So it is found wherever the binary runs; the one error is a
// cache that cannot be written. cacheDir is the cache root ("": the user
// cache; cmd/afin passes $AFIN_CACHE_DIR, and consults $AFIN_CHECKPOINT first).
func DefaultCheckpointDir(cacheDir string) (string, error) {
	rel := filepath.Join("checkpoints", DefaultCheckpointName)
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, rel, ConfigFile)); err == nil {
				return filepath.Join(dir, rel), nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		for _, dir := range []string{filepath.Dir(exe), filepath.Dir(filepath.Dir(exe))} {
			if _, err := os.Stat(filepath.Join(dir, rel, ConfigFile)); err == nil {
				return filepath.Join(dir, rel), nil
			}
		}
	}
	dir, err := embeddedCheckpointDir(cacheDir)
	if err != nil {
		return "", fmt.Errorf("afin: no checkpoint: %s is not in the working directory, its parents or beside the executable, and the embedded copy could not be extracted (%v); set AFIN_CHECKPOINT or pass --checkpoint DIR", rel, err)
	}
	return dir, nil
}

// Model is a trained network ready for inference (the checkpoint's
// inference weights, the EMA for trained ones). It is safe for concurrent
// use.
type Model struct {
	Dir     string
	Cfg     Config
	Step    int
	Hash    string             // checkpoint.Hash of the inference files: the checkpoint's identity in provenance
	Support checkpoint.Support // the tasks it was trained on; see Outside
	Source  string             // how the checkpoint was made
	// OOD are the out-of-distribution statistics of these weights (nil
	// when the checkpoint has none; OODNote then says why).
	OOD     *checkpoint.OOD
	OODNote string
	// Engine is the implementation that runs the network.
	Engine EngineChoice
	mu     sync.Mutex // serialises GoMLX executions
	net    engine.Bound
	wdata  [][]float32
	// gom is the GoMLX graph bound to wdata, built on first use: the native
	// engine never needs it, and its weight tensors are a second copy of
	// the network (about 18 MB for the paper config).
	gomOnce sync.Once
	gom     engine.Bound
	gomBd   *engine.Binder
	gomErr  error
	// summaryNet is the native network the OOD summaries come from,
	// whichever engine runs the decoder (built on first use).
	sumOnce sync.Once
	sumNet  *cpu.Net
	sumErr  error
}

// Load reads a portable checkpoint directory (config.json and the
// safetensors weights; the training state is not read) to run on the
// chosen implementation (the zero EngineChoice: native). An old-format
// checkpoint is refused with the command that converts it.
func Load(dir string, c EngineChoice) (*Model, error) {
	man, net, err := checkpoint.ReadInference(dir)
	if err != nil {
		return nil, err
	}
	m, err := newModel(dir, man.Config, man.Step, net.Data(), c)
	if err != nil {
		return nil, err
	}
	if m.Hash, err = checkpoint.Hash(dir); err != nil {
		return nil, fmt.Errorf("afin: hashing %s: %w", dir, err)
	}
	m.Support, m.Source = man.Support, man.Source
	switch m.OOD, err = checkpoint.ReadOOD(dir, man.WeightsSHA256); {
	case errors.Is(err, checkpoint.ErrOODStale):
		m.OODNote = err.Error()
	case err != nil:
		return nil, err
	case m.OOD == nil:
		m.OODNote = "no " + checkpoint.OODFile + " (compute it with `afin checkpoint support --write DIR`)"
	}
	return m, nil
}

func newModel(dir string, cfg Config, step int, weights [][]float32, c EngineChoice) (*Model, error) {
	m := &Model{Dir: dir, Cfg: cfg, Step: step, Engine: c, wdata: weights}
	bd, err := engine.NewBinder(cfg, 1, c)
	if err != nil {
		return nil, err
	}
	if bd.Native() {
		if m.net, err = bd.Bind(weights); err != nil {
			return nil, err
		}
		m.sumNet, _ = engine.NativeNet(m.net)
		return m, nil
	}
	m.gomOnce.Do(func() { m.gomBd = bd; m.gom, m.gomErr = bd.Bind(weights) })
	if m.net, err = m.gomlx(); err != nil {
		return nil, err
	}
	return m, nil
}

// gomlx returns the GoMLX graph bound to the model's weights, building it
// on the first call (on the choice's backend, whichever engine it chose).
func (m *Model) gomlx() (engine.Bound, error) {
	m.gomOnce.Do(func() {
		bd, err := engine.NewBinder(m.Cfg, 1, EngineChoice{Engine: "gomlx", Backend: m.Engine.Backend})
		if err != nil {
			m.gomErr = fmt.Errorf("afin: GoMLX backend: %w", err)
			return
		}
		m.gomBd = bd
		m.gom, m.gomErr = bd.Bind(m.wdata)
	})
	return m.gom, m.gomErr
}

// Compiled reports whether the network runs as GoMLX programs, built on
// the first call at each input shape: a caller that times passes warms a
// shape up first. The native engine compiles nothing.
func (m *Model) Compiled() bool {
	n, err := m.Engine.Native()
	return err == nil && !n
}

// ErrTooLarge marks a task refused because its forward pass would need
// more memory than the process has (bad input).
var ErrTooLarge = cpu.ErrTooLarge

// checkMemory refuses, before anything is allocated, a pass over tasks
// tasks of dimension d with up to n sites whose predicted peak memory
// exceeds what the process has left (cpu.CheckBatchMemory). Every entry
// point that runs the network comes through here. The prediction is the
// native engine's; GoMLX's (on a GPU, partly the device's) differs, but a
// task the native engine cannot hold is refused on either.
func (m *Model) checkMemory(tasks, d, n int) error {
	return cpu.CheckBatchMemory(m.Cfg, tasks, d, n, cpu.AvailableBytes())
}

// LongForwardSeconds is the predicted forward time (CPU seconds) above
// which a pass is called long: the callers say so before it starts.
const LongForwardSeconds = 60

// Forecast is what the cost and memory models say of one forward pass
// before it runs (the native engine's models; cpu.FLOPs,
// cpu.PredictPeakBytes, cpu.PredictSeconds).
type Forecast struct {
	D, N      int
	FLOPs     int64 // the pass's products
	PeakBytes int64 // predicted peak resident memory of the process
	// Seconds is the predicted CPU time on this CPU's matrix kernel; 0
	// on a GoMLX engine, whose speed (a GPU's, perhaps) is not modelled.
	Seconds float64
	AtLeast bool   // Seconds is a lower bound (the kernel's rate is not measured)
	Kernel  string // the matrix kernel the prediction is for
	// TooLarge: the pass will be refused for memory (checkMemory), in one
	// line of its own, so warnings about a pass that never runs are noise.
	TooLarge bool
}

// Forecast predicts the forward pass on a task of dimension d with n
// sites, without running anything.
func (m *Model) Forecast(d, n int) Forecast {
	f := Forecast{D: d, N: n, FLOPs: cpu.FLOPs(m.Cfg, d, n), PeakBytes: cpu.PredictPeakBytes(m.Cfg, d, n),
		TooLarge: m.checkMemory(1, d, n) != nil}
	if native, err := m.Engine.Native(); err == nil && native {
		f.Kernel = gemm.Kernel()
		f.Seconds, f.AtLeast = cpu.PredictSeconds(m.Cfg, d, n, f.Kernel)
	}
	return f
}

// Long reports a pass predicted to take more than LongForwardSeconds.
func (f Forecast) Long() bool { return f.Seconds > LongForwardSeconds }

// String says the prediction in words for a warning, with where the time
// goes when the factor-axis attention dominates.
func (f Forecast) String() string {
	about := "about"
	if f.AtLeast {
		about = "at least"
	}
	s := fmt.Sprintf("the network's forward pass on d=%d, N=%d is predicted to take %s %s of CPU (%.3g FLOP on the %s kernel; peak memory about %s)",
		f.D, f.N, about, humanSeconds(f.Seconds), float64(f.FLOPs), f.Kernel, humanBytes(f.PeakBytes))
	if f.N > 1000 {
		s += "; its factor-axis attention grows as N², so N/10 sites would take about 1/100 of it"
	}
	return s
}

func humanSeconds(s float64) string {
	switch {
	case s >= 2*3600:
		return fmt.Sprintf("%.1f h", s/3600)
	case s >= 120:
		return fmt.Sprintf("%.0f min", s/60)
	}
	return fmt.Sprintf("%.0f s", s)
}

func humanBytes(b int64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// WithForwardProgress returns a context under which the native engine's
// forward passes report their progress to p (cpu.WithProgress: done of
// total FLOPs of each task's pass). The GoMLX engine reports nothing.
func WithForwardProgress(ctx context.Context, p func(done, total int64)) context.Context {
	return cpu.WithProgress(ctx, p)
}

// run calls f on the model's network, serialising GoMLX executions (the
// native path is safe for concurrent use).
func (m *Model) run(f func(engine.Bound) error) error {
	if m.Compiled() {
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	return f(m.net)
}

// Gaussian is the network's posterior approximation N(Mean, Precision⁻¹)
// for one task, in float64: posterior.Gaussian with a precision factor.
type Gaussian = posterior.Gaussian

// Forward runs the network on tasks sharing d (one pass) and returns each
// task's Gaussian.
// GoMLXPrograms is the number of GoMLX programs this model's engine
// has compiled and the seconds they took (0, 0 on the native engine).
func (m *Model) GoMLXPrograms() (int, float64) {
	if m.gomBd == nil {
		return 0, 0
	}
	st := m.gomBd.Stats()
	return st.Programs, st.CompileSeconds
}

func (m *Model) Forward(tasks []*factor.Task) ([]*Gaussian, error) {
	return m.ForwardContext(context.Background(), tasks)
}

// ForwardContext is Forward that stops, with ctx's error, soon after ctx
// is cancelled (the native path checks between layers).
func (m *Model) ForwardContext(ctx context.Context, tasks []*factor.Task) ([]*Gaussian, error) {
	if len(tasks) == 0 {
		return nil, nil
	}
	nMax := 0
	for k, t := range tasks {
		if t == nil || t.D < 1 || t.Prior == nil {
			return nil, fmt.Errorf("afin: task %d is empty", k)
		}
		nMax = max(nMax, t.N())
	}
	if err := m.checkMemory(len(tasks), tasks[0].D, nMax); err != nil {
		return nil, err
	}
	b, err := NewBatch(ctx, tasks, 0, nil)
	if err != nil {
		return nil, err
	}
	var mu, lam []float32
	err = m.run(func(n engine.Bound) (err error) {
		mu, lam, err = n.Gaussian(ctx, b)
		return err
	})
	if err != nil {
		return nil, err
	}
	d := b.D
	out := make([]*Gaussian, len(tasks))
	for k := range tasks {
		mean, prec := make([]float64, d), make([]float64, d*d)
		for i := range d {
			mean[i] = float64(mu[k*d+i])
			for j := range d {
				// Symmetrise in float64, as the decoder's last step.
				prec[i*d+j] = 0.5 * (float64(lam[k*d*d+i*d+j]) + float64(lam[k*d*d+j*d+i]))
			}
		}
		g, err := posterior.NewGaussianPrecision(mean, prec)
		if err != nil {
			return nil, fmt.Errorf("afin: task %d: %w", k, err)
		}
		out[k] = g
	}
	return out, nil
}

// Posterior returns the approximate posterior mean and covariance of a
// task (covariance row-major d×d).
func (m *Model) Posterior(t *factor.Task) (mean, cov []float64, err error) {
	gs, err := m.Forward([]*factor.Task{t})
	if err != nil {
		return nil, nil, err
	}
	return gs[0].Mean, gs[0].Cov(), nil
}

// flowChunk bounds the draws pushed through the GoMLX flow graph at once.
const flowChunk = 512

// flowChunkOf is how many of s draws go through the network per call. The
// native engine takes them all: each call embeds the task again (at
// large N nearly all of a pass), and it chunks the decoder itself.
func (m *Model) flowChunkOf(s int) int {
	if m.Compiled() {
		return flowChunk
	}
	return max(s, 1)
}

// FlowDecoder says whether the checkpoint's decoder is the flow (answers
// by SampleFlow and LogQFlow) rather than the Gaussian (Forward).
func (m *Model) FlowDecoder() bool { return m.Cfg.Decoder == "flow" }

// SampleFlow draws s points from a flow checkpoint's posterior for one task
// (row-major s×d, float64) with their log q.
func (m *Model) SampleFlow(t *factor.Task, s int, rng *rand.Rand) (z, logq []float64, err error) {
	return m.SampleFlowContext(context.Background(), t, s, rng)
}

// SampleFlowContext is SampleFlow that stops soon after ctx is cancelled.
func (m *Model) SampleFlowContext(ctx context.Context, t *factor.Task, s int, rng *rand.Rand) (z, logq []float64, err error) {
	if m.Cfg.Decoder != "flow" {
		return nil, nil, fmt.Errorf("afin: checkpoint %s has a %s decoder, not a flow", m.Dir, m.Cfg.Decoder)
	}
	if t == nil || t.D < 1 || t.Prior == nil {
		return nil, nil, fmt.Errorf("afin: task is empty")
	}
	if err := m.checkMemory(1, t.D, t.N()); err != nil {
		return nil, nil, err
	}
	b, err := NewBatch(ctx, []*factor.Task{t}, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	d := t.D
	z = make([]float64, 0, s*d)
	logq = make([]float64, 0, s)
	chunk := m.flowChunkOf(s)
	for done := 0; done < s; done += chunk {
		c := min(chunk, s-done)
		eps := make([]float32, c*d)
		for i := range eps {
			eps[i] = float32(rng.NormFloat64())
		}
		var zc, lq []float32
		err := m.run(func(n engine.Bound) (err error) {
			zc, lq, err = n.FlowSample(ctx, b, eps, c)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		for _, v := range zc {
			z = append(z, float64(v))
		}
		for _, v := range lq {
			logq = append(logq, float64(v))
		}
	}
	return z, logq, nil
}

// LogQFlow evaluates a flow checkpoint's log q at points z (row-major s×d).
func (m *Model) LogQFlow(t *factor.Task, z []float64) ([]float64, error) {
	return m.LogQFlowContext(context.Background(), t, z)
}

// LogQFlowContext is LogQFlow that stops soon after ctx is cancelled.
func (m *Model) LogQFlowContext(ctx context.Context, t *factor.Task, z []float64) ([]float64, error) {
	if m.Cfg.Decoder != "flow" {
		return nil, fmt.Errorf("afin: checkpoint %s has a %s decoder, not a flow", m.Dir, m.Cfg.Decoder)
	}
	d := t.D
	if d < 1 || len(z)%d != 0 {
		return nil, fmt.Errorf("afin: %d coordinates are not a multiple of d=%d", len(z), d)
	}
	if err := m.checkMemory(1, t.D, t.N()); err != nil {
		return nil, err
	}
	b, err := NewBatch(ctx, []*factor.Task{t}, 0, nil)
	if err != nil {
		return nil, err
	}
	s := len(z) / d
	out := make([]float64, 0, s)
	chunk := m.flowChunkOf(s)
	for done := 0; done < s; done += chunk {
		c := min(chunk, s-done)
		zc := make([]float32, c*d)
		for i := range zc {
			zc[i] = float32(z[done*d+i])
		}
		var lq []float32
		err := m.run(func(n engine.Bound) (err error) {
			lq, err = n.FlowLogQ(ctx, b, zc, c)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, v := range lq {
			out = append(out, float64(v))
		}
	}
	return out, nil
}
