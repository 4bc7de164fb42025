package methods

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// External methods: `--method exec:NAME` runs a command configured under
// NAME in a methods file. For each budget of its ladder afin writes the
// task JSON to a fresh scratch directory, runs the command there with a
// timeout and reads back a draw CSV (header z1..zd, plus w when the
// method's draws are weighted) and, optionally, a JSON of the method's own
// seconds and diagnostics. The protocol is documented in README
// ("External methods").

// ExecPrefix starts the name of every external method.
const ExecPrefix = "exec:"

func init() {
	mustRegister(Descriptor{
		Entry: catalog.Entry{
			Name: ExecPrefix, Prefix: true, Summary: "an external method: a command configured under NAME in a methods file",
			Family: catalog.External, Rank: 100,
		},
		New:      newExec,
		AnySuite: true,
	})
}

// ErrExternal marks an external method that crashed, hung past its
// timeout or wrote malformed output; its message carries the reason and
// the tail of the command's stderr. A benchmark records the unit as failed
// and goes on.
var ErrExternal = errors.New("external method failed")

// MethodsFileEnv names the environment variable that points at the
// methods file when no --methods-file is given.
const MethodsFileEnv = "AFIN_METHODS_FILE"

// defaultExecTimeout bounds one budget point of an external method whose
// entry gives no timeout: long enough for real samplers, short enough
// that a hung command cannot stall a suite overnight.
const defaultExecTimeout = 10 * time.Minute

// stderrTail is how much of a failed command's output an error keeps.
const stderrTail = 2000

// MethodsFile is the JSON file that configures external methods.
type MethodsFile struct {
	Methods map[string]ExecSpec `json:"methods"`
}

// ExecSpec configures one external method.
type ExecSpec struct {
	// Command is the argv. The placeholders {task}, {draws},
	// {diagnostics}, {budget}, {seed} and {d} are replaced in every
	// argument; a relative program path is taken from the methods file's
	// directory, which is also the working directory.
	Command []string `json:"command"`
	// BudgetKind is the budget the method's ladder counts: draws (the
	// default), steps or proposals.
	BudgetKind string `json:"budget_kind,omitempty"`
	// BudgetFlag, when set, is appended with the budget ("--draws 400").
	BudgetFlag string `json:"budget_flag,omitempty"`
	// Weighted: the draw CSV has a w column (self-normalised weights).
	Weighted bool `json:"weighted,omitempty"`
	// Timeout per budget point as a Go duration ("90s"); default 10m.
	Timeout string `json:"timeout,omitempty"`
}

// ExecDiagnostics are what an external point reports: the wall-clock of
// the command and, when the method reports them, its own seconds and
// numeric diagnostics (kept in results records under their own names).
type ExecDiagnostics struct {
	WallSeconds     records.Num            `json:"wall_seconds"`
	ReportedSeconds *records.Num           `json:"reported_seconds,omitempty"`
	Reported        map[string]records.Num `json:"reported,omitempty"`
}

// execReport is the optional JSON an external method writes to
// {diagnostics}.
type execReport struct {
	Seconds     *float64           `json:"seconds"`
	Diagnostics map[string]float64 `json:"diagnostics"`
}

// execMethod is one external method, resolved from its methods file.
type execMethod struct {
	name    string // NAME of exec:NAME
	spec    ExecSpec
	dir     string // the methods file's directory: the working directory
	timeout time.Duration
}

func (m *execMethod) Name() string              { return ExecPrefix + m.name }
func (m *execMethod) Kind() string              { return m.spec.BudgetKind }
func (m *execMethod) Slots(ladder []int) []Slot { return ladderSlots(m.spec.BudgetKind, ladder) }

// methodsFilePath is where an external method is looked up: the Env's
// file (the CLI fills it from --methods-file or $AFIN_METHODS_FILE).
func (env *Env) methodsFilePath() string {
	if env == nil {
		return ""
	}
	return env.MethodsFile
}

// newExec builds exec:NAME from the methods file. Every problem with the
// file or the entry is bad input, reported before any unit runs.
func newExec(full string, env *Env) (Method, error) {
	name := strings.TrimPrefix(full, ExecPrefix)
	path := env.methodsFilePath()
	if path == "" {
		return nil, badInput("--method %s: no methods file (give --methods-file FILE or set %s)", full, MethodsFileEnv)
	}
	mf, err := ReadMethodsFile(path)
	if err != nil {
		return nil, err
	}
	spec, ok := mf.Methods[name]
	if !ok {
		return nil, badInput("--method %s: %s has no method %q (it has: %s)", full, path, name, strings.Join(sortedKeys(mf.Methods), ", "))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("methods file: %w", err)
	}
	m := &execMethod{name: name, spec: spec, dir: filepath.Dir(abs), timeout: defaultExecTimeout}
	if m.spec.BudgetKind == "" {
		m.spec.BudgetKind = KindDraws
	}
	if spec.Timeout != "" {
		if m.timeout, err = time.ParseDuration(spec.Timeout); err != nil || m.timeout <= 0 {
			return nil, badInput("%s: methods.%s.timeout: want a positive duration like \"90s\", got %q", path, name, spec.Timeout)
		}
	}
	return m, nil
}

