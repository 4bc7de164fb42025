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
	"slices"
	"strings"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/reference"
)

// inferResult is what `afin infer --json` prints (DESIGN.md "CLI
// contract"): the point a one-unit bench run would record, with the
// method's closed-form moments where it has them. Draws is written to
// --draws-out.
type inferResult struct {
	Method      string              `json:"method"`
	D           int                 `json:"d"`
	NDraws      int                 `json:"n_draws"`
	Seconds     float64             `json:"seconds"`
	Mean        []float64           `json:"mean"`
	Cov         [][]float64         `json:"cov"`
	Weighted    bool                `json:"weighted"`
	Diagnostics methods.Diagnostics `json:"diagnostics"`

	Draws *posterior.Draws `json:"-"`
}

func methodNames() string {
	var out []string
	for _, e := range catalog.All() {
		if e.Prefix {
			out = append(out, e.Spelling()+" ("+e.Summary+")")
		} else {
			out = append(out, e.Name)
		}
	}
	return strings.Join(out, ", ")
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

// runInfer runs one unit of a method: a one-entry budget ladder through
// package methods, exactly as `afin bench` runs it.
func runInfer(ctx context.Context, env *cliEnv, args []string) error {
	name := methodArg(args)
	if _, known := methods.Lookup(name); name != "" && !known {
		// Reported before parsing, which would only complain about the
		// unknown method's flags.
		return badInput(fmt.Errorf("--method: unknown method %q (valid: %s)", name, methodNames()))
	}
	fs := newFlagSet(env, "infer", "--method M --task FILE [--seed S] [--draws-out CSV] [--json] [method flags]")
	fs.String("method", "", "inference method: "+methodNames())
	taskPath := fs.String("task", "", "task JSON file (- for stdin)")
	seed := fs.Uint64("seed", 0, "random seed (bench.UnitSeed of a bench unit reruns it)")
	drawsOut := fs.String("draws-out", "", "write the draws to this CSV file")
	drawsFormat := fs.String("draws-format", drawsFormatAfin, "--draws-out format: afin (z1..zd[,w]) or posterior (.chain,.iteration,.draw,z[1],...[,.log_weight], read by R posterior and ArviZ)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	var spec *inferSpec
	if name != "" {
		spec = bindMethodFlags(fs, name)
	}
	withBudgetHelp(fs)
	common := fs.Usage
	fs.Usage = func() {
		common()
		fmt.Fprint(fs.Output(), inferLimits())
		if name == "" {
			fmt.Fprintln(fs.Output(), "\nRun 'afin infer --method M --help' for the flags of method M.")
		}
	}
	if err := parseFlags(fs, args); err != nil {
		if name != "" && !errors.Is(err, flag.ErrHelp) {
			return fmt.Errorf("%w (see 'afin infer --method %s --help')", err, name)
		}
		return err
	}
	// methodArg picked the flags from the first --method; a second one
	// would run one method with another's flags.
	if got := fs.Lookup("method").Value.String(); got != name {
		return badInput(fmt.Errorf("--method given twice (%q, then %q); give it once", name, got))
	}
	if name == "" {
		return badInput(fmt.Errorf("--method is required (one of %s)", methodNames()))
	}
	if err := checkDrawsFormat(*drawsFormat); err != nil {
		return err
	}
	task, err := loadRunInputs(env, *taskPath, *drawsOut)
	if err != nil {
		return err
	}
	if spec != nil && spec.cacheDir != nil {
		if err := checkOutputDir("--cache-dir", *spec.cacheDir); err != nil {
			return err
		}
	}
	res, err := inferOne(ctx, env, name, task, spec, *seed)
	if err != nil {
		return methodError(err)
	}
	addTaskWarnings(res, task)
	if err := checkMomentsFinite(res); err != nil {
		return err
	}
	if *drawsOut != "" {
		if res.Draws == nil || res.Draws.Len() == 0 {
			return badInput(fmt.Errorf("--draws-out: method %s produced no draws (ask for some with --draws N)", name))
		}
		if err := writeDrawsAs(*drawsOut, *drawsFormat, res); err != nil {
			return err
		}
	}
	if *asJSON {
		return json.NewEncoder(env.stdout).Encode(res)
	}
	return printInferSummary(env.stdout, res)
}

// addTaskWarnings puts the task's values far outside the tested range on
// the answer, for a program reading the JSON.
func addTaskWarnings(res *inferResult, task *factor.Task) {
	w := task.Warnings()
	if len(w) == 0 {
		return
	}
	if res.Diagnostics.Flags == nil {
		res.Diagnostics.Flags = &methods.Flags{}
	}
	res.Diagnostics.Flags.TaskWarnings = w
	res.Diagnostics.Flags.Warnings = append(res.Diagnostics.Flags.Warnings, prefixed("task: ", w)...)
}

// methodError maps the methods layer's sentinel errors to exit codes.
func methodError(err error) error {
	if errors.Is(err, methods.ErrBadInput) || errors.Is(err, methods.ErrNotConjugate) || errors.Is(err, checkpoint.ErrInvalid) {
		return badInput(err)
	}
	return err
}

// job turns the parsed flags into the unit a bench run would give the
// method: the ladder, the options and, for oracle selection, the score.
func (sp *inferSpec) job(ctx context.Context, env *cliEnv, task *factor.Task, seed uint64) (*methods.Job, error) {
	job := &methods.Job{Task: task, Seed: seed, Ladder: []int{*sp.budget}, Options: sp.opts, SkipProposal: true, Progress: env.stderr}
	if sp.lrSelect == nil {
		return job, nil
	}
	sel, err := vi.ParseSelection(*sp.lrSelect)
	if err != nil {
		return nil, badInput(fmt.Errorf("--lr-select: %w", err))
	}
	job.Options.VI.Selection = sel
	proto, err := vi.ParseProtocol(*sp.protocol)
	if err != nil {
		return nil, badInput(fmt.Errorf("--protocol: %w", err))
	}
	job.Options.VI.Protocol = proto
	if *sp.lr != 0 {
		if sel == vi.SelectOracle {
			return nil, badInput(errors.New("--lr-select oracle picks among swept rates; drop --lr to sweep"))
		}
		job.Options.VI.LRs = []float64{*sp.lr}
	}
	if sel == vi.SelectOracle {
		// Ground truth is not the method's cost: fetched (or computed and
		// cached) before the method runs.
		ref, err := reference.Get(ctx, task, reference.Settings{Profile: *sp.refProfile, Seed: seed, CacheDir: flagOrEnv(*sp.cacheDir, cacheDirEnv), Progress: env.stderr})
		if err != nil {
			return nil, fmt.Errorf("oracle learning-rate selection needs a reference: %w", err)
		}
		job.Score = func(d *posterior.Draws) float64 { return posterior.SW2(d, ref.Draws, seed) }
	}
	return job, nil
}

// inferOne runs the method and returns its (only) point.
func inferOne(ctx context.Context, env *cliEnv, name string, task *factor.Task, sp *inferSpec, seed uint64) (*inferResult, error) {
	said := newWarnings(env.stderr, "infer")
	menv := &methods.Env{Checkpoint: envCheckpoint(), Engine: engineChoice(), CacheDir: os.Getenv(cacheDirEnv), Warn: said.warn}
	d, _ := methods.Lookup(name)
	kind := d.Kind
	if sp.exec != nil {
		menv.MethodsFile = flagOrEnv(*sp.exec.file, methods.MethodsFileEnv)
		m, err := methods.New(name, menv)
		if err != nil {
			return nil, err
		}
		kind = m.Kind()
		if sp.budget, err = sp.exec.resolve(sp.fs, m); err != nil {
			return nil, err
		}
	}
	n := *sp.budget
	counts := []int{n}
	if sp.kept != nil {
		counts = []int{*sp.kept}
	}
	if err := checkDrawCount(budgetFlag(kind), task.D, counts...); err != nil {
		return nil, err
	}
	job, err := sp.job(ctx, env, task, seed)
	if err != nil {
		return nil, err
	}
	if sp.checkpoint != nil && *sp.checkpoint != "" {
		menv.Checkpoint = *sp.checkpoint
	}
	m, err := methods.New(name, menv)
	if err != nil {
		return nil, err
	}
	if !d.Network {
		if note := largeTaskNote(task, name, job.Options, largeTaskEntries); note != "" {
			said.warn(note)
		}
	}
	// A long forward pass shows its progress (the AFIN methods' network).
	ctx = afin.WithForwardProgress(ctx, newPassProgress(env.stderr, "afin infer: forward pass").report)
	var pt *methods.Point
	err = methods.Run(ctx, m, job, func(p methods.Point) error {
		if p.Stage == "" {
			pt = &p
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pt == nil {
		return nil, fmt.Errorf("method %s returned no result", name)
	}
	if pt.Diagnostics.AFINDiagnostics != nil {
		env.noteKernel()
	}
	// Every warning reaches a person (stderr, whatever the output mode;
	// once, though the method said some before it ran) and a program
	// (diagnostics.warnings).
	if f := pt.Diagnostics.Flags; f != nil {
		for _, w := range f.Warnings {
			said.warn(w)
		}
	}
	return newInferResult(name, task.D, pt), nil
}

// budgetFlag names the flag that sets how many draws a method of a
// budget kind keeps.
func budgetFlag(kind string) string {
	if kind == methods.KindProposals {
		return "--proposals"
	}
	return "--draws"
}

func newInferResult(name string, d int, pt *methods.Point) *inferResult {
	res := &inferResult{Method: name, D: d, Seconds: pt.Seconds, Diagnostics: pt.Diagnostics, Draws: pt.Draws}
	if pt.Draws != nil {
		res.NDraws, res.Weighted = pt.Draws.Len(), pt.Draws.Weighted()
	}
	mean, cov := pt.Mean, pt.Cov
	if mean == nil && pt.Draws != nil {
		mean, cov = pt.Draws.Mean(), pt.Draws.Cov()
	}
	res.Mean, res.Cov = mean, square(cov, d)
	return res
}

// jsonNumber maps non-finite values (which encoding/json rejects) to null.
func jsonNumber(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// loadRunInputs checks what infer and reference read and write before
// they start a possibly long run: the task (given, valid, and small enough
// for a d×d covariance) and the --draws-out path.
func loadRunInputs(env *cliEnv, taskPath, drawsOut string) (*factor.Task, error) {
	if taskPath == "" {
		return nil, badInput(fmt.Errorf("--task is required"))
	}
	task, err := loadTask(env, taskPath)
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

// inferLimits states each limit once, with its reason, quoting the
// constants that enforce it; the error for a task beyond one repeats it.
// The network methods come from the catalog.
func inferLimits() string {
	return fmt.Sprintf(`
limits:
  every task    d ≤ %d; |loc, x, y, true_z| ≤ %g; scales, sigma and df in [%g, %g];
                precision entries |λ| ≤ %g (refused: beyond them float64 overflows);
                warned (stderr, and task_warnings in --json) beyond |values| %g or scales
                outside [%g, %g]: no method was tested there
  every method  d ≤ %d: infer reports a d×d covariance (%.0f GB at d = %d, the task JSON's own bound)
  %s
                refused before any work when the forward pass's predicted peak memory exceeds
                the memory available (it grows with d and N; the message gives both numbers)
`, factor.MaxDim, factor.MaxAbs, factor.MinScale, factor.MaxScale, factor.MaxPrecision,
		float64(factor.TestedAbs), factor.TestedScaleMin, factor.TestedScaleMax,
		maxOutputD, float64(factor.MaxDim)*float64(factor.MaxDim)*8/1e9, factor.MaxDim,
		strings.Join(catalog.NetworkMethods(), ", "))
}

// maxOutputD bounds d for the commands that report a d×d covariance. The
// task JSON allows d up to factor.MaxDim, but a covariance that size is 34 GB
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
func loadTask(env *cliEnv, path string) (*factor.Task, error) {
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
	if path == "-" {
		path = "stdin"
	}
	task, err := parseTaskData(path, data)
	if err != nil {
		return nil, err
	}
	for _, w := range task.Warnings() {
		fmt.Fprintln(env.stderr, "warning: task:", w)
	}
	return task, nil
}

// parseTaskData parses and validates the bytes of a task file (named
// path in errors); any problem is bad input.
func parseTaskData(path string, data []byte) (*factor.Task, error) {
	// Some editors start UTF-8 files with a byte-order mark, which JSON
	// does not allow; it carries no content.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, badInput(fmt.Errorf("reading task: %s is empty", path))
	}
	task, err := factor.ParseTask(data)
	if err == nil {
		return task, nil
	}
	// factor's syntax errors start "task JSON:". For a file that is not
	// JSON at all the decoder's words ("invalid character 'h' looking for
	// beginning of value") say neither which file nor what belongs in it.
	if strings.HasPrefix(err.Error(), "task JSON:") {
		if trimmed[0] != '{' {
			return nil, badInput(fmt.Errorf("task file %s is not JSON (it starts %q); --task wants a task JSON object, {\"d\": ..., \"prior\": {...}, \"factors\": [...]}, as `afin simulate` writes",
				path, firstBytes(trimmed, 24)))
		}
		return nil, badInput(fmt.Errorf("task file %s is not valid JSON: %w", path, err))
	}
	return nil, badInput(err)
}

// firstBytes is data's first line, cut to n bytes, for quoting what a
// file holds instead of what was expected.
func firstBytes(data []byte, n int) string {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[:i]
	}
	if len(data) > n {
		return string(data[:n]) + "…"
	}
	return string(data)
}

// checkDrawsOut fails early, before a long run, when the --draws-out path
// cannot be written.
func checkDrawsOut(path string) error { return checkOutputFile("--draws-out", path) }

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

func printInferSummary(w io.Writer, res *inferResult) error {
	fmt.Fprintf(w, "method %s: d=%d draws=%d weighted=%v seconds=%.4g\n", res.Method, res.D, res.NDraws, res.Weighted, res.Seconds)
	fmt.Fprintf(w, "%6s %12s %12s\n", "coord", "mean", "sd")
	for i, m := range res.Mean {
		fmt.Fprintf(w, "%6d %12.5g %12.5g\n", i+1, m, sqrt(max(res.Cov[i][i], 0)))
	}
	// Through JSON, so the text shows the same names and non-finite
	// tokens; sorted, so the same run prints the same text.
	data, err := json.Marshal(res.Diagnostics)
	if err != nil {
		return fmt.Errorf("encoding diagnostics: %w", err)
	}
	var dg map[string]any
	if err := json.Unmarshal(data, &dg); err != nil {
		return fmt.Errorf("decoding diagnostics: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(dg)) {
		if dg[k] == nil {
			// A null (a statistic that cannot be computed, e.g. an ESS
			// of too few draws) reads as in JSON, not as Go's <nil>.
			fmt.Fprintf(w, "%s: null\n", k)
			continue
		}
		fmt.Fprintf(w, "%s: %v\n", k, dg[k])
	}
	return nil
}

// prefixed returns each line with p before it.
func prefixed(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}

func sqrt(x float64) float64 { return math.Sqrt(x) }
