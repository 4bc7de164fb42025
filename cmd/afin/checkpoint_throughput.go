package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/afin/cpu"
	"github.com/afin-bench/afin/afin/engine"
	"github.com/afin-bench/afin/factor"
)

// throughputResult is what `afin checkpoint throughput` measures. Seconds
// covers the forward passes only: the tasks are simulated and their
// network inputs built before the clock starts, so both engines are timed
// on the same work.
type throughputResult struct {
	Engine  string `json:"engine"`
	Network string `json:"network"` // the checkpoint directory, or the config with its random-weight seed
	Decoder string `json:"decoder"`
	Tasks   int    `json:"tasks"`
	D       int    `json:"d"`
	N       int    `json:"n"`
	Batch   int    `json:"batch"`
	Batches int    `json:"batches"`
	Workers int    `json:"workers"` // native: goroutines sharing the batches; GoMLX: 1
	// SimulateSeconds and InputSeconds are the host work before the clock.
	SimulateSeconds float64 `json:"simulate_seconds"`
	InputSeconds    float64 `json:"input_seconds"`
	Seconds         float64 `json:"seconds"`
	TasksPerS       float64 `json:"tasks_per_s"`
	// FirstBatchSeconds is the first batch alone (GoMLX: its compile
	// included); the rate after it is the compiled programs' speed.
	FirstBatchSeconds   float64 `json:"first_batch_seconds,omitempty"`
	TasksPerSAfterFirst float64 `json:"tasks_per_s_after_first,omitempty"`
	Programs            int     `json:"programs"` // GoMLX programs compiled (0 on the native engine)
	CompileSeconds      float64 `json:"compile_seconds"`
}

// runCheckpointThroughput is `afin checkpoint throughput`: the forward
// pass over many simulated tasks of one (d, N) on the implementation
// AFIN_ENGINE and GOMLX_BACKEND choose. deploy/gpu/bench.sh runs it on a
// GPU and on the host's cores.
func runCheckpointThroughput(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "checkpoint throughput", "[DIR | --config small|paper --random-weights SEED] [--tasks K] [--d D] [--n N] [--batch B] [--json]")
	tasks := fs.Int("tasks", 10000, "tasks simulated at (d, N) and run through the network")
	d := fs.Int("d", 8, "dimension of every task")
	n := fs.Int("n", 64, "sites of every task")
	batch := fs.Int("batch", 500, "tasks per forward pass (native: at most this many per goroutine's pass)")
	config := fs.String("config", "", "without DIR: the configuration (small or paper) of random weights")
	decoder := fs.String("decoder", "gaussian", "with --config: the decoder (only gaussian is timed)")
	randomSeed := fs.Int64("random-weights", -1, "with --config: initialise the weights from this seed (the training's initialisation)")
	seed := fs.Uint64("seed", 1, "seed of the simulated tasks")
	workers := fs.Int("workers", 0, "native engine: goroutines (0: GOMAXPROCS)")
	asJSON := fs.Bool("json", false, "print JSON")
	dir, err := parseOptionalDir(fs, args)
	if err != nil {
		return err
	}
	if *tasks < 1 || *batch < 1 || *d < 1 || *d > factor.MaxDim || *n < 1 || *n > 4096 || *workers < 0 {
		return badInput(fmt.Errorf("--tasks, --batch ≥ 1; --d in [1, %d]; --n in [1, 4096]; --workers ≥ 0", factor.MaxDim))
	}
	cfg, weights, name, err := throughputNetwork(dir, *config, *decoder, *randomSeed)
	if err != nil {
		return badInput(err)
	}
	if cfg.Decoder != "gaussian" {
		return badInput(fmt.Errorf("%s has a %s decoder: throughput times the Gaussian decoder only", name, cfg.Decoder))
	}
	if *workers == 0 {
		*workers = runtime.GOMAXPROCS(0)
	}
	res := throughputResult{Engine: engineChoice().String(), Network: name, Decoder: cfg.Decoder,
		Tasks: *tasks, D: *d, N: *n, Batch: *batch, Workers: *workers}
	if err := measureThroughput(ctx, &res, cfg, weights, *seed); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.stdout, res)
	}
	fmt.Fprintf(env.stdout, "%s: %d tasks at (d=%d, N=%d) in %d batches: %.3f s, %.1f tasks/s (%d programs compiled in %.3f s)\n",
		res.Engine, res.Tasks, res.D, res.N, res.Batches, res.Seconds, res.TasksPerS, res.Programs, res.CompileSeconds)
	if res.TasksPerSAfterFirst > 0 {
		fmt.Fprintf(env.stdout, "first batch %.3f s; after it %.1f tasks/s\n", res.FirstBatchSeconds, res.TasksPerSAfterFirst)
	}
	return nil
}