// ReadMethodsFile reads and checks a methods file strictly: unknown keys,
// an empty command or an unknown budget kind are refused with the JSON
// path of the problem.
func ReadMethodsFile(path string) (*MethodsFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("methods file: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var mf MethodsFile
	if err := dec.Decode(&mf); err != nil {
		return nil, badInput("%s: %v", path, err)
	}
	if len(mf.Methods) == 0 {
		return nil, badInput("%s: methods: no external methods defined", path)
	}
	for _, name := range sortedKeys(mf.Methods) {
		s := mf.Methods[name]
		switch {
		case name == "" || strings.ContainsAny(name, ",: \t"):
			return nil, badInput("%s: methods: name %q must be non-empty without commas, colons or spaces", path, name)
		case len(s.Command) == 0 || s.Command[0] == "":
			return nil, badInput("%s: methods.%s.command: must be a non-empty argv list", path, name)
		case s.BudgetKind != "" && !slices.Contains([]string{KindDraws, KindSteps, KindProposals}, s.BudgetKind):
			return nil, badInput("%s: methods.%s.budget_kind: want draws, steps or proposals, got %q", path, name, s.BudgetKind)
		}
	}
	return &mf, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Run runs the command once per budget of the ladder.
func (m *execMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	if err := checkLadder(m.spec.BudgetKind, job.Ladder, 1); err != nil {
		return err
	}
	for _, b := range job.Ladder {
		pt, err := m.runOnce(ctx, job, b)
		if err != nil {
			return err
		}
		if err := emit(pt); err != nil {
			return err
		}
	}
	return nil
}

// execFiles are the paths of one invocation's scratch directory.
type execFiles struct{ task, draws, diagnostics string }

// runOnce runs the command at one budget and reads its output.
func (m *execMethod) runOnce(ctx context.Context, job *Job, budget int) (Point, error) {
	scratch, err := os.MkdirTemp("", "afin-exec-")
	if err != nil {
		return Point{}, fmt.Errorf("%s: scratch directory: %w", m.Name(), err)
	}
	defer os.RemoveAll(scratch)
	f := execFiles{
		task:        filepath.Join(scratch, "task.json"),
		draws:       filepath.Join(scratch, "draws.csv"),
		diagnostics: filepath.Join(scratch, "diagnostics.json"),
	}
	data, err := factor.MarshalTask(job.Task)
	if err != nil {
		return Point{}, fmt.Errorf("%s: writing the task: %w", m.Name(), err)
	}
	if err := os.WriteFile(f.task, data, 0o644); err != nil {
		return Point{}, fmt.Errorf("%s: writing the task: %w", m.Name(), err)
	}
	wall, out, err := m.execute(ctx, job, budget, f)
	if err != nil {
		return Point{}, err
	}
	fail := func(format string, args ...any) (Point, error) {
		return Point{}, fmt.Errorf("%w: %s at %s %d: %s%s", ErrExternal, m.Name(), m.spec.BudgetKind, budget, fmt.Sprintf(format, args...), tailNote(out))
	}
	draws, err := m.readDraws(f.draws, job.Task.D)
	if err != nil {
		return fail("%v", err)
	}
	diag := &ExecDiagnostics{WallSeconds: records.Num(wall)}
	secs := wall
	rep, err := readExecReport(f.diagnostics)
	if err != nil {
		return fail("%v", err)
	}
	if rep != nil {
		if rep.Seconds != nil {
			secs = *rep.Seconds
			diag.ReportedSeconds = (*records.Num)(rep.Seconds)
		}
		if len(rep.Diagnostics) > 0 {
			diag.Reported = map[string]records.Num{}
			for k, v := range rep.Diagnostics {
				diag.Reported[k] = records.Num(v)
			}
		}
	}
	return Point{Slot: Slot{Kind: m.spec.BudgetKind, Budget: budget}, Draws: draws, Seconds: secs,
		Diagnostics: Diagnostics{ExecDiagnostics: diag}}, nil
}

// execute runs the command with its timeout and returns its wall-clock
// seconds and the tail of its combined output.
func (m *execMethod) execute(ctx context.Context, job *Job, budget int, f execFiles) (float64, string, error) {
	repl := strings.NewReplacer("{task}", f.task, "{draws}", f.draws, "{diagnostics}", f.diagnostics,
		"{budget}", strconv.Itoa(budget), "{seed}", strconv.FormatUint(job.Seed, 10), "{d}", strconv.Itoa(job.Task.D))
	argv := make([]string, 0, len(m.spec.Command)+2)
	for _, a := range m.spec.Command {
		argv = append(argv, repl.Replace(a))
	}
	if m.spec.BudgetFlag != "" {
		argv = append(argv, m.spec.BudgetFlag, strconv.Itoa(budget))
	}
	prog := argv[0]
	if strings.Contains(prog, "/") && !filepath.IsAbs(prog) {
		prog = filepath.Join(m.dir, prog)
	}
	runCtx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, prog, argv[1:]...)
	cmd.Dir = m.dir
	cmd.Env = append(os.Environ(),
		"AFIN_TASK="+f.task, "AFIN_DRAWS_OUT="+f.draws, "AFIN_DIAGNOSTICS_OUT="+f.diagnostics,
		"AFIN_BUDGET="+strconv.Itoa(budget), "AFIN_BUDGET_KIND="+m.spec.BudgetKind,
		"AFIN_SEED="+strconv.FormatUint(job.Seed, 10), "AFIN_D="+strconv.Itoa(job.Task.D))
	tail := &tailBuffer{max: stderrTail}
	cmd.Stdout, cmd.Stderr = tail, tail
	killGroup(cmd)
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start).Seconds()
	out := tail.String()
	switch {
	case ctx.Err() != nil:
		return 0, out, ctx.Err() // interrupted: not the method's fault
	case runCtx.Err() != nil:
		return 0, out, fmt.Errorf("%w: %s at %s %d: timed out after %s%s", ErrExternal, m.Name(), m.spec.BudgetKind, budget, m.timeout, tailNote(out))
	case err != nil:
		return 0, out, fmt.Errorf("%w: %s at %s %d: %v%s", ErrExternal, m.Name(), m.spec.BudgetKind, budget, err, tailNote(out))
	}
	return wall, out, nil
}

