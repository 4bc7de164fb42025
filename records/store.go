package records

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/afin-bench/afin/internal/atomicfile"
)

// Record is one line of the results store: one (suite, setting, seed,
// method, variant, budget) point with its metrics against the reference,
// its wall-clock cost, the method's diagnostics and provenance.
type Record struct {
	Suite      string `json:"suite"`
	Setting    string `json:"setting"`
	Group      string `json:"group"`
	Prior      string `json:"prior,omitempty"`
	Likelihood string `json:"likelihood,omitempty"`
	D          int    `json:"d"`
	N          int    `json:"n"`
	Seed       uint64 `json:"seed"`

	Method  string `json:"method"`
	Variant string `json:"variant,omitempty"`
	// Stage is "" for a method's own output and "proposal" for the
	// proposal an SNIS method reweights (the paper's stars).
	Stage      string `json:"stage,omitempty"`
	BudgetKind string `json:"budget_kind"` // draws, steps, proposals
	Budget     int    `json:"budget"`
	// Error is why the unit failed at this point ("" for a scored point).
	// A failed record carries no m1, m2 or sw2 on disk (they read back as
	// NaN, so a caller that forgets to filter cannot average a 0) and is
	// superseded by a successful record of the same key.
	Error string `json:"error,omitempty"`

	M1      Num `json:"m1"`
	M2      Num `json:"m2"`
	SW2     Num `json:"sw2"`
	Seconds Num `json:"seconds"`
	// CPUSeconds is the process CPU time the unit has used from its start
	// through this point's scoring (its method's work, scoring and GC),
	// beside Seconds, the method's own figure: a unit's last record
	// carries its whole cost, which `afin bench --estimate`'s cost model
	// is fitted to. CPUShared says another unit ran in the process
	// meanwhile (--workers > 1), so the figure is an equal share of the
	// process's CPU, not the unit's own. TargetCPUSeconds is the CPU time
	// of building the task and its reference (small when the reference
	// was cached), the same on every record of the task. All three are 0
	// in records written before they existed, and CPUSeconds is NaN
	// where the system has no CPU clock.
	CPUSeconds       Num  `json:"cpu_seconds,omitempty"`
	CPUShared        bool `json:"cpu_shared,omitempty"`
	TargetCPUSeconds Num  `json:"target_cpu_seconds,omitempty"`

	// Marginals compares the point's per-coordinate means and sds with
	// the reference's (nil in records written before it existed, and in
	// failed ones); `afin report trust` judges accuracy by it.
	Marginals *Marginals `json:"marginals,omitempty"`

	Diagnostics map[string]Num `json:"diagnostics,omitempty"`
	// NotConverged is why a VI fit failed its convergence checks ("" when
	// it passed or was not assessed); OutsideSupport why the task lies
	// outside the AFIN checkpoint's training support ("" when inside).
	// The report marks and counts both.
	NotConverged   string `json:"not_converged,omitempty"`
	OutsideSupport string `json:"outside_support,omitempty"`
	// Flags are every flag the point raised, by name (not_converged,
	// outside_support, poor_fit, degenerate, sampler, and any added
	// later), with why; Warnings the same in words, as `afin infer`
	// prints them. The report counts them per method and `afin check
	// --fail-on-warnings` fails on them. Records written before these
	// fields carry only the two above.
	Flags          map[string]string `json:"flags,omitempty"`
	Warnings       []string          `json:"warnings,omitempty"`
	MethodSettings map[string]any    `json:"method_settings,omitempty"`
	Reference      RefInfo           `json:"reference"`
	Provenance     Provenance        `json:"provenance"`
}

// Marginals are a point's worst per-coordinate errors in units of the
// reference's marginal sds: M1 and M2 pool coordinates and scales, so a
// narrow coordinate that is many sds off can hide behind a wide one.
type Marginals struct {
	// MaxMeanErr is max_i |μ_i − μ_ref,i| / sd_ref,i.
	MaxMeanErr Num `json:"max_mean_err_sd"`
	// MinSDRatio and MaxSDRatio bound sd_i / sd_ref,i over coordinates.
	MinSDRatio Num `json:"min_sd_ratio"`
	MaxSDRatio Num `json:"max_sd_ratio"`
}

