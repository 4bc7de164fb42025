package nuts

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/errsum"
	"github.com/afin-bench/afin/internal/moments"
	"github.com/afin-bench/afin/internal/progress"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
)

// Config controls a NUTS run. Zero values select the defaults noted.
type Config struct {
	Warmup int // warm-up (adaptation) iterations per chain; 0 means no adaptation
	Draws  int // post-warm-up draws per chain (> 0)
	Chains int // 0 means 4

	Seed uint64 // chain c uses the PCG stream (Seed, c+1)

	MaxDepth     int     // 0 means 10
	TargetAccept float64 // 0 means 0.8
	MaxDeltaH    float64 // divergence threshold on the energy error; 0 means 1000
	StepSize     float64 // initial step size before the search heuristic; 0 means 1
	Dense        bool    // adapt a dense mass matrix instead of a diagonal one

	// Init is the starting point of every chain (required, length d).
	// With Jitter > 0 each chain starts at Init + U(−Jitter, Jitter)
	// per coordinate instead.
	Init   []float64
	Jitter float64
	// Inits, when set, gives each chain its own start (one per chain,
	// each length d), overriding Init and Jitter: auto starts chains at
	// draws of an approximate posterior.
	Inits [][]float64
	// InvMetric, when set, is the initial inverse metric (length d, or
	// d×d with Dense), e.g. an approximate posterior's covariance; the
	// warm-up then adapts the step size only and keeps this metric.
	InvMetric []float64

	// Thin keeps every Thin-th post-warm-up draw in Result.Chains (≤ 1:
	// all). Discard keeps none, for callers that stream through OnDraw.
	Thin    int
	Discard bool
	// OnDraw, when set, sees every post-warm-up draw (before thinning) on
	// its chain's goroutine; z is reused afterwards, so copy what you keep.
	OnDraw func(chain int, z []float64)

	Progress io.Writer // a progress bar goes here when it is a terminal
}

func (c *Config) withDefaults() Config {
	o := *c
	if o.Chains == 0 {
		o.Chains = 4
	}
	if o.MaxDepth == 0 {
		o.MaxDepth = 10
	}
	if o.TargetAccept == 0 {
		o.TargetAccept = 0.8
	}
	if o.MaxDeltaH == 0 {
		o.MaxDeltaH = 1000
	}
	if o.StepSize == 0 {
		o.StepSize = 1
	}
	if o.Thin < 1 {
		o.Thin = 1
	}
	return o
}

// ChainStats summarises one chain's post-warm-up transitions.
type ChainStats struct {
	Divergences   int       // post-warm-up divergent transitions
	WarmupDiv     int       // divergences during warm-up (expected early on)
	AcceptRate    float64   // mean acceptance statistic
	StepSize      float64   // adapted step size
	DepthHist     []int     // DepthHist[k]: transitions that reached depth k
	MeanDepth     float64   // mean tree depth
	Leapfrogs     int64     // post-warm-up leapfrog steps
	GradEvals     int64     // all gradient evaluations, warm-up included
	InvMetric     []float64 // adapted inverse mass matrix (diagonal or d×d)
	WarmupSeconds float64   // wall-clock time of the warm-up
}

// Result is a finished run.
type Result struct {
	D      int
	Chains [][]float64 // per chain: kept draws, row-major (nil with Discard)
	Stats  []ChainStats

	// Aggregates over chains.
	Divergences int
	AcceptRate  float64 // mean over chains
	StepSize    float64 // mean over chains
	MeanDepth   float64
	DepthHist   []int
	GradEvals   int64
	Seconds     float64 // warm-up plus sampling wall-clock time

	// Convergence diagnostics of the kept draws (zero with Discard).
	Convergence Convergence
}

// Draws pools the kept draws of all chains.
func (r *Result) Draws() *posterior.Draws {
	var z []float64
	for _, c := range r.Chains {
		z = append(z, c...)
	}
	return &posterior.Draws{D: r.D, Z: z}
}