// readDraws reads the command's draw CSV and checks it against the task
// and the methods file: dimension, weights present exactly when declared,
// every number finite.
func (m *execMethod) readDraws(path string, d int) (*posterior.Draws, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("no draw CSV written to {draws} ($AFIN_DRAWS_OUT)")
	}
	defer fh.Close()
	draws, err := posterior.ReadCSV(fh)
	if err != nil {
		return nil, fmt.Errorf("draw CSV: %v", err)
	}
	switch {
	case draws.D != d:
		return nil, fmt.Errorf("draw CSV has %d coordinates, the task has d = %d", draws.D, d)
	case draws.Len() == 0:
		return nil, fmt.Errorf("draw CSV has no rows")
	case m.spec.Weighted && !draws.Weighted():
		return nil, fmt.Errorf("methods file says weighted, but the draw CSV has no w column")
	case !m.spec.Weighted && draws.Weighted():
		return nil, fmt.Errorf("draw CSV has a w column, but the methods file does not say weighted: true")
	}
	for i, v := range draws.Z {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("draw CSV row %d: z%d is %v", i/d+1, i%d+1, v)
		}
	}
	if draws.Weighted() {
		if err := normaliseWeights(draws.W); err != nil {
			return nil, err
		}
	}
	return draws, nil
}

// normaliseWeights rescales weights to sum to one, refusing negative,
// non-finite or all-zero weights.
func normaliseWeights(w []float64) error {
	sum := 0.0
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("draw CSV row %d: weight %v must be finite and ≥ 0", i+1, v)
		}
		sum += v
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return fmt.Errorf("draw CSV: weights sum to %v", sum)
	}
	for i := range w {
		w[i] /= sum
	}
	return nil
}

// readExecReport reads the optional diagnostics JSON; nil when the
// command wrote none.
func readExecReport(path string) (*execReport, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("diagnostics JSON: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var rep execReport
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("diagnostics JSON (want {\"seconds\": s, \"diagnostics\": {name: number}}): %v", err)
	}
	if s := rep.Seconds; s != nil && (!(*s >= 0) || math.IsInf(*s, 0)) {
		return nil, fmt.Errorf("diagnostics JSON: seconds must be finite and ≥ 0, got %v", *s)
	}
	return &rep, nil
}

// tailNote formats a command's output tail for an error message.
func tailNote(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return " (no output)"
	}
	return "; output tail: " + strings.Join(strings.Fields(out), " ")
}

// tailBuffer keeps the last max bytes written to it; the command's
// stdout and stderr share one, so the error shows them in order.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
