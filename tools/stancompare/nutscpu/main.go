// Command nutscpu runs afin's NUTS on one task JSON exactly as
// `afin infer --method nuts` does (same nuts.Config: chains start at the
// prior location, diagonal metric, the given warm-up, draws and seed) but
// measures the process CPU time of warm-up plus sampling alone, so that
// it is comparable with Stan's own clock(), which leaves out start-up and
// the ESS/R̂ computation. It prints one JSON object: cpu_seconds,
// wall_seconds, grad_evals, ess_bulk (minimum over coordinates), rhat
// (maximum) and divergences. Part of tools/stancompare, not of the
// product; run it with GOMAXPROCS=1 for single-core numbers.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/cputime"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nutscpu:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nutscpu", flag.ContinueOnError)
	taskPath := fs.String("task", "", "task JSON file")
	seed := fs.Uint64("seed", 0, "random seed (as afin infer --seed)")
	warmup := fs.Int("warmup", 1000, "warm-up iterations per chain")
	draws := fs.Int("draws", 1000, "draws per chain after warm-up")
	chains := fs.Int("chains", 4, "chains")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *taskPath == "":
		return fmt.Errorf("--task is required")
	case *warmup < 0 || *draws < 4 || *chains < 1:
		return fmt.Errorf("need --warmup >= 0, --draws >= 4, --chains >= 1; got %d, %d, %d", *warmup, *draws, *chains)
	}
	data, err := os.ReadFile(*taskPath)
	if err != nil {
		return err
	}
	task, err := factor.ParseTask(data)
	if err != nil {
		return fmt.Errorf("%s: %w", *taskPath, err)
	}

	// Keep the draws through OnDraw so that no diagnostics run inside the
	// timed region; Discard leaves the sampler's random streams unchanged.
	kept := make([][]float64, *chains)
	cfg := nuts.Config{
		Warmup: *warmup, Draws: *draws, Chains: *chains, Seed: *seed,
		Init: task.Prior.Location(), Discard: true,
		OnDraw: func(c int, z []float64) { kept[c] = append(kept[c], z...) },
	}
	for c := range kept {
		kept[c] = make([]float64, 0, *draws*task.D)
	}
	c0, err := cputime.Process()
	if err != nil {
		return err
	}
	res, err := nuts.Sample(context.Background(), task, task.D, cfg)
	if err != nil {
		return err
	}
	c1, err := cputime.Process()
	if err != nil {
		return err
	}
	conv := nuts.Diagnose(kept, task.D)
	out := map[string]any{
		"task": *taskPath, "seed": *seed, "warmup": *warmup, "draws": *draws, "chains": *chains,
		"cpu_seconds": c1 - c0, "wall_seconds": res.Seconds, "grad_evals": res.GradEvals,
		"ess_bulk": conv.MinESSBulk, "rhat": conv.MaxRhat, "divergences": res.Divergences,
	}
	return json.NewEncoder(stdout).Encode(out)
}