// RefInfo says which reference a record was scored against.
type RefInfo struct {
	Kind   string `json:"kind"` // exact or nuts
	Draws  int    `json:"draws"`
	Warmup int    `json:"warmup,omitempty"`
	Hash   string `json:"hash,omitempty"` // reference cache key

	Rhat         float64 `json:"rhat,omitempty"`
	ESS          float64 `json:"ess_bulk,omitempty"`
	NotConverged bool    `json:"not_converged,omitempty"`
}

// Failed reports whether r records a failure rather than a scored point.
func (r *Record) Failed() bool { return r.Error != "" }

// Key identifies a record; the reader keeps one record per key.
func (r *Record) Key() string {
	return fmt.Sprintf("%s|%s|%d|%s|%s|%s|%s|%d", r.Suite, r.Setting, r.Seed, r.Method, r.Variant, r.Stage, r.BudgetKind, r.Budget)
}

// UnitKey is the key of the unit (setting, seed, method, variant) the
// record belongs to.
func (r *Record) UnitKey() string {
	return UnitKey(r.Suite, r.Setting, r.Seed, r.Method, r.Variant)
}

// UnitKey names the unit (suite, setting, seed, method, variant); every
// record of one unit shares it.
func UnitKey(suite, setting string, seed uint64, method, variant string) string {
	return fmt.Sprintf("%s|%s|%d|%s|%s", suite, setting, seed, method, variant)
}

// Loaded is what a results directory holds: its records, deduplicated,
// and what the reader had to repair or leave out, so callers can show it.
type Loaded struct {
	// Records holds scored records and failed ones (Record.Failed): a
	// caller computing metrics leaves the failed ones out and shows them.
	Records []Record
	// Warnings are lines for the user: torn fragments dropped, a last
	// record without its newline, identical duplicates, mixed profiles or
	// commits. Each carries its count.
	Warnings []string
	// Conflicts counts keys stored twice with different numbers (two runs
	// of one unit); ConflictExample names the first. Report and gate refuse
	// such a directory rather than let path order pick a winner.
	Conflicts       int
	ConflictExample string
	// Superseded counts failed records a rerun replaced (a later success
	// or a newer failure of the same key); they are not in Records.
	Superseded int
	// Mixed names, one line per suite and field, the profiles, commits or
	// checkpoints the records mix (also in Warnings): a gate that compares
	// such a directory with a baseline compares unlike runs.
	Mixed []string
	// Where is the file:line of each kept record, by Key, for messages
	// about a record (Implausible).
	Where map[string]string
	// Plans are the run plans found beside the results (plan.go): what
	// the directory should hold when every run is done.
	Plans []*Plan
}

// ErrConflict: a results directory holds one key twice with different
// results (two runs of one unit); report, check and bench refuse it.
var ErrConflict = errors.New("conflicting duplicate records")

// ConflictError is the error report, check and bench (opening a store)
// give for conflicting duplicates (nil when there are none), naming the
// first key and both its lines.
func (l *Loaded) ConflictError() error {
	if l.Conflicts == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d record(s) stored twice with different results (first: %s); remove the stray file or rerun the unit into a fresh directory", ErrConflict, l.Conflicts, l.ConflictExample)
}

// ReadDir reads every *.jsonl file under dir and returns its records; see
// Load for the checks. Warnings and conflicts are dropped: callers that
// show results to a user call Load.
func ReadDir(dir string) ([]Record, error) {
	l, err := Load(dir)
	if err != nil {
		return nil, err
	}
	return l.Records, nil
}