// Sample runs cfg.Chains chains of NUTS on target in dimension d, each on
// its own goroutine.
func Sample(ctx context.Context, target Target, d int, cfg Config) (*Result, error) {
	o := cfg.withDefaults()
	switch {
	case d < 1:
		return nil, fmt.Errorf("nuts: dimension must be ≥ 1, got %d", d)
	case len(o.Init) != d:
		return nil, fmt.Errorf("nuts: init has length %d, want %d", len(o.Init), d)
	case o.Draws < 1:
		return nil, fmt.Errorf("nuts: draws must be ≥ 1, got %d", o.Draws)
	case o.Warmup < 0:
		return nil, fmt.Errorf("nuts: warmup must be ≥ 0, got %d", o.Warmup)
	case o.Chains < 1:
		return nil, fmt.Errorf("nuts: chains must be ≥ 1, got %d", o.Chains)
	case o.MaxDepth < 1 || o.MaxDepth > 30:
		return nil, fmt.Errorf("nuts: max depth must be in [1, 30], got %d", o.MaxDepth)
	case !(o.TargetAccept > 0 && o.TargetAccept < 1):
		return nil, fmt.Errorf("nuts: target acceptance must be in (0, 1), got %g", o.TargetAccept)
	case !(o.StepSize > 0) || math.IsInf(o.StepSize, 0):
		return nil, fmt.Errorf("nuts: initial step size must be positive and finite, got %g", o.StepSize)
	case !(o.MaxDeltaH > 0):
		return nil, fmt.Errorf("nuts: divergence threshold must be positive, got %g", o.MaxDeltaH)
	case !(o.Jitter >= 0) || math.IsInf(o.Jitter, 0):
		return nil, fmt.Errorf("nuts: init jitter must be finite and >= 0, got %g", o.Jitter)
	case o.checkStarts(d) != nil:
		return nil, o.checkStarts(d)
	}
	if t, ok := target.(*factor.Task); ok && t.D == d {
		// The packed copy evaluates the same density 3–7× faster at
		// N = 64–256 (its sites laid out for the f64vec kernels); the
		// chains share it, each call taking scratch of its own.
		target = t.Packed()
	}
	bar := progress.New(o.Progress, "nuts", o.Chains*(o.Warmup+o.Draws))

	start := time.Now()
	res := &Result{D: d, Chains: make([][]float64, o.Chains), Stats: make([]ChainStats, o.Chains)}
	errs := make([]error, o.Chains)
	var wg sync.WaitGroup
	// At most one running chain per OS thread: more would only be
	// time-sliced by preemption, which costs CPU and cache locality.
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for ci := 0; ci < o.Chains; ci++ {
		wg.Add(1)
		go func(ci int) {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			draws, st, err := runChain(ctx, target, d, ci, &o, bar)
			res.Chains[ci], res.Stats[ci], errs[ci] = draws, st, err
		}(ci)
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	bar.Finish()
	// Chains usually fail alike: one line, not one per chain.
	if err := errsum.First(errs, "chains"); err != nil {
		return nil, err
	}
	res.DepthHist = make([]int, o.MaxDepth+1)
	var nTrans int
	for _, st := range res.Stats {
		res.Divergences += st.Divergences
		res.AcceptRate += st.AcceptRate / float64(o.Chains)
		res.StepSize += st.StepSize / float64(o.Chains)
		res.GradEvals += st.GradEvals
		for k, n := range st.DepthHist {
			res.DepthHist[k] += n
			res.MeanDepth += float64(k * n)
			nTrans += n
		}
	}
	if nTrans > 0 {
		res.MeanDepth /= float64(nTrans)
	}
	if !o.Discard {
		res.Convergence = Diagnose(res.Chains, d)
	}
	return res, nil
}

// chainRun is one chain's run: its state, statistics and the bookkeeping
// of progress ticks and cancellation shared by warm-up and sampling.
type chainRun struct {
	ctx     context.Context
	ci      int
	o       *Config
	c       *chain
	m       *metric
	st      ChainStats
	bar     *progress.Bar
	pending int // iterations not yet shown on the bar
}

// runChain runs chain ci: start, warm-up (step size and metric
// adaptation), sampling. It returns the kept draws, row-major.
func runChain(ctx context.Context, target Target, d, ci int, o *Config, bar *progress.Bar) ([]float64, ChainStats, error) {
	r := &chainRun{ctx: ctx, ci: ci, o: o, bar: bar, st: ChainStats{DepthHist: make([]int, o.MaxDepth+1)}}
	if err := ctx.Err(); err != nil {
		return nil, r.st, fmt.Errorf("nuts: chain %d: %w", ci, err)
	}
	rng := streams.New(o.Seed, streams.NUTSChain.At(ci))
	r.m = newMetric(d, o.Dense)
	r.c = newChain(ctx, d, target, rng, r.m, o.MaxDepth, o.MaxDeltaH)
	init := append([]float64(nil), o.Init...)
	if err := r.presetMetric(); err != nil {
		return nil, r.st, err
	}
	if o.Inits != nil {
		if len(o.Inits[ci]) != d {
			return nil, r.st, fmt.Errorf("nuts: chain %d: init has length %d, want %d", ci, len(o.Inits[ci]), d)
		}
		init = append(init[:0], o.Inits[ci]...)
	} else if o.Jitter > 0 {
		for i := range init {
			init[i] += o.Jitter * (2*rng.Float64() - 1)
		}
	}
	r.c.setPosition(init)
	if math.IsNaN(r.c.z.logp) || math.IsInf(r.c.z.logp, 0) {
		return nil, r.st, fmt.Errorf("nuts: chain %d: log density at the initial point is %v", ci, r.c.z.logp)
	}
	r.c.eps = o.StepSize
	if err := r.c.initStepSize(); err != nil {
		return nil, r.st, fmt.Errorf("nuts: chain %d: %w", ci, err)
	}
	if err := r.warmup(); err != nil {
		return nil, r.st, err
	}
	draws, err := r.sample()
	return draws, r.st, err
}

// checkStarts validates the optional per-chain starts and preset metric.
func (o *Config) checkStarts(d int) error {
	switch want := len(newMetric(d, o.Dense).inv); {
	case o.Inits != nil && len(o.Inits) != o.Chains:
		return fmt.Errorf("nuts: %d inits for %d chains", len(o.Inits), o.Chains)
	case o.InvMetric != nil && len(o.InvMetric) != want:
		return fmt.Errorf("nuts: inverse metric has length %d, want %d (d, or d² with a dense metric)", len(o.InvMetric), want)
	}
	return nil
}

// presetMetric installs Config.InvMetric, if any, before warm-up (its
// length was checked by Sample).
func (r *chainRun) presetMetric() error {
	switch {
	case r.o.InvMetric == nil:
		return nil
	case r.o.Dense:
		if err := r.m.setDense(r.o.InvMetric); err != nil {
			return fmt.Errorf("nuts: chain %d: preset metric: %w", r.ci, err)
		}
		return nil
	}
	copy(r.m.inv, r.o.InvMetric)
	return nil
}

// tick counts one iteration, advancing the bar and checking for
// cancellation every 64 (cheap enough to never show in a profile).
func (r *chainRun) tick() error {
	const every = 64
	r.pending++
	if r.pending == every {
		r.bar.Add(every)
		r.pending = 0
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("nuts: chain %d: %w", r.ci, err)
		}
	}
	return nil
}

