package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// inferMethod is one choice of `afin infer --method`. bind registers the
// method's own flags on fs and returns the function that runs it.
type inferMethod struct {
	name    string
	summary string
	bind    func(fs *flag.FlagSet) inferFunc
}

// inferFunc runs a method on a validated task.
type inferFunc func(ctx context.Context, task *factor.Task, opts inferOptions) (*inferResult, error)

// inferOptions are the flags every method shares.
type inferOptions struct {
	Seed   uint64
	Stderr io.Writer // progress bars and notes go here
}

// inferResult is what `afin infer --json` prints (DESIGN.md "CLI
// contract"). Draws is written to --draws-out; Mean and Cov, when nil, are
// computed from Draws.
type inferResult struct {
	Method      string         `json:"method"`
	D           int            `json:"d"`
	NDraws      int            `json:"n_draws"`
	Seconds     float64        `json:"seconds"`
	Mean        []float64      `json:"mean"`
	Cov         [][]float64    `json:"cov"`
	Weighted    bool           `json:"weighted"`
	Diagnostics map[string]any `json:"diagnostics"`

	Draws *posterior.Draws `json:"-"`
}

func inferMethods() []inferMethod {
	return []inferMethod{
		{"exact", "closed-form posterior of a conjugate task", bindExact},
		{"nuts", "No-U-Turn sampler", bindNUTS},
		{"frvi", "full-rank Gaussian variational inference", bindFRVI},
		{"frvi-snis", "FRVI proposal refined by self-normalised importance sampling", bindFRVISNIS},
		{"afin", "AFIN network, single forward pass", bindAFIN},
		{"afin-snis", "AFIN proposal refined by self-normalised importance sampling", bindAFINSNIS},
		{"iaf", "inverse autoregressive flow VI", bindIAF},
		{"maf", "masked autoregressive flow VI", bindMAF},
		{"nsf", "neural spline flow VI", bindNSF},
	}
}

func methodNames() string {
	var names []string
	for _, m := range inferMethods() {
		names = append(names, m.name)
	}
	return strings.Join(names, ", ")
}

// methodArg finds the value of --method in args before the flag set for
// that method exists.
func methodArg(args []string) string {
	for i, a := range args {
		for _, p := range []string{"--method=", "-method="} {
			if strings.HasPrefix(a, p) {
				return strings.TrimPrefix(a, p)
			}
		}
		if (a == "--method" || a == "-method") && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func runInfer(ctx context.Context, env *cliEnv, args []string) error {
	name := methodArg(args)
	var method *inferMethod
	for _, m := range inferMethods() {
		if m.name == name {
			method = &m
			break
		}
	}
	fs := newFlagSet(env, "infer", "--method M --task FILE [--seed S] [--draws-out CSV] [--json] [method flags]")
	fs.String("method", "", "inference method: "+methodNames())
	taskPath := fs.String("task", "", "task JSON file (- for stdin)")
	seed := fs.Uint64("seed", 0, "random seed")
	drawsOut := fs.String("draws-out", "", "write the draws to this CSV file")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	var run inferFunc
	if method != nil {
		run = method.bind(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if method != nil && run == nil {
		return fmt.Errorf("method %s is not built yet", method.name)
	}
	if method == nil {
		if name == "" {
			return badInput(fmt.Errorf("--method is required (one of %s)", methodNames()))
		}
		return badInput(fmt.Errorf("--method: unknown method %q (valid: %s)", name, methodNames()))
	}
	if *taskPath == "" {
		return badInput(fmt.Errorf("--task is required"))
	}
	task, err := loadTask(*taskPath)
	if err != nil {
		return err
	}
	res, err := run(ctx, task, inferOptions{Seed: *seed, Stderr: env.stderr})
	if err != nil {
		return err
	}
	res.Method = method.name
	res.D = task.D
	fillMoments(res)
	if *drawsOut != "" {
		if res.Draws == nil || res.Draws.Len() == 0 {
			return badInput(fmt.Errorf("--draws-out: method %s produced no draws (ask for some with its draws flag)", method.name))
		}
		if err := writeDrawsFile(*drawsOut, res.Draws); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		return enc.Encode(res)
	}
	printInferSummary(env.stdout, res)
	return nil
}

// loadTask reads and validates a task JSON file; any problem with the
// file's content is bad input (exit 2).
func loadTask(path string) (*factor.Task, error) {
	var (
		data []byte
		err  error
	)
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, badInput(fmt.Errorf("reading task: %w", err))
	}
	task, err := factor.ParseTask(data)
	if err != nil {
		return nil, badInput(err)
	}
	return task, nil
}

func writeDrawsFile(path string, d *posterior.Draws) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing draws: %w", err)
	}
	if err := posterior.WriteCSV(f, d); err != nil {
		f.Close()
		return fmt.Errorf("writing draws to %s: %w", path, err)
	}
	return f.Close()
}

func fillMoments(res *inferResult) {
	if res.Draws != nil {
		res.NDraws = res.Draws.Len()
		res.Weighted = res.Draws.Weighted()
	}
	if res.Mean == nil && res.Draws != nil {
		res.Mean = res.Draws.Mean()
	}
	if res.Cov == nil && res.Draws != nil {
		res.Cov = square(res.Draws.Cov(), res.D)
	}
	if res.Diagnostics == nil {
		res.Diagnostics = map[string]any{}
	}
}

// square turns a row-major d×d slice into rows.
func square(flat []float64, d int) [][]float64 {
	out := make([][]float64, d)
	for i := range out {
		out[i] = append([]float64(nil), flat[i*d:(i+1)*d]...)
	}
	return out
}

func printInferSummary(w io.Writer, res *inferResult) {
	fmt.Fprintf(w, "method %s: d=%d draws=%d weighted=%v seconds=%.4g\n", res.Method, res.D, res.NDraws, res.Weighted, res.Seconds)
	fmt.Fprintf(w, "%6s %12s %12s\n", "coord", "mean", "sd")
	for i, m := range res.Mean {
		sd := 0.0
		if v := res.Cov[i][i]; v > 0 {
			sd = sqrt(v)
		}
		fmt.Fprintf(w, "%6d %12.5g %12.5g\n", i+1, m, sd)
	}
	for k, v := range res.Diagnostics {
		fmt.Fprintf(w, "%s: %v\n", k, v)
	}
}

func sqrt(x float64) float64 { return math.Sqrt(x) }