// Load reads every *.jsonl file under dir (subdirectories included,
// hidden ones skipped), in path order. Every line must be a valid record
// (Validate); a line that is not one is an error naming file and line,
// except a torn write (a line starting as a record that does not parse),
// which is dropped with a warning, and a record that follows a torn write
// on the same line, which is recovered. Duplicates (same Key) are kept
// once: a success over a failure, the latest of two failures (a rerun,
// counted in Superseded); successes with the same metrics are counted in
// a warning (the first read kept, whatever their timings), differing ones
// in Conflicts.
func Load(dir string) (*Loaded, error) {
	files, err := resultFiles(dir)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Where: map[string]string{}}
	first := map[string]int{}
	firstAt := map[string]string{}
	identical, retimed := 0, 0
	for _, f := range files {
		sc, err := scanFile(f)
		if err != nil {
			return nil, err
		}
		l.Warnings = append(l.Warnings, sc.warnings(f)...)
		for j, r := range sc.recs {
			k := r.Key()
			at := fmt.Sprintf("%s:%d", f, sc.lines[j])
			i, seen := first[k]
			if !seen {
				first[k] = len(l.Records)
				firstAt[k] = at
				l.Where[k] = at
				l.Records = append(l.Records, r)
				continue
			}
			switch merge(&l.Records[i], &r) {
			case mergeSuperseded:
				l.Superseded++
				if l.Records[i].Provenance == r.Provenance && l.Records[i].Error == r.Error {
					l.Where[k] = fmt.Sprintf("%s:%d", f, sc.lines[j])
				}
			case mergeIdentical:
				identical++
			case mergeRetimed:
				retimed++
			case mergeConflict:
				if l.Conflicts == 0 {
					l.ConflictExample = fmt.Sprintf("%s at %s and %s", k, firstAt[k], at)
				}
				l.Conflicts++
			}
		}
	}
	if identical > 0 {
		l.Warnings = append(l.Warnings, fmt.Sprintf("%d duplicate record(s) with identical results counted once", identical))
	}
	if retimed > 0 {
		l.Warnings = append(l.Warnings, fmt.Sprintf("%d duplicate record(s) with the same metrics and different timings (a unit run twice): the first read of each is kept", retimed))
	}
	l.Mixed = mixWarnings(l.Records)
	l.Warnings = append(l.Warnings, l.Mixed...)
	if l.Plans, err = ReadPlans(dir); err != nil {
		return nil, err
	}
	return l, nil
}

// Outcomes of merging a duplicate into the record already kept.
const (
	mergeSuperseded = iota // a failure gave way (to a success or a newer failure)
	mergeIdentical         // two equal successes: a copied file
	mergeRetimed           // two successes that differ only in timing: one unit run twice
	mergeConflict          // two different successes
)

// merge folds a later-read duplicate b into the kept record a. A failure
// is an outcome a rerun may replace (--retry-failed appends the rerun's
// record after it), so a success wins over any failure and the newer of
// two failures (by provenance time, ties to the later read) is kept; only
// two successes that differ are a conflict.
func merge(a, b *Record) int {
	switch {
	case a.Failed() && !b.Failed():
		*a = *b
		return mergeSuperseded
	case b.Failed() && !a.Failed():
		return mergeSuperseded
	case a.Failed() && b.Failed():
		if b.Provenance.Time >= a.Provenance.Time {
			*a = *b
		}
		return mergeSuperseded
	case !sameResult(a, b):
		return mergeConflict
	case sameNum(a.Seconds, b.Seconds):
		return mergeIdentical
	}
	return mergeRetimed
}

// Failures returns the failed records l holds (those no success of the
// same key superseded).
func (l *Loaded) Failures() []Record {
	var out []Record
	for _, r := range l.Records {
		if r.Failed() {
			out = append(out, r)
		}
	}
	return out
}

// resultFiles lists the *.jsonl files under dir, sorted; an absent dir
// has none.
func resultFiles(dir string) ([]string, error) {
	files, err := filesUnder(dir, ".jsonl")
	if err != nil {
		return nil, fmt.Errorf("reading results directory: %w", err)
	}
	return files, nil
}