// warmup adapts the step size by dual averaging over all warm-up
// iterations and the metric over Stan's doubling windows.
func (r *chainRun) warmup() error {
	c, o, m := r.c, r.o, r.m
	t0 := time.Now()
	da := newDualAveraging(o.TargetAccept)
	da.restart(c.eps)
	win := newWindows(o.Warmup)
	if o.InvMetric != nil {
		win.adaptMetric = false // a preset metric is kept
	}
	est := moments.NewWelford(len(c.z.q), o.Dense)
	buf := make([]float64, len(m.inv))
	for it := 0; it < o.Warmup; it++ {
		acc := c.transition()
		if c.err != nil {
			return fmt.Errorf("nuts: chain %d: %w", r.ci, c.err)
		}
		if c.divergent {
			r.st.WarmupDiv++
		}
		c.eps = da.learn(acc)
		if win.inWindow() {
			est.Add(c.z.q)
		}
		if win.atWindowEnd() {
			win.advance()
			regularised(est, buf)
			if o.Dense {
				if err := m.setDense(buf); err != nil {
					return fmt.Errorf("nuts: chain %d: warm-up iteration %d: %w", r.ci, it, err)
				}
			} else {
				copy(m.inv, buf)
			}
			est.Reset()
			if err := c.initStepSize(); err != nil {
				return fmt.Errorf("nuts: chain %d: warm-up iteration %d: %w", r.ci, it, err)
			}
			da.restart(c.eps)
		}
		win.counter++
		if err := r.tick(); err != nil {
			return err
		}
	}
	if o.Warmup > 0 {
		c.eps = da.final()
	}
	r.st.WarmupSeconds = time.Since(t0).Seconds()
	r.st.StepSize = c.eps
	r.st.InvMetric = append([]float64(nil), m.inv...)
	return nil
}

