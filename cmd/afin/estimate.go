package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/afin-bench/afin/bench"
)

// estimateFlags are `afin bench --estimate`'s own flags.
type estimateFlags struct {
	on        bool
	shards    int
	timeLimit time.Duration
	asJSON    bool
}

func declareEstimateFlags(fs *flag.FlagSet) *estimateFlags {
	e := &estimateFlags{}
	fs.BoolVar(&e.on, "estimate", false, "print each suite's units and estimated CPU-hours, by method and references, from the cost model, and run nothing (--suite all: every suite)")
	fs.IntVar(&e.shards, "shards", 1, "with --estimate: the shard count whose largest shard to estimate")
	fs.DurationVar(&e.timeLimit, "time-limit", 0, "with --estimate: the fewest shards whose largest shard, with the 1.5× margin of the suggested --time, fits this (e.g. 4h)")
	fs.BoolVar(&e.asJSON, "estimate-json", false, "with --estimate: print the estimates as JSON lines")
	return e
}

// slurmMargin is the factor between the largest shard's estimated CPU
// time and the wall-time limit suggested for it: the model's error on a
// suite (within ±25% on the quick profile) and a slower or busier node.
const slurmMargin = 1.5

// runEstimate is `afin bench --estimate`.
func runEstimate(env *cliEnv, f *estimateFlags, suite, profile, protocol, seeds, methodList string) error {
	suites := []string{suite}
	if suite == "" || suite == "all" {
		suites = bench.SuiteNames()
		suite = bench.SuiteNames()[0]
	}
	prof, err := benchProfile(suite, profile, protocol)
	if err != nil {
		return err
	}
	seedList, err := benchParseSeeds(seeds)
	if err != nil {
		return badInput(err)
	}
	if f.shards < 1 {
		return badInput(fmt.Errorf("--shards: must be ≥ 1, got %d", f.shards))
	}
	if f.timeLimit < 0 {
		return badInput(fmt.Errorf("--time-limit: must be > 0, got %v", f.timeLimit))
	}
	model, err := bench.DefaultCostModel()
	if err != nil {
		return err
	}
	var out []*bench.Estimate
	for _, s := range suites {
		cfg := bench.EstimateConfig{Suite: s, Profile: prof, Seeds: seedList, Methods: benchSplitList(methodList), Shards: f.shards, Model: model}
		var e *bench.Estimate
		if f.timeLimit > 0 {
			e, err = bench.ShardsFor(cfg, f.timeLimit.Seconds()/slurmMargin)
		} else {
			e, err = bench.EstimateSuite(cfg)
		}
		switch {
		case errors.Is(err, bench.ErrNotInSuite) && len(suites) > 1:
			continue // --suite all --methods M: the suites that run M
		case err != nil:
			return badInput(fmt.Errorf("--estimate: %w", err))
		}
		out = append(out, e)
	}
	if f.asJSON {
		enc := json.NewEncoder(env.stdout)
		for _, e := range out {
			if err := enc.Encode(estimateJSON(e)); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(env.stdout, "estimate, profile %s (cost model: %s)\n", prof.Name, model.Fitted)
	total := 0.0
	for _, e := range out {
		printEstimate(env.stdout, e)
		total += e.Total
	}
	if len(out) > 1 {
		fmt.Fprintf(env.stdout, "all suites: %.2f CPU-hours\n", total/3600)
	}
	return nil
}

// printEstimate writes one suite's estimate as a small table.
func printEstimate(w io.Writer, e *bench.Estimate) {
	fmt.Fprintf(w, "\nsuite %s: %d units on %d tasks, %.2f CPU-hours\n", e.Suite, e.Units, e.Tasks, e.Total/3600)
	for _, m := range e.Methods {
		name := m.Method
		if m.Variant != "" {
			name += " (" + m.Variant + ")"
		}
		note := ""
		switch m.StandIn {
		case "":
		case "pooled":
			note = "  (no cost term for this method: the pooled one stands in)"
		default:
			note = "  (not measured: priced as in suite " + m.StandIn + ")"
		}
		fmt.Fprintf(w, "  %-28s %5d units %9.3f CPU-hours%s\n", name, m.Units, m.Seconds/3600, note)
	}
	for _, k := range []string{"nuts", "exact", "none"} {
		if c, ok := e.Targets[k]; ok {
			fmt.Fprintf(w, "  %-28s %15s %9.3f CPU-hours\n", targetLabel(k), "", c/3600)
		}
	}
	if e.Shards > 1 {
		fmt.Fprintf(w, "  %d shards: largest %.2f CPU-hours (%.2f× the mean %.2f)", e.Shards, e.Largest/3600, e.Ratio(), e.Mean/3600)
		if e.Empty > 0 {
			fmt.Fprintf(w, ", %d empty", e.Empty)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  limit for the largest shard (%.1f× its CPU time): --time=%s\n", slurmMargin, slurmTime(e.Largest*slurmMargin))
}

func targetLabel(kind string) string {
	switch kind {
	case "nuts":
		return "references (NUTS)"
	case "exact":
		return "references (exact)"
	}
	return "tasks (no reference)"
}

// slurmTime writes seconds as Slurm's days-hours:minutes:seconds, rounded
// up to the minute (at least one).
func slurmTime(seconds float64) string {
	m := max(int(math.Ceil(seconds/60)), 1)
	return fmt.Sprintf("%d-%02d:%02d:00", m/(24*60), m/60%24, m%60)
}

// estimateJSON is an estimate as `--estimate --estimate-json` prints it.
func estimateJSON(e *bench.Estimate) map[string]any {
	methods := make([]map[string]any, len(e.Methods))
	for i, m := range e.Methods {
		methods[i] = map[string]any{"method": m.Method, "variant": m.Variant, "units": m.Units,
			"cpu_hours": m.Seconds / 3600, "priced_as": m.StandIn}
	}
	targets := map[string]float64{}
	for k, v := range e.Targets {
		targets[k] = v / 3600
	}
	return map[string]any{
		"suite": e.Suite, "profile": e.Profile, "units": e.Units, "tasks": e.Tasks,
		"cpu_hours": e.Total / 3600, "methods": methods, "targets_cpu_hours": targets,
		"shards": e.Shards, "largest_shard_cpu_hours": e.Largest / 3600, "mean_shard_cpu_hours": e.Mean / 3600,
		"empty_shards": e.Empty, "slurm_time": slurmTime(e.Largest * slurmMargin),
	}
}
