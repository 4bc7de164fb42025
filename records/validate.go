package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/suite"
)

// budgetKinds are the units a budget may be counted in.
var budgetKinds = []string{"draws", "steps", "proposals"}

// requiredFields must be present in every record line.
var requiredFields = []string{"suite", "setting", "seed", "method", "budget_kind", "budget", "seconds"}

// metricFields must be present in every scored record line (a missing
// metric must not read as 0) and absent from a failed one (an "error"
// field): a line that is both is ambiguous and refused.
var metricFields = []string{"m1", "m2", "sw2"}

// recordPrefix is how every record line written by Append starts
// (encoding/json writes fields in declaration order); a line that starts
// so but does not parse is a torn write, anything else is a foreign line.
var recordPrefix = []byte(`{"suite":`)

// errForeign marks a line that is not a results record at all.
var errForeign = errors.New("not a results record")

// decodeRecord parses and checks one line.
func decodeRecord(line []byte) (Record, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return Record{}, fmt.Errorf("%w: %v", errForeign, err)
	}
	if err := checkFields(raw); err != nil {
		return Record{}, err
	}
	var r Record
	if err := json.Unmarshal(line, &r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", errForeign, err)
	}
	if r.Failed() {
		nan := Num(math.NaN())
		r.M1, r.M2, r.SW2 = nan, nan, nan
	}
	if err := r.Validate(); err != nil {
		return Record{}, err
	}
	return r, nil
}

