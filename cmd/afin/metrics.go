package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/afin-bench/afin/posterior"
)

// metricsResult is what `afin metrics --json` prints. EnergyGap is present
// only when --task gives the target density.
type metricsResult struct {
	M1        float64  `json:"m1"`
	M2        float64  `json:"m2"`
	SW2       float64  `json:"sw2"`
	EnergyGap *float64 `json:"energy_gap,omitempty"`
	// C2ST is present only with --c2st (it trains 5 classifiers).
	C2ST *posterior.C2STResult `json:"c2st,omitempty"`
}

func runMetrics(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "metrics", "--draws A.csv --ref B.csv [--task FILE] [--seed S] [--json]")
	drawsPath := fs.String("draws", "", "draws to evaluate (CSV: z1..zd[,w])")
	refPath := fs.String("ref", "", "reference draws (CSV: z1..zd[,w])")
	taskPath := fs.String("task", "", "task JSON; adds the energy gap E_q[-log p̃] - E_ref[-log p̃]")
	seed := fs.Uint64("seed", 0, "seed of the 128 random SW2 directions")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	c2st := fs.Bool("c2st", false, "add the classifier two-sample test accuracy (sbibm protocol; 0.5 is perfect)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *drawsPath == "" || *refPath == "" {
		return badInput(fmt.Errorf("--draws and --ref are both required"))
	}
	q, err := readDrawsFile("--draws", *drawsPath)
	if err != nil {
		return err
	}
	ref, err := readDrawsFile("--ref", *refPath)
	if err != nil {
		return err
	}
	if q.D != ref.D {
		return badInput(fmt.Errorf("--draws has d=%d columns but --ref has d=%d", q.D, ref.D))
	}
	res := metricsResult{
		M1:  posterior.M1(q, ref),
		M2:  posterior.M2(q, ref),
		SW2: posterior.SW2(q, ref, *seed),
	}
	if *taskPath != "" {
		task, err := loadTask(env, *taskPath)
		if err != nil {
			return err
		}
		if task.D != q.D {
			return badInput(fmt.Errorf("--task has d=%d but the draws have d=%d", task.D, q.D))
		}
		gap := posterior.EnergyGap(task, q, ref)
		res.EnergyGap = &gap
	}
	if *c2st {
		c, err := posterior.C2ST(q, ref, posterior.C2STOptions{Seed: *seed})
		if err != nil {
			return badInput(err)
		}
		res.C2ST = &c
	}
	// encoding/json refuses ±Inf and NaN, and a table showing them would
	// pass a broken number on silently: refuse in both forms.
	if err := checkFinite(res); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(env.stdout).Encode(res)
	}
	// One write, so a failed one (a full disk, a closed pipe) is an error
	// rather than a success with the numbers lost.
	var b strings.Builder
	fmt.Fprintf(&b, "draws: %s (%d rows, d=%d, weighted=%v)\n", *drawsPath, q.Len(), q.D, q.Weighted())
	fmt.Fprintf(&b, "ref:   %s (%d rows, d=%d, weighted=%v)\n", *refPath, ref.Len(), ref.D, ref.Weighted())
	fmt.Fprintf(&b, "m1  %.6g\nm2  %.6g\nsw2 %.6g\n", res.M1, res.M2, res.SW2)
	if res.EnergyGap != nil {
		fmt.Fprintf(&b, "energy_gap %.6g\n", *res.EnergyGap)
	}
	if res.C2ST != nil {
		fmt.Fprintf(&b, "c2st %.4g (± %.2g, %d draws per side)\n", res.C2ST.Accuracy, res.C2ST.StdErr, res.C2ST.N)
	}
	if _, err := io.WriteString(env.stdout, b.String()); err != nil {
		return fmt.Errorf("writing the metrics: %w", err)
	}
	return nil
}

func checkFinite(r metricsResult) error {
	vals := []struct {
		name string
		v    float64
	}{{"m1", r.M1}, {"m2", r.M2}, {"sw2", r.SW2}}
	for _, m := range vals {
		if math.IsNaN(m.v) || math.IsInf(m.v, 0) {
			// Finite draws give a non-finite distance only by overflow.
			return badInput(fmt.Errorf("%s is %v: the draws are too large in magnitude for float64 arithmetic (|z| near 1e154 or more)", m.name, m.v))
		}
	}
	if r.EnergyGap != nil && (math.IsNaN(*r.EnergyGap) || math.IsInf(*r.EnergyGap, 0)) {
		return fmt.Errorf("energy_gap is %v: a draw lies where the target density is zero or not finite", *r.EnergyGap)
	}
	return nil
}

// readDrawsFile reads a draw CSV; a missing or malformed file is bad input.
func readDrawsFile(flagName, path string) (*posterior.Draws, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badInput(fmt.Errorf("%s: %w", flagName, err))
	}
	defer f.Close()
	d, err := posterior.ReadCSV(f)
	if err != nil {
		return nil, badInput(fmt.Errorf("%s %s: %w", flagName, path, err))
	}
	if d.Len() < 2 {
		// One draw has no covariance: M2 and SW2 would compare against
		// a zero matrix and report a number that means nothing.
		return nil, badInput(fmt.Errorf("%s %s: has %d draw, need at least 2", flagName, path, d.Len()))
	}
	return d, nil
}
