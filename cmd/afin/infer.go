package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
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
	if method == nil && name != "" {
		// Reported before parsing, which would only complain about the
		// unknown method's flags.
		return badInput(fmt.Errorf("--method: unknown method %q (valid: %s)", name, methodNames()))
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
	} else {
		// Each method adds its own flags; without one, say how to see them.
		common := fs.Usage
		fs.Usage = func() {
			common()
			fmt.Fprintln(fs.Output(), "\nRun 'afin infer --method M --help' for the flags of method M.")
		}
	}
	if err := parseFlags(fs, args); err != nil {
		if method != nil && !errors.Is(err, flag.ErrHelp) {
			return fmt.Errorf("%w (see 'afin infer --method %s --help')", err, method.name)
		}
		return err
	}
	// methodArg picked the flags from the first --method; a second one
	// would run one method with another's flags.
	if got := fs.Lookup("method").Value.String(); got != name {
		return badInput(fmt.Errorf("--method given twice (%q, then %q); give it once", name, got))
	}
	if method != nil && run == nil {
		return fmt.Errorf("method %s is not built yet", method.name)
	}
	if method == nil {
		return badInput(fmt.Errorf("--method is required (one of %s)", methodNames()))
	}
	task, err := loadRunInputs(*taskPath, *drawsOut)
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
	if err := checkMomentsFinite(res); err != nil {
		return err
	}
	if *drawsOut != "" {
		if res.Draws == nil || res.Draws.Len() == 0 {
			hint := "ask for some with its draws flag"
			if fs.Lookup("n-draws") != nil {
				hint = "ask for some with --n-draws S"
			}
			return badInput(fmt.Errorf("--draws-out: method %s produced no draws (%s)", method.name, hint))
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

// loadRunInputs checks what infer and reference read and write before
// they start a possibly long run: the task (given, valid, and small enough
// for a d×d covariance) and the --draws-out path.
func loadRunInputs(taskPath, drawsOut string) (*factor.Task, error) {
	if taskPath == "" {
		return nil, badInput(fmt.Errorf("--task is required"))
	}
	task, err := loadTask(taskPath)
	if err != nil {
		return nil, err
	}
	if err := checkOutputDim(task.D); err != nil {
		return nil, err
	}
	if err := checkDrawsOut(drawsOut); err != nil {
		return nil, err
	}
	return task, nil
}

// maxOutputD bounds d for the commands that report a d×d covariance. The
// task JSON allows d up to 65536, but a covariance that size is 34 GB
// (and its computation from draws, or a d×d Cholesky, takes hours), so
// such a task would exhaust memory or seem to hang instead of failing.
const maxOutputD = 4096

func checkOutputDim(d int) error {
	if d > maxOutputD {
		return badInput(fmt.Errorf("d = %d: this command reports a d×d covariance, which needs d ≤ %d", d, maxOutputD))
	}
	return nil
}

// maxDrawEntries bounds the draws a method keeps in memory, as numbers
// (1 GiB of float64): a larger request would exhaust memory after a long
// run instead of failing at once. Long runs belong to afin reference,
// which streams its moments.
const maxDrawEntries = 1 << 27

// checkDrawCount refuses draws of dimension d beyond maxDrawEntries; the
// number of draws is the product of counts, and what names the flag(s)
// that set them.
func checkDrawCount(what string, d int, counts ...int) error {
	// In float64: a product of flag values may overflow int.
	n := 1.0
	for _, c := range counts {
		n *= float64(c)
	}
	if n*float64(d) > maxDrawEntries {
		return badInput(fmt.Errorf("%s: %.4g draws of d = %d would keep %.3g numbers in memory, above %d; ask for fewer (afin reference streams long runs)",
			what, n, d, n*float64(d), maxDrawEntries))
	}
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
	// Some editors start UTF-8 files with a byte-order mark, which JSON
	// does not allow; it carries no content.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		if path == "-" {
			path = "stdin"
		}
		return nil, badInput(fmt.Errorf("reading task: %s is empty", path))
	}
	task, err := factor.ParseTask(data)
	if err != nil {
		return nil, badInput(err)
	}
	return task, nil
}

// checkDrawsOut fails early, before a long run, when the --draws-out path
// cannot be created: its directory is missing or it names a directory.
func checkDrawsOut(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return badInput(fmt.Errorf("--draws-out: %s is a directory", path))
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return badInput(fmt.Errorf("--draws-out: directory %s does not exist", dir))
	}
	return nil
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

// checkMomentsFinite refuses to report a mean or covariance that is not
// finite: JSON cannot carry it, and a table would show it silently. Finite
// draws reach this only by overflow, on tasks scaled near float64's limit.
func checkMomentsFinite(res *inferResult) error {
	bad := func(what string, v float64) error {
		return fmt.Errorf("method %s: %s is %v, beyond float64 (the task's locations or scales are too large; rescale it)", res.Method, what, v)
	}
	for i, v := range res.Mean {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad(fmt.Sprintf("mean[%d]", i), v)
		}
	}
	for i, row := range res.Cov {
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return bad(fmt.Sprintf("cov[%d][%d]", i, j), v)
			}
		}
	}
	return nil
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
	// Sorted, so the same run prints the same text.
	for _, k := range slices.Sorted(maps.Keys(res.Diagnostics)) {
		fmt.Fprintf(w, "%s: %v\n", k, res.Diagnostics[k])
	}
}

func sqrt(x float64) float64 { return math.Sqrt(x) }
