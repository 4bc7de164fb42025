package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// runDensity prints log q(z) of the AFIN posterior for each row of a
// points CSV (header z1..zd, an optional final w column is ignored), for
// external samplers (independence MH, importance sampling).
func runDensity(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "density", "--task FILE --at Z.csv [--checkpoint DIR] [--json]")
	taskPath := fs.String("task", "", "task JSON file (- for stdin)")
	at := fs.String("at", "", "CSV of points: header z1,...,zd, one point per row")
	ckpt := fs.String("checkpoint", "", "checkpoint directory (default $AFIN_CHECKPOINT or the shipped checkpoints/"+afin.DefaultCheckpointName+")")
	asJSON := fs.Bool("json", false, "print JSON instead of one log q per line")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *taskPath == "" || *at == "" {
		return badInput(errors.New("--task and --at are required"))
	}
	task, err := loadTask(env, *taskPath)
	if err != nil {
		return err
	}
	z, err := readPoints(*at, task.D)
	if err != nil {
		return err
	}
	dir := *ckpt
	if dir == "" {
		if dir, err = defaultCheckpoint(); err != nil {
			return err
		}
	}
	m, err := afin.Load(dir, engineChoice())
	if errors.Is(err, checkpoint.ErrInvalid) {
		return badInput(err)
	}
	if err != nil {
		return err
	}
	env.noteKernel()
	lq, err := modelLogQ(m, task, z)
	if err != nil {
		return err
	}
	return printDensity(env, m, task, lq, *asJSON)
}

// readPoints reads the --at CSV; a malformed file or a wrong dimension
// is bad input.
func readPoints(path string, d int) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badInput(fmt.Errorf("--at: %w", err))
	}
	defer f.Close()
	pts, err := posterior.ReadCSV(f)
	if err != nil {
		return nil, badInput(fmt.Errorf("--at %s: %w", path, err))
	}
	if pts.D != d {
		return nil, badInput(fmt.Errorf("--at %s: points have %d coordinates, the task has d=%d", path, pts.D, d))
	}
	return pts.Z, nil
}

// modelLogQ evaluates log q at the points (row-major) with either decoder.
func modelLogQ(m *afin.Model, task *factor.Task, z []float64) ([]float64, error) {
	if m.Cfg.Decoder == "flow" {
		return m.LogQFlow(task, z)
	}
	gs, err := m.Forward([]*factor.Task{task})
	if err != nil {
		return nil, err
	}
	d := task.D
	out := make([]float64, len(z)/d)
	for s := range out {
		out[s] = gs[0].LogQ(z[s*d : (s+1)*d])
	}
	return out, nil
}

func printDensity(env *cliEnv, m *afin.Model, task *factor.Task, lq []float64, asJSON bool) error {
	if w := nonFiniteLogQ(lq); w != "" {
		fmt.Fprintln(env.stderr, "afin density: warning:", w)
	}
	if asJSON {
		vals := make([]any, len(lq))
		for i, v := range lq {
			vals[i] = jsonFloat(v)
		}
		out := map[string]any{"d": task.D, "n_points": len(lq), "log_q": vals, "decoder": m.Cfg.Decoder,
			"checkpoint": m.Dir, "checkpoint_hash": m.Hash}
		if why := m.Outside(task); why != "" {
			out["outside_training_support"] = why
		}
		return writeJSON(env.stdout, out)
	}
	if why := m.Outside(task); why != "" {
		fmt.Fprintf(env.stderr, "afin density: task outside the checkpoint's training support: %s\n", why)
	}
	buf := make([]byte, 0, 32*len(lq))
	for _, v := range lq {
		buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		buf = append(buf, '\n')
	}
	if _, err := env.stdout.Write(buf); err != nil {
		return fmt.Errorf("writing log q: %w", err)
	}
	return nil
}

// nonFiniteLogQ explains the points whose log q is not a finite number
// (printed as ±Inf or NaN, null in JSON), or returns "" when every one is
// finite. Finite points reach it only when float64 overflows: log q of a
// point that far from the posterior is below −1.8e308.
func nonFiniteLogQ(lq []float64) string {
	n, first := 0, -1
	for i, v := range lq {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if n == 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("log q is not finite at %d of %d point(s) (first: data row %d, log q = %v): "+
		"the point is so far from the posterior that log q overflows float64", n, len(lq), first+1, lq[first])
}

// jsonFloat keeps non-finite values representable in JSON (as null).
func jsonFloat(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}
