package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/suite"
)

// Baseline is the committed accuracy reference of the CI gate: per
// (suite, method, variant, stage, budget), the mean of each metric the
// suite is scored by (gateMetricsOf: M1, M2 and SW2; test accuracy, NLL
// and AUC; calibration's coverage and z statistics) over all runs of a
// known-good results store, and the tolerance a new run may miss them by.
// Profile is the bench profile the runs were made at ("" when unknown):
// a gate of another profile's results against it compares unlike runs.
type Baseline struct {
	Description string          `json:"description,omitempty"`
	Profile     string          `json:"profile,omitempty"`
	Tolerance   Tolerance       `json:"tolerance"`
	Entries     []BaselineEntry `json:"entries"`
}

// Tolerance: a metric regresses when its loss (the metric when lower is
// better, 1 − the metric when higher is) exceeds the baseline's loss
// × (1+Relative) + Absolute.
type Tolerance struct {
	Relative float64 `json:"relative"`
	Absolute float64 `json:"absolute"`
}

// BaselineEntry is one gated point: its metrics by name.
type BaselineEntry struct {
	Suite   string             `json:"suite"`
	Method  string             `json:"method"`
	Variant string             `json:"variant,omitempty"`
	Stage   string             `json:"stage,omitempty"`
	Budget  int                `json:"budget"`
	Runs    int                `json:"runs"`
	Metrics map[string]float64 `json:"metrics"`
}