// sample runs the sampling iterations at the adapted step size and
// metric, keeping every Thin-th draw unless Discard is set.
func (r *chainRun) sample() ([]float64, error) {
	c, o, st := r.c, r.o, &r.st
	d := len(c.z.q)
	var draws []float64
	if !o.Discard {
		draws = make([]float64, 0, d*((o.Draws+o.Thin-1)/o.Thin))
	}
	var sumAcc float64
	for it := 0; it < o.Draws; it++ {
		acc := c.transition()
		if c.err != nil {
			return nil, fmt.Errorf("nuts: chain %d: %w", r.ci, c.err)
		}
		sumAcc += acc
		if c.divergent {
			st.Divergences++
		}
		st.DepthHist[c.depth]++
		st.Leapfrogs += int64(c.nLeapfrog)
		if o.OnDraw != nil {
			o.OnDraw(r.ci, c.z.q)
		}
		if !o.Discard && it%o.Thin == 0 {
			draws = append(draws, c.z.q...)
		}
		if err := r.tick(); err != nil {
			return nil, err
		}
	}
	r.bar.Add(r.pending)
	st.AcceptRate = sumAcc / float64(o.Draws)
	var sd float64
	for k, n := range st.DepthHist {
		sd += float64(k * n)
	}
	st.MeanDepth = sd / float64(o.Draws)
	st.GradEvals = c.gradEvals
	return draws, nil
}

// initStepSize is Stan's heuristic: from the current state, double or
// halve the step size until the acceptance probability of a single
// leapfrog step crosses 0.8.
func (c *chain) initStepSize() error {
	logTarget := math.Log(0.8)
	dir := 0
	for {
		if c.err != nil {
			return c.err
		}
		c.metric.sampleMomentum(c.rng, c.z.p)
		c.cur.copyFrom(&c.z)
		h0 := c.hamiltonian(&c.cur)
		c.leapfrog(c.eps)
		h := c.hamiltonian(&c.cur)
		if math.IsNaN(h) {
			h = math.Inf(1)
		}
		dH := h0 - h
		if dir == 0 {
			if dH > logTarget {
				dir = 1
			} else {
				dir = -1
			}
		} else if (dir == 1 && !(dH > logTarget)) || (dir == -1 && !(dH < logTarget)) {
			return nil
		}
		if dir == 1 {
			c.eps *= 2
		} else {
			c.eps /= 2
		}
		if c.eps > 1e7 {
			return fmt.Errorf("step size search diverged to %g: the posterior looks improper", c.eps)
		}
		if c.eps < 1e-300 {
			return fmt.Errorf("step size search collapsed to 0: no finite step is accepted (non-finite gradient?)")
		}
	}
}
