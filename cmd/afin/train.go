package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"runtime"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/internal/progress"
)

func runTrain(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "train", "--config small|paper --decoder gaussian|flow --steps N --out DIR [--resume] [--dry-run --json]")
	def := afin.DefaultTrainOptions()
	config := fs.String("config", "small", "network configuration: small or paper")
	decoder := fs.String("decoder", "gaussian", "posterior decoder: gaussian or flow")
	steps := fs.Int("steps", def.Steps, "optimiser steps in the whole run (the cosine schedule spans them)")
	out := fs.String("out", "", "checkpoint directory (weights, optimiser state, config, train.jsonl)")
	resume := fs.Bool("resume", false, "continue the run stored in --out")
	dryRun := fs.Bool("dry-run", false, "print the trainable parameter counts and exit")
	asJSON := fs.Bool("json", false, "with --dry-run: print JSON")
	census := fs.Bool("census", false, "print, without training, one JSON line per distinct GoMLX program the run as configured would compile (bucket, tasks a run, nodes, matrix products, modelled peak bytes), then their totals")
	batch := fs.Int("batch", def.BatchTasks, "tasks per micro-batch (one shared (d, N))")
	micro := fs.Int("micro-batches", def.MicroBatch, "micro-batches per optimiser step, each with its own (d, N); gradients are averaged")
	lr := fs.Float64("lr", def.LR, "peak AdamW learning rate")
	wd := fs.Float64("weight-decay", def.WeightDecay, "AdamW weight decay")
	warmup := fs.Int("warmup", def.Warmup, "linear warm-up steps")
	clip := fs.Float64("clip", def.ClipNorm, "global gradient-norm clip (0: none)")
	ema := fs.Float64("ema", def.EMADecay, "EMA decay of the evaluated/exported weights")
	seed := fs.Uint64("seed", 0, "random seed (initial weights and the task stream)")
	dMax := fs.Int("d-max", 0, "largest d simulated (0: 16)")
	nMax := fs.Int("n-max", 0, "largest N simulated (0: 256)")
	ckSteps := fs.Int("checkpoint-every", def.CheckpointEvery, "checkpoint every this many steps (0: by time only)")
	ckSecs := fs.Float64("checkpoint-seconds", def.CheckpointSeconds, "also checkpoint after this many wall seconds (0: by steps only)")
	evalEvery := fs.Int("eval-every", def.EvalEvery, "held-out evaluation every this many steps (0: never)")
	logEvery := fs.Int("log-every", def.LogEvery, "training-log record every this many steps")
	dev := deviceFlags(fs)
	workers := fs.Int("workers", 0, "gradient workers of the native engine (0: GOMAXPROCS); a resumed run keeps its stored count unless this is given, and continues bit for bit only with the same count")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := afin.ConfigByName(*config, *decoder)
	if err != nil {
		return badInput(err)
	}
	opts := afin.TrainOptions{Steps: *steps, BatchTasks: *batch, MicroBatch: *micro, LR: *lr,
		WeightDecay: *wd, Warmup: *warmup, MinLRFrac: def.MinLRFrac, ClipNorm: *clip, EMADecay: *ema,
		EMAStart: def.EMAStart, Seed: *seed, DMax: *dMax, NMax: *nMax, CheckpointEvery: *ckSteps,
		CheckpointSeconds: *ckSecs, EvalEvery: *evalEvery, LogEvery: *logEvery, Workers: *workers, Precision: *dev.precision}
	if *dryRun || *census {
		return preview(env, dev, cfg, opts, *census, *asJSON)
	}
	if *out == "" {
		return badInput(errors.New("--out is required"))
	}
	if opts.Workers == 0 {
		// Resolved here so that a --workers 0 given on --resume overrides the
		// stored count like any other given value.
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	// On --resume the stored options stand except those given as flags now
	// (afin.ResolveResume).
	var override []string
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		set[f.Name] = true
		if field, ok := trainFlagOption[f.Name]; ok {
			override = append(override, field)
		}
	})
	total := opts.Steps
	if *resume {
		if total, err = resumedSteps(*out, opts, override); err != nil {
			return err
		}
		if !set["config"] && !set["decoder"] {
			cfg = afin.Config{} // the checkpoint's architecture, without a note
		}
	} else if err := opts.Check(); err != nil {
		return badInput(fmt.Errorf("afin train: %w", err))
	}
	env.noteKernel()
	tr, err := dev.trainer(*out, env, override)
	if err != nil {
		return err
	}
	return trainWithProgress(ctx, env, tr, cfg, opts, *resume, total)
}

// trainDevice holds the flags of `afin train` that set up the device
// (precision is also stored with the run: it changes the numbers).
type trainDevice struct {
	precision          *string
	budget, timeBudget *float64
	compileAhead       *bool
}

func deviceFlags(fs *flag.FlagSet) trainDevice {
	return trainDevice{
		precision:    fs.String("precision", "fp32", "training arithmetic of the gomlx engine: fp32; tf32 (TF32 matrix products on a CUDA GPU); bf16 (bfloat16 activations, float32 weights, loss and optimiser)"),
		budget:       fs.Float64("memory-budget", 0, "GiB of modelled memory each GoMLX program run is planned to fit (0: 20% of the GPU's memory on a CUDA backend, where XLA's peak has run about 3× the model; half the host's available memory otherwise)"),
		timeBudget:   fs.Float64("time-budget", 0, "train for at most this many wall seconds in this session; the schedule's steps are refitted to the measured step rate so that it ends with the budget (0: no budget)"),
		compileAhead: fs.Bool("compile-ahead", false, "gomlx engine: compile every training program of the run's support before the first step, in parallel (--census lists them)"),
	}
}