// throughputNetwork is the configuration and weights to time: a
// checkpoint's inference weights, or a configuration's initial weights.
func throughputNetwork(dir, config, decoder string, seed int64) (arch.Config, [][]float32, string, error) {
	switch {
	case dir != "" && (config != "" || seed >= 0):
		return arch.Config{}, nil, "", errors.New("give a checkpoint DIR or --config with --random-weights, not both")
	case dir != "":
		man, net, err := checkpoint.ReadInference(dir)
		if err != nil {
			return arch.Config{}, nil, "", err
		}
		return man.Config, net.Data(), dir, nil
	case config == "" || seed < 0:
		return arch.Config{}, nil, "", errors.New("give a checkpoint DIR, or --config small|paper with --random-weights SEED")
	}
	cfg, err := arch.ConfigByName(config, decoder)
	if err != nil {
		return arch.Config{}, nil, "", err
	}
	net, err := arch.New(cfg)
	if err != nil {
		return arch.Config{}, nil, "", err
	}
	net.Init(rand.New(rand.NewPCG(uint64(seed), 0)))
	return cfg, net.Data(), fmt.Sprintf("%s (random weights, seed %d)", config, seed), nil
}

// measureThroughput simulates the tasks, builds their batches and times
// the forward passes on the chosen engine.
func measureThroughput(ctx context.Context, res *throughputResult, cfg arch.Config, weights [][]float32, seed uint64) error {
	bd, err := engine.NewBinder(cfg, 1, engineChoice())
	if err != nil {
		return badInput(err)
	}
	native := bd.Native()
	if !native {
		res.Workers = 1
	}
	size := res.Batch
	if native {
		// At least four passes per goroutine, so none idles at the end.
		size = max(1, min(size, res.Tasks/(4*res.Workers)))
		if err := cpu.CheckBatchMemory(cfg, size*res.Workers, res.D, res.N, cpu.AvailableBytes()); err != nil {
			return badInput(err)
		}
	}
	batches, err := throughputBatches(ctx, res, bd.PadN(res.N), size, seed)
	if err != nil {
		return err
	}
	net, err := bd.Bind(weights)
	if err != nil {
		return err
	}
	defer net.Release()
	if native {
		err = timeNative(ctx, res, net, batches)
	} else {
		err = timeGoMLX(ctx, res, net, batches)
		st := bd.Stats()
		res.Programs, res.CompileSeconds = st.Programs, st.CompileSeconds
	}
	if err != nil {
		return err
	}
	res.Batches = len(batches)
	res.TasksPerS = float64(res.Tasks) / res.Seconds
	return nil
}

// throughputBatches simulates res.Tasks tasks at (d, N) from seed and
// groups them into network inputs of size tasks each (the last may be
// smaller), padded to nPad sites (0: none).
func throughputBatches(ctx context.Context, res *throughputResult, nPad, size int, seed uint64) ([]*arch.Batch, error) {
	start := time.Now()
	rng := rand.New(rand.NewPCG(seed, 0x7b))
	tasks := make([]*factor.Task, res.Tasks)
	for i := range tasks {
		t, err := factor.Simulate(rng, factor.SimOptions{D: res.D, N: res.N})
		if err != nil {
			return nil, badInput(err)
		}
		tasks[i] = t
	}
	res.SimulateSeconds = time.Since(start).Seconds()
	start = time.Now()
	var out []*arch.Batch
	for lo := 0; lo < len(tasks); lo += size {
		b, err := arch.NewBatch(ctx, tasks[lo:min(lo+size, len(tasks))], nPad, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	res.InputSeconds = time.Since(start).Seconds()
	return out, nil
}

// timeGoMLX runs the batches one after another (GoMLX executions are
// serialised), the first alone so its compile shows apart.
func timeGoMLX(ctx context.Context, res *throughputResult, net engine.Bound, batches []*arch.Batch) error {
	start := time.Now()
	for i, b := range batches {
		if _, _, err := net.Gaussian(ctx, b); err != nil {
			return fmt.Errorf("batch %d of %d: %w", i+1, len(batches), err)
		}
		if i == 0 {
			res.FirstBatchSeconds = time.Since(start).Seconds()
		}
	}
	res.Seconds = time.Since(start).Seconds()
	if rest := res.Seconds - res.FirstBatchSeconds; len(batches) > 1 && rest > 0 {
		res.TasksPerSAfterFirst = float64(res.Tasks-batches[0].B) / rest
	}
	return nil
}

// timeNative spreads the batches over res.Workers goroutines: the native
// engine runs one task at a time on one core, so the host's cores are
// used by running batches side by side.
func timeNative(ctx context.Context, res *throughputResult, net engine.Bound, batches []*arch.Batch) error {
	next := make(chan *arch.Batch, len(batches))
	for _, b := range batches {
		next <- b
	}
	close(next)
	errs := make([]error, res.Workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range res.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				if _, _, err := net.Gaussian(ctx, b); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	return errors.Join(errs...)
}