// filesUnder lists the files under dir whose names end in suffix, sorted,
// subdirectories included and hidden ones skipped; an absent dir has none.
func filesUnder(dir, suffix string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), suffix) {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// ErrInvalidRecord: a line of a results file is not a valid record (not
// JSON, or JSON that breaks the schema) and is not a torn write either.
// The error that carries it names the file and the line; it is bad input
// (a stray or hand-edited file), not a failure of the reader.
var ErrInvalidRecord = errors.New("not a valid results record")

// scan is one results file as read: its records (with their raw lines,
// for a repair) and what was wrong with it.
type scan struct {
	recs      []Record
	raw       [][]byte
	lines     []int // the line each record was read from, for messages
	torn      int   // torn fragments dropped (a salvaged record counts too)
	tornTail  bool  // the last line was a torn write without newline
	noNewline bool  // the last line was a whole record without newline
}

// dirty reports whether a rewrite of the file would change it.
func (s *scan) dirty() bool { return s.torn > 0 || s.tornTail || s.noNewline }

func (s *scan) warnings(path string) []string {
	var out []string
	if s.torn > 0 {
		out = append(out, fmt.Sprintf("%s: %d torn fragment(s) dropped (an interrupted or concurrent write; `afin bench` on this directory repairs the file)", path, s.torn))
	}
	if s.tornTail {
		out = append(out, fmt.Sprintf("%s: torn last line dropped (a run killed mid-write)", path))
	}
	if s.noNewline {
		out = append(out, fmt.Sprintf("%s: file lacks a final newline; its last record was read", path))
	}
	return out
}

// add classifies one non-empty line: a record; a torn write glued to the
// record another append wrote after it (the record is kept); a torn write
// alone; or, as an error, a whole line that is not a valid record.
func (sc *scan) add(line []byte, lineNo int, terminated bool) error {
	r, err := decodeRecord(line)
	if err == nil {
		sc.recs, sc.raw, sc.lines = append(sc.recs, r), append(sc.raw, line), append(sc.lines, lineNo)
		sc.noNewline = !terminated
		return nil
	}
	if json.Valid(line) {
		return err // whole JSON that breaks the schema
	}
	if r, ok := salvage(line); ok {
		sc.torn++
		sc.recs, sc.raw = append(sc.recs, r), append(sc.raw, line[bytes.LastIndex(line, recordPrefix):])
		sc.lines = append(sc.lines, lineNo)
		sc.noNewline = !terminated
		return nil
	}
	if !bytes.HasPrefix(line, recordPrefix) && !bytes.HasPrefix(recordPrefix, line) {
		return err // foreign text
	}
	if terminated {
		sc.torn++
	} else {
		sc.tornTail = true
	}
	return nil
}

// scanFile parses one results file.
func scanFile(path string) (*scan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	return scanBytes(path, data)
}

// scanBytes parses the content of results file path.
func scanBytes(path string, data []byte) (*scan, error) {
	sc := &scan{}
	for lineNo := 1; len(data) > 0; lineNo++ {
		line, rest, terminated := bytes.Cut(data, []byte{'\n'})
		data = rest
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := sc.add(line, lineNo, terminated); err != nil {
			return nil, fmt.Errorf("%s:%d: %w: %w", path, lineNo, ErrInvalidRecord, err)
		}
	}
	return sc, nil
}

// Store appends records to one file of a results directory and knows
// which records every file of the directory already holds. It holds its
// writer's locks until Close: one writer per directory, or the shards of
// one plan, each in its own file.
type Store struct {
	mu   sync.Mutex
	f    *os.File
	lock *dirLock
	path string
	// have maps each stored key to whether its record is a success
	// (true) or a failure (false).
	have map[string]bool
	// Repaired says what opening the store fixed in its file ("" when
	// nothing): torn fragments dropped, a missing final newline added.
	Repaired string
	profiles map[string]int // records per profile when opened
}

// OtherProfiles counts the records the directory held when opened that
// were written under a profile other than profile: a run that adds to
// them makes a directory report and check will warn about.
func (s *Store) OtherProfiles(profile string) int {
	n := 0
	for p, c := range s.profiles {
		if p != profile {
			n += c
		}
	}
	return n
}

// OpenStore opens the results file name inside dir as the directory's
// only writer: OpenStoreFor with an unsharded Writer.
func OpenStore(dir, name string) (*Store, error) { return OpenStoreFor(dir, name, Writer{}) }

// OpenStoreFor opens (creating dir if needed) the results file name
// inside dir for appending, after registering w as a writer of dir
// (ErrLocked when another process writes name, or writes dir under
// another plan: see PlanLockFile). Torn fragments of that file, wherever
// they sit, are cut out first and a missing final newline is added, so
// the next record starts on a fresh line. The records of every *.jsonl
// file of dir count as done. A directory holding conflicting duplicates
// (ErrConflict) is refused, as report and check refuse it, and so is one
// any of admit refuses (see CheckResume); a refused open creates nothing.
func OpenStoreFor(dir, name string, w Writer, admit ...func(*Loaded) error) (*Store, error) {
	if !strings.HasSuffix(name, ".jsonl") {
		return nil, fmt.Errorf("results file %q must end in .jsonl", name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	lock, created, err := lockDir(dir, name, w)
	if err != nil {
		return nil, err
	}
	s, err := openLocked(dir, name, admit)
	if err != nil {
		// A refused open leaves nothing behind: the lock files this call
		// created go (openLocked creates the results file last, after
		// every check). A directory refused for its content refuses
		// every writer, so none is left holding an unlinked lock.
		for _, p := range created {
			os.Remove(p)
		}
		lock.Close()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

func openLocked(dir, name string, admit []func(*Loaded) error) (*Store, error) {
	path := filepath.Join(dir, name)
	repaired := ""
	sc, err := scanFile(path)
	switch {
	case err == nil && sc.dirty():
		repaired = strings.Join(sc.warnings(path), "; ")
		if err := rewrite(path, sc.raw); err != nil {
			return nil, err
		}
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	l, err := Load(dir)
	if err != nil {
		return nil, err
	}
	if err := l.ConflictError(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	for _, check := range admit {
		if err := check(l); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening results file: %w", err)
	}
	s := &Store{f: f, path: path, have: map[string]bool{}, Repaired: repaired, profiles: map[string]int{}}
	for _, r := range l.Records {
		s.have[r.Key()] = !r.Failed()
		s.profiles[r.Provenance.Profile]++
	}
	return s, nil
}

// rewrite replaces path by its good lines, atomically, so a crash leaves
// either the old or the repaired file.
func rewrite(path string, lines [][]byte) error {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	if err := atomicfile.WriteFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("repairing results file: %w", err)
	}
	return nil
}

// Path is the file this store appends to.
func (s *Store) Path() string { return s.path }

// Has reports whether a record with this key is already stored, a
// success or a failure.
func (s *Store) Has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.have[key]
	return ok
}

// Succeeded reports whether a successful record with this key is stored.
func (s *Store) Succeeded(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.have[key]
}

// Append writes r as one JSON line with a single write and fsyncs it, so
// a crash leaves either the whole record or a torn tail that the next
// open drops. A record whose key is already stored as a success is
// skipped; a failure may be followed by a rerun's record (a success, or
// a new failure with its own reason), which the reader then prefers.
func (s *Store) Append(r *Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding record %s: %w", r.Key(), err)
	}
	line = append(line, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	k := r.Key()
	if s.have[k] {
		return nil
	}
	if _, err := s.f.Write(line); err != nil {
		return fmt.Errorf("writing %s: %w", s.path, err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", s.path, err)
	}
	s.have[k] = !r.Failed()
	return nil
}

// Close closes the results file and releases the directory's lock.
func (s *Store) Close() error {
	err := s.f.Close()
	if s.lock != nil {
		s.lock.Close()
	}
	return err
}

// WriteRecords writes records as JSON lines to w (used by tests and tools
// that rewrite stores).
func WriteRecords(w io.Writer, recs []Record) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Num is a float64 that survives JSON when it is not finite. NaN, +Inf
// and −Inf (a failed fit, all-zero SNIS weights, a Pareto k̂ that cannot
// be fitted) are written as the JSON strings "NaN", "Inf" and "-Inf" and
// read back as such, so one bad point never makes a record unwritable and
// an infinite k̂ stays distinct from a missing one. null, which records
// written before these tokens hold for every non-finite value, reads as
// NaN (missing).
type Num float64

// Tokens of the non-finite values.
const (
	NaNToken    = "NaN"
	PosInfToken = "Inf"
	NegInfToken = "-Inf"
)

// MarshalJSON writes "NaN", "Inf" or "-Inf" for the non-finite values.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte(`"` + NaNToken + `"`), nil
	case math.IsInf(f, 1):
		return []byte(`"` + PosInfToken + `"`), nil
	case math.IsInf(f, -1):
		return []byte(`"` + NegInfToken + `"`), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads a number, one of the three tokens, or null (NaN).
func (n *Num) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null", `"` + NaNToken + `"`:
		*n = Num(math.NaN())
		return nil
	case `"` + PosInfToken + `"`:
		*n = Num(math.Inf(1))
		return nil
	case `"` + NegInfToken + `"`:
		*n = Num(math.Inf(-1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("not a number, null, %q, %q or %q: %s", NaNToken, PosInfToken, NegInfToken, b)
	}
	*n = Num(f)
	return nil
}

// Metric is x as a record's metric (m1, m2, sw2): a metric that
// overflowed cannot be scored and is stored as NaN, as Validate takes a
// metric that is finite or NaN only.
func Metric(x float64) Num {
	if math.IsInf(x, 0) {
		return Num(math.NaN())
	}
	return Num(x)
}

// ParseToken reads a non-finite token ("NaN", "Inf", "-Inf") as a float
// (ok false for any other string): for readers that decode records' JSON
// into untyped values.
func ParseToken(s string) (float64, bool) {
	switch s {
	case NaNToken:
		return math.NaN(), true
	case PosInfToken:
		return math.Inf(1), true
	case NegInfToken:
		return math.Inf(-1), true
	}
	return 0, false
}