// UnmarshalJSON also reads the entries of baselines written before the
// metrics map, whose m1, m2 and sw2 stood beside the key.
func (e *BaselineEntry) UnmarshalJSON(data []byte) error {
	type plainEntry BaselineEntry
	var v struct {
		plainEntry
		M1  *float64 `json:"m1"`
		M2  *float64 `json:"m2"`
		SW2 *float64 `json:"sw2"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*e = BaselineEntry(v.plainEntry)
	for k, p := range map[string]*float64{"m1": v.M1, "m2": v.M2, "sw2": v.SW2} {
		if p == nil {
			continue
		}
		if e.Metrics == nil {
			e.Metrics = map[string]float64{}
		}
		if _, dup := e.Metrics[k]; !dup {
			e.Metrics[k] = *p
		}
	}
	return nil
}

func (e BaselineEntry) key() string {
	return fmt.Sprintf("%s|%s|%s|%s|%d", e.Suite, e.Method, e.Variant, e.Stage, e.Budget)
}

// name is the entry in words, for errors.
func (e BaselineEntry) name() string {
	return fmt.Sprintf("%s %s at %d", e.Suite, Series{e.Method, e.Variant, e.Stage}.Name(), e.Budget)
}

// Summarize averages records into baseline entries: one per (suite,
// method, variant, stage, budget) of scored (not failed) records, with
// every metric its suite is gated on (gateMetricsOf). A NaN or infinite
// value stays one in the mean, so a broken method cannot pass.
func Summarize(recs []records.Record) []BaselineEntry {
	type cell struct {
		e    BaselineEntry
		recs []*records.Record
	}
	cells := map[string]*cell{}
	for i := range recs {
		r := &recs[i]
		if r.Failed() {
			continue // no metrics: Check names the failed units instead
		}
		e := BaselineEntry{Suite: r.Suite, Method: r.Method, Variant: r.Variant, Stage: r.Stage, Budget: r.Budget}
		c := cells[e.key()]
		if c == nil {
			c = &cell{e: e}
			cells[e.key()] = c
		}
		c.recs = append(c.recs, r)
	}
	var out []BaselineEntry
	for _, c := range cells {
		c.e.Runs = len(c.recs)
		c.e.Metrics = entryMetrics(suite.ScoringOf(c.e.Suite), c.recs)
		out = append(out, c.e)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Suite != b.Suite {
			return a.Suite < b.Suite
		}
		sa, sb := Series{a.Method, a.Variant, a.Stage}, Series{b.Method, b.Variant, b.Stage}
		if sa != sb {
			return lessSeries(sa, sb)
		}
		return a.Budget < b.Budget
	})
	return out
}

// ReadBaseline reads a baseline file.
func ReadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading baseline: %w", err)
	}
	return ParseBaseline(data, path)
}

// ParseBaseline reads a baseline's JSON; name says where it came from in
// errors.
func ParseBaseline(data []byte, path string) (*Baseline, error) {
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	if len(b.Entries) == 0 {
		return nil, fmt.Errorf("baseline %s has no entries", path)
	}
	if b.Tolerance.Relative < 0 || b.Tolerance.Absolute < 0 {
		return nil, fmt.Errorf("baseline %s: tolerances must be ≥ 0", path)
	}
	for _, e := range b.Entries {
		if err := checkEntryMetrics(e); err != nil {
			return nil, fmt.Errorf("baseline %s: %w", path, err)
		}
	}
	return &b, nil
}

// Validate refuses a baseline that would gate nothing (no entries) or
// gate on a metric that is not finite or not its suite's.
func (b *Baseline) Validate() error {
	if len(b.Entries) == 0 {
		return errors.New("no scored records to gate: a baseline with no entries would gate nothing")
	}
	for _, e := range b.Entries {
		if err := checkEntryMetrics(e); err != nil {
			return fmt.Errorf("cannot write a baseline: %w", err)
		}
	}
	return nil
}

// WriteBaseline writes b as indented JSON. A baseline with no entries is
// refused, as is one with a metric that is not finite: either would be
// refused when read, so writing it would only defer the error to the
// next gate.
func WriteBaseline(path string, b *Baseline) error {
	if err := b.Validate(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// CheckResult is the gate's verdict.
type CheckResult struct {
	Table       *Table
	Regressions int
	Missing     int
	// Incomplete counts entries with fewer runs than the baseline (one
	// shard of several, a truncated file): their means are over other
	// tasks and cannot be compared.
	Incomplete int
	// Unexpected counts entries the baseline does not name (a budget or
	// method it never gated): new rows need a new baseline, not a pass.
	Unexpected int
	// FailedUnits names each failed record of a gated entry ("suite
	// setting seed method at budget: reason"): a unit the baseline
	// counts on failed, so the gate fails and says which.
	FailedUnits []string
}

// Failed reports whether the gate fails.
func (c *CheckResult) Failed() bool {
	return c.Regressions > 0 || c.Missing > 0 || c.Incomplete > 0 || c.Unexpected > 0 || len(c.FailedUnits) > 0
}

// Summary is the verdict in one line.
func (c *CheckResult) Summary(entries int) string {
	s := fmt.Sprintf("%d regressed, %d missing, %d incomplete (fewer runs than the baseline), %d not in the baseline, of %d baseline entries",
		c.Regressions, c.Missing, c.Incomplete, c.Unexpected, entries)
	if n := len(c.FailedUnits); n > 0 {
		shown := c.FailedUnits[:min(n, 3)]
		s += fmt.Sprintf("; %d failed point(s) of gated units: %s", n, strings.Join(shown, "; "))
		if n > len(shown) {
			s += fmt.Sprintf("; and %d more (see the table)", n-len(shown))
		}
	}
	return s
}

// suiteGates are the gates a suite adds to `afin check` after the
// accuracy gate, keyed by the suite's name (package suite).
var suiteGates = []struct {
	suite string
	gate  func(recs []records.Record) error
}{
	// NUTS is the calibrated control of the calibration suite: if it
	// fails its SBC bands, the suite (or the sampler) is broken.
	{suite.Calibration, func(recs []records.Record) error {
		if f := CalibrationFailures(recs, referenceName()); len(f) > 0 {
			return fmt.Errorf("calibration gate failed: %s", strings.Join(f, "; "))
		}
		return nil
	}},
}

// SuiteGates runs the suites' own gates on the records of their suites
// and returns the first failure.
func SuiteGates(recs []records.Record) error {
	for _, g := range suiteGates {
		if err := g.gate(recs); err != nil {
			return err
		}
	}
	return nil
}

// Check compares the records' summary with the baseline: every baseline
// entry must be present with as many runs as the baseline had, and none
// of its metrics may be worse than the baseline's by more than the
// tolerance (gateMetric.regressed; NaN always is). An entry the baseline
// does not name fails the gate too.
func Check(recs []records.Record, base *Baseline) *CheckResult {
	now := map[string]BaselineEntry{}
	var order []string
	for _, e := range Summarize(recs) {
		now[e.key()] = e
		order = append(order, e.key())
	}
	res := &CheckResult{Table: &Table{
		Name:  "check",
		Title: "Accuracy gate against the baseline",
		Caption: fmt.Sprintf("A metric regresses when its loss exceeds the baseline's × (1 + %g) + %g; "+
			"the loss is the metric when lower is better (M1, M2, SW2, NLL, calibration's gaps) and 1 − the metric when higher is (accuracy, AUC); "+
			"a NaN or infinite metric always regresses. (limit) is the worst value that passes.",
			base.Tolerance.Relative, base.Tolerance.Absolute),
		Header: []string{"Suite", "Method", "Budget", "Runs", "Metrics now / base (limit)", "Status"},
	}}
	for _, b := range base.Entries {
		head := []Cell{plain(b.Suite), plain(Series{b.Method, b.Variant, b.Stage}.Name()), plain(fmt.Sprint(b.Budget))}
		n, ok := now[b.key()]
		if !ok {
			res.Missing++
			res.Table.Rows = append(res.Table.Rows, append(head, plain("0"), plain("-"), Cell{Text: "MISSING", TeX: "missing", Bold: true}))
			continue
		}
		delete(now, b.key())
		if n.Runs < b.Runs {
			res.Incomplete++
			res.Table.Rows = append(res.Table.Rows, append(head, plain(fmt.Sprintf("%d of %d", n.Runs, b.Runs)), plain("-"),
				Cell{Text: "INCOMPLETE", TeX: "incomplete", Bold: true}))
			continue
		}
		metrics, worse := compareEntry(n, b, base.Tolerance)
		status := "ok"
		if len(worse) > 0 {
			res.Regressions++
			status = "REGRESSED [" + strings.Join(worse, ", ") + "]"
		}
		res.Table.Rows = append(res.Table.Rows, append(head, plain(fmt.Sprint(n.Runs)), metrics,
			Cell{Text: status, TeX: texEscape(status), Bold: len(worse) > 0}))
	}
	checkFailures(res, recs, base)
	for _, k := range order {
		if n, ok := now[k]; ok {
			res.Unexpected++
			res.Table.Rows = append(res.Table.Rows, []Cell{plain(n.Suite), plain(Series{n.Method, n.Variant, n.Stage}.Name()),
				plain(fmt.Sprint(n.Budget)), plain(fmt.Sprint(n.Runs)), plain("-"),
				{Text: "NOT IN BASELINE", TeX: "not in baseline", Bold: true}})
		}
	}
	return res
}

// compareEntry is the metrics cell of one gated entry, in its suite's
// order, and the labels of the metrics that regressed.
func compareEntry(n, b BaselineEntry, tol Tolerance) (Cell, []string) {
	var parts, worse []string
	for _, m := range gateMetricsOf(suite.ScoringOf(b.Suite)) {
		ref, ok := b.Metrics[m.key]
		if !ok {
			continue // a metric the baseline did not keep is not gated
		}
		v, ok := n.Metrics[m.key]
		if !ok {
			v = math.NaN()
		}
		parts = append(parts, fmt.Sprintf("%s %s / %s (%s)", m.label, gateNum(v), gateNum(ref), gateNum(m.limit(ref, tol))))
		if m.regressed(v, ref, tol) {
			worse = append(worse, m.label)
		}
	}
	c := plain(strings.Join(parts, ", "))
	c.Bold = len(worse) > 0
	return c, worse
}

// checkFailures adds a FAILED row and a name for each failed record of a
// baseline entry: the entry is also incomplete, but the gate says which
// unit failed and why rather than only that runs are missing.
func checkFailures(res *CheckResult, recs []records.Record, base *Baseline) {
	gated := map[string]bool{}
	for _, b := range base.Entries {
		gated[b.key()] = true
	}
	for _, r := range recs {
		e := BaselineEntry{Suite: r.Suite, Method: r.Method, Variant: r.Variant, Stage: r.Stage, Budget: r.Budget}
		if !r.Failed() || !gated[e.key()] {
			continue
		}
		name := Series{r.Method, r.Variant, r.Stage}.Name()
		reason := records.TruncateError(r.Error, 300)
		res.FailedUnits = append(res.FailedUnits, fmt.Sprintf("%s %s seed %d %s at %d %s: %s", r.Suite, r.Setting, r.Seed, name, r.Budget, r.BudgetKind, reason))
		res.Table.Rows = append(res.Table.Rows, []Cell{plain(r.Suite), plain(name), plain(fmt.Sprint(r.Budget)),
			plain(fmt.Sprintf("%s seed %d", r.Setting, r.Seed)), plain("-"), plain("-"), plain("-"),
			{Text: "FAILED: " + reason, TeX: texEscape("failed: " + reason), Bold: true}})
	}
}

// Warned lists, per method (series) with a flagged run, how many of its
// scored records carry a warning and which flags: one line each, sorted;
// nil when none does. `afin check --fail-on-warnings` fails on it.
func Warned(recs []records.Record) []string {
	by := map[Series][]records.Record{}
	for i := range recs {
		if !recs[i].Failed() {
			s := seriesOf(&recs[i])
			by[s] = append(by[s], recs[i])
		}
	}
	var out []string
	for _, s := range sortedSeries(by) {
		rs := by[s]
		if f := countFlags(rs); f.warned > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d records carry a warning (%s)", s.Name(), f.warned, len(rs), f.text(len(rs))))
		}
	}
	return out
}