// checkFields checks which fields a line has: every required one, and
// the metrics exactly when the record is not a failure.
func checkFields(raw map[string]json.RawMessage) error {
	var missing, extra []string
	for _, k := range requiredFields {
		if _, ok := raw[k]; !ok {
			missing = append(missing, k)
		}
	}
	failed := false
	if e, ok := raw["error"]; ok {
		var msg string
		if err := json.Unmarshal(e, &msg); err != nil {
			return fmt.Errorf("error: must be a string: %v", err)
		}
		failed = msg != ""
	}
	for _, k := range metricFields {
		_, ok := raw[k]
		switch {
		case !ok && !failed:
			missing = append(missing, k)
		case ok && failed:
			extra = append(extra, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing field(s) %s", errForeign, strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		return fmt.Errorf("a failed record (with an error) carries no metrics, got %s", strings.Join(extra, ", "))
	}
	return nil
}

// Validate checks a record's schema: known suite, method and budget kind,
// a setting, a budget ≥ 0 and metrics and seconds ≥ 0. A metric may be
// NaN (written as null: the method's output could not be scored); the
// report counts those as exclusions.
func (r *Record) Validate() error {
	switch {
	case !suite.Known(r.Suite):
		// Only registered suites (package suite): a stray file cannot add
		// table rows.
		return fmt.Errorf("suite: unknown suite %q (valid: %s)", r.Suite, strings.Join(suite.Names(), ", "))
	case !KnownMethod(r.Method):
		return fmt.Errorf("method: unknown method %q (valid: %s)", r.Method, strings.Join(catalog.Spellings(), ", "))
	case r.Setting == "":
		return errors.New("setting: must not be empty")
	case !contains(budgetKinds, r.BudgetKind):
		return fmt.Errorf("budget_kind: must be one of %s, got %q", strings.Join(budgetKinds, ", "), r.BudgetKind)
	case r.Budget < 0:
		return fmt.Errorf("budget: must be ≥ 0, got %d", r.Budget)
	}
	for _, m := range []struct {
		name string
		v    Num
	}{{"m1", r.M1}, {"m2", r.M2}, {"sw2", r.SW2}, {"seconds", r.Seconds}} {
		v := float64(m.v)
		if v < 0 || math.IsInf(v, 0) {
			return fmt.Errorf("%s: must be finite and ≥ 0, got %g", m.name, v)
		}
	}
	if g := r.Marginals; g != nil {
		for _, m := range []struct {
			name string
			v    Num
		}{{"max_mean_err_sd", g.MaxMeanErr}, {"min_sd_ratio", g.MinSDRatio}, {"max_sd_ratio", g.MaxSDRatio}} {
			// NaN (null) is an unscorable point, as for the metrics.
			if v := float64(m.v); v < 0 || math.IsInf(v, 0) {
				return fmt.Errorf("marginals.%s: must be finite and ≥ 0, got %g", m.name, v)
			}
		}
	}
	return nil
}

// KnownMethod reports whether name is a method a record may carry: one
// of the method catalogue (an external method's "exec:NAME" included),
// which the methods a binary links fill in.
func KnownMethod(name string) bool { return catalog.Known(name) }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// salvage recovers a record from a line where a torn write of one process
// was followed by a complete record of another on the same line: the last
// record prefix that starts a valid record.
func salvage(line []byte) (Record, bool) {
	for end := len(line); ; {
		i := bytes.LastIndex(line[:end], recordPrefix)
		if i <= 0 {
			return Record{}, false
		}
		if r, err := decodeRecord(line[i:]); err == nil {
			return r, true
		}
		end = i
	}
}

// sameResult reports whether two scored records of one key carry the
// same metrics. Timings (seconds, the diagnostics' *_seconds, provenance
// times) are left out: a seeded unit run twice scores the same and only
// its clock differs, so the second run is a duplicate, not a conflict.
func sameResult(a, b *Record) bool {
	return sameNum(a.M1, b.M1) && sameNum(a.M2, b.M2) && sameNum(a.SW2, b.SW2)
}

func sameNum(x, y Num) bool {
	return x == y || (math.IsNaN(float64(x)) && math.IsNaN(float64(y)))
}

// mixWarnings names, per suite, provenance values that differ between
// records (profiles, commits, checkpoints, matrix kernels), with their
// counts: a report mixing them compares unlike runs (kernels: unlike
// timings).
func mixWarnings(recs []Record) []string {
	type field struct {
		name string
		get  func(*Record) string
	}
	fields := []field{
		{"profiles", func(r *Record) string { return r.Provenance.Profile }},
		{"commits", func(r *Record) string { return commitOf(r.Provenance) }},
		{"checkpoints", func(r *Record) string { return shortHash(r.Provenance.Checkpoint) }},
		{"kernels", func(r *Record) string { return r.Provenance.Kernel }},
	}
	var out []string
	for _, f := range fields {
		counts := map[string]map[string]int{}
		for i := range recs {
			r := &recs[i]
			if f.name == "checkpoints" && r.Provenance.Checkpoint == "" {
				continue // methods without a network
			}
			if f.name == "kernels" && r.Provenance.Kernel == "" {
				continue // written before the kernel was recorded
			}
			if counts[r.Suite] == nil {
				counts[r.Suite] = map[string]int{}
			}
			counts[r.Suite][f.get(r)]++
		}
		for _, suite := range sortedKeys(counts) {
			c := counts[suite]
			if len(c) < 2 {
				continue
			}
			var parts []string
			for _, v := range sortedKeys(c) {
				parts = append(parts, fmt.Sprintf("%s: %d", v, c[v]))
			}
			out = append(out, fmt.Sprintf("suite %s mixes records of %d %s (%s)", suite, len(c), f.name, strings.Join(parts, ", ")))
		}
	}
	return out
}

// commitOf is the build a record is counted under when report and check
// look for a suite mixing commits (mixWarnings), and when a resume is
// checked against them (CheckResume): one rule for all three (BinaryOf).
func commitOf(p Provenance) string { return BinaryOf(p) }

// ErrMixedCommits: a run would add records of one commit to a suite whose
// records in the directory carry another.
var ErrMixedCommits = errors.New("results of another commit")

// CheckResume refuses to add records of suite written with provenance p
// to l when l's records of that suite carry another commit or build, or
// another profile (checkResumeProfile): `afin check` and the report would
// then see the suite mix them (mixWarnings), so a resume is refused up
// front instead of after hours of work. The error names both, with counts.
func CheckResume(l *Loaded, suite string, p Provenance) error {
	mine := commitOf(p)
	counts := map[string]int{}
	for i := range l.Records {
		if r := &l.Records[i]; r.Suite == suite {
			if c := commitOf(r.Provenance); c != mine {
				counts[c]++
			}
		}
	}
	if len(counts) == 0 {
		return checkResumeProfile(l, suite, p)
	}
	var parts []string
	for _, c := range sortedKeys(counts) {
		parts = append(parts, fmt.Sprintf("%d of %s", counts[c], commitLabel(c)))
	}
	return fmt.Errorf("%w: the directory holds records of suite %s from another commit or build (%s) and this binary is %s; `afin check` refuses a suite that mixes commits, so resume with the binary that wrote them, use a fresh results directory, or pass --allow-mixed if the mix is intended",
		ErrMixedCommits, suite, strings.Join(parts, ", "), commitLabel(mine))
}

func shortHash(s string) string {
	if s == "" {
		return "unknown"
	}
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