// trainer is the trainer of a run in dir on the chosen engine, with the
// device flags applied.
func (dev trainDevice) trainer(dir string, env *cliEnv, override []string) (*afin.Trainer, error) {
	if !(*dev.budget >= 0) || !(*dev.timeBudget >= 0) {
		return nil, badInput(fmt.Errorf("--memory-budget and --time-budget must be ≥ 0, got %g and %g", *dev.budget, *dev.timeBudget))
	}
	choice := engineChoice()
	if *dev.precision == "tf32" && isCUDA(choice.Backend) {
		choice.Backend += ",tf32" // GoMLX's XLA backend option: TF32 matrix products
	}
	budget := int64(*dev.budget * (1 << 30))
	if budget == 0 {
		budget = defaultMemoryBudget(choice.Backend)
	}
	return &afin.Trainer{Dir: dir, Log: env.stderr, Override: override, Engine: choice, MemoryBudget: budget,
		CompileAhead: *dev.compileAhead, TimeBudget: *dev.timeBudget}, nil
}

// resumedSteps is the step count of the run stored in dir once the flags
// given now (override) are applied to its stored options.
func resumedSteps(dir string, opts afin.TrainOptions, override []string) (int, error) {
	_, stored, _, err := afin.CheckpointInfo(dir)
	if err != nil {
		return 0, err
	}
	resolved, err := afin.ResolveResume(stored, opts, override)
	if err != nil {
		return 0, badInput(err)
	}
	return resolved.Steps, nil
}

// trainWithProgress runs the trainer under a progress bar of total steps.
func trainWithProgress(ctx context.Context, env *cliEnv, tr *afin.Trainer, cfg afin.Config, opts afin.TrainOptions, resume bool, total int) error {
	bar := progress.New(env.stderr, "train", total)
	last := -1
	tr.Progress = func(step, _ int) {
		if last < 0 {
			bar.Add(step)
		} else {
			bar.Add(step - last)
		}
		last = step
	}
	err := tr.Train(ctx, cfg, opts, resume)
	bar.Finish()
	if errors.Is(err, context.Canceled) {
		return nil // interrupted: the checkpoint was written
	}
	return err
}

// preview is --dry-run (the parameter counts) or --census.
func preview(env *cliEnv, dev trainDevice, cfg afin.Config, opts afin.TrainOptions, census, asJSON bool) error {
	if !census {
		return printParamCounts(env, cfg, asJSON)
	}
	if err := opts.Check(); err != nil {
		return badInput(fmt.Errorf("afin train: %w", err))
	}
	tr, err := dev.trainer("", env, nil)
	if err != nil {
		return err
	}
	programs, err := tr.Census(cfg, opts)
	if err != nil {
		return badInput(err)
	}
	return printCensus(env, programs)
}

// censusTotals is --census's last line: the run's distinct programs
// summed, with the largest.
type censusTotals struct {
	Programs       int   `json:"programs"`
	Nodes          int   `json:"nodes"`
	MatrixProducts int   `json:"matrix_products"`
	LargestNodes   int   `json:"largest_nodes"`
	LargestPeak    int64 `json:"largest_peak_bytes"`
}

func printCensus(env *cliEnv, programs []afin.ProgramCensus) error {
	enc := json.NewEncoder(env.stdout)
	var tot censusTotals
	for _, p := range programs {
		if err := enc.Encode(p); err != nil {
			return err
		}
		tot.Programs++
		tot.Nodes += p.Nodes
		tot.MatrixProducts += p.MatrixProducts
		tot.LargestNodes = max(tot.LargestNodes, p.Nodes)
		tot.LargestPeak = max(tot.LargestPeak, p.PeakBytes)
	}
	return enc.Encode(map[string]censusTotals{"total": tot})
}

// printParamCounts is --dry-run: the trainable parameter counts by module.
func printParamCounts(env *cliEnv, cfg afin.Config, asJSON bool) error {
	total, mods := afin.CountParams(cfg)
	if asJSON {
		return json.NewEncoder(env.stdout).Encode(map[string]any{"config": cfg.Name, "decoder": cfg.Decoder, "trainable_params": total, "modules": mods})
	}
	fmt.Fprintf(env.stdout, "config %s, decoder %s: %d trainable parameters\n", cfg.Name, cfg.Decoder, total)
	for _, m := range afin.ModuleOrder(mods) {
		fmt.Fprintf(env.stdout, "  %-18s %10d\n", m, mods[m])
	}
	return nil
}

// trainFlagOption maps each option flag of `afin train` to the
// TrainOptions field (JSON name) it sets.
var trainFlagOption = map[string]string{
	"steps": "steps", "batch": "batch_tasks", "micro-batches": "micro_batches", "lr": "lr",
	"weight-decay": "weight_decay", "warmup": "warmup", "clip": "clip_norm", "ema": "ema_decay",
	"seed": "seed", "d-max": "d_max", "n-max": "n_max", "checkpoint-every": "checkpoint_every",
	"checkpoint-seconds": "checkpoint_seconds", "eval-every": "eval_every", "log-every": "log_every",
	"workers": "workers", "precision": "precision",
}
