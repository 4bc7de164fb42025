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

	M1      Num `json:"m1"`
	M2      Num `json:"m2"`
	SW2     Num `json:"sw2"`
	Seconds Num `json:"seconds"`

	Diagnostics    map[string]Num `json:"diagnostics,omitempty"`
	MethodSettings map[string]any `json:"method_settings,omitempty"`
	Reference      RefInfo        `json:"reference"`
	Provenance     Provenance     `json:"provenance"`
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

// Key identifies a record; a store holds at most one record per key.
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

// ReadDir reads every *.jsonl file under dir (subdirectories included,
// hidden ones skipped), in path order, and returns the records with
// duplicates (same Key) removed, the first kept. A torn last line (a crash
// mid-write) is skipped; a malformed line anywhere else is an error,
// because it means the file is not a results file.
func ReadDir(dir string) ([]Record, error) {
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
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".jsonl") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading results directory: %w", err)
	}
	sort.Strings(files)
	seen := map[string]bool{}
	var out []Record
	for _, f := range files {
		recs, _, err := readFile(f)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			k := r.Key()
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// readFile parses one results file. good is the byte length of its
// complete, parsed prefix: everything after it is a torn tail.
func readFile(path string) (recs []Record, good int64, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, fmt.Errorf("reading results: %w", err)
	}
	lineNo := 0
	for len(data[good:]) > 0 {
		rest := data[good:]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			// No newline: the last write was cut short. Drop it.
			break
		}
		lineNo++
		line := bytes.TrimSpace(rest[:nl])
		if len(line) > 0 {
			var r Record
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, 0, fmt.Errorf("%s:%d: not a results record: %w", path, lineNo, err)
			}
			recs = append(recs, r)
		}
		good += int64(nl + 1)
	}
	return recs, good, nil
}

// Store appends records to one file of a results directory and knows
// which records every file of the directory already holds.
type Store struct {
	mu   sync.Mutex
	f    *os.File
	path string
	have map[string]bool
}

// OpenStore opens (creating dir if needed) the results file name inside
// dir for appending. A torn tail of that file is cut off first, so the
// next record starts on a fresh line. The records of every *.jsonl file of
// dir count as done.
func OpenStore(dir, name string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	if !strings.HasSuffix(name, ".jsonl") {
		return nil, fmt.Errorf("results file %q must end in .jsonl", name)
	}
	path := filepath.Join(dir, name)
	if _, good, err := readFile(path); err == nil {
		if st, err := os.Stat(path); err == nil && st.Size() > good {
			if err := os.Truncate(path, good); err != nil {
				return nil, fmt.Errorf("dropping torn record of %s: %w", path, err)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	recs, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening results file: %w", err)
	}
	s := &Store{f: f, path: path, have: map[string]bool{}}
	for _, r := range recs {
		s.have[r.Key()] = true
	}
	return s, nil
}

// Path is the file this store appends to.
func (s *Store) Path() string { return s.path }

// Has reports whether a record with this key is already stored.
func (s *Store) Has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.have[key]
}

// Append writes r as one JSON line with a single write and fsyncs it, so
// a crash leaves either the whole record or a torn tail that the next
// open drops. A record whose key is already stored is skipped.
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
	s.have[k] = true
	return nil
}

// Close closes the results file.
func (s *Store) Close() error { return s.f.Close() }

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

// Num is a float64 that survives JSON when it is not finite: NaN and ±Inf
// (a failed fit, all-zero SNIS weights) are written as null and read back
// as NaN, so one bad point never makes a record unwritable.
type Num float64

// MarshalJSON writes null for NaN and ±Inf.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}
