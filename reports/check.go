package reports

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/suite"
)

// Baseline is the committed accuracy reference of the CI gate: per
// (suite, method, variant, budget), the mean M1, M2 and SW2 over all runs
// of a known-good results store, and the tolerance a new run may exceed
// them by.
type Baseline struct {
	Description string          `json:"description,omitempty"`
	Tolerance   Tolerance       `json:"tolerance"`
	Entries     []BaselineEntry `json:"entries"`
}

// Tolerance: a metric regresses when now > base·(1+Relative) + Absolute.
type Tolerance struct {
	Relative float64 `json:"relative"`
	Absolute float64 `json:"absolute"`
}

// BaselineEntry is one gated point.
type BaselineEntry struct {
	Suite   string  `json:"suite"`
	Method  string  `json:"method"`
	Variant string  `json:"variant,omitempty"`
	Stage   string  `json:"stage,omitempty"`
	Budget  int     `json:"budget"`
	Runs    int     `json:"runs"`
	M1      float64 `json:"m1"`
	M2      float64 `json:"m2"`
	SW2     float64 `json:"sw2"`
}

func (e BaselineEntry) key() string {
	return fmt.Sprintf("%s|%s|%s|%s|%d", e.Suite, e.Method, e.Variant, e.Stage, e.Budget)
}

// Summarize averages records into baseline entries: one per (suite,
// method, variant, stage, budget), each metric the mean over its runs
// (non-finite values count as +Inf, so a broken method cannot pass).
func Summarize(recs []records.Record) []BaselineEntry {
	type acc struct {
		e          BaselineEntry
		m1, m2, sw float64
	}
	cells := map[string]*acc{}
	for _, r := range recs {
		if suite.ScoringOf(r.Suite) != suite.ByReference {
			continue // scored by ranks or predictive metrics, not M1/M2/SW2
		}
		if r.Failed() {
			continue // no metrics: Check names the failed units instead
		}
		e := BaselineEntry{Suite: r.Suite, Method: r.Method, Variant: r.Variant, Stage: r.Stage, Budget: r.Budget}
		a := cells[e.key()]
		if a == nil {
			a = &acc{e: e}
			cells[e.key()] = a
		}
		a.e.Runs++
		a.m1 += finiteOrInf(float64(r.M1))
		a.m2 += finiteOrInf(float64(r.M2))
		a.sw += finiteOrInf(float64(r.SW2))
	}
	var out []BaselineEntry
	for _, a := range cells {
		n := float64(a.e.Runs)
		a.e.M1, a.e.M2, a.e.SW2 = a.m1/n, a.m2/n, a.sw/n
		out = append(out, a.e)
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

func finiteOrInf(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return math.Inf(1)
	}
	return v
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
	return &b, nil
}

// WriteBaseline writes b as indented JSON.
func WriteBaseline(path string, b *Baseline) error {
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
// of its metrics may exceed the baseline by more than the tolerance. An
// entry the baseline does not name fails the gate too.
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
		Caption: fmt.Sprintf("A metric regresses when it exceeds baseline × (1 + %g) + %g.",
			base.Tolerance.Relative, base.Tolerance.Absolute),
		Header: []string{"Suite", "Method", "Budget", "Runs", "M1 now/base", "M2 now/base", "SW2 now/base", "Status"},
	}}
	limit := func(b float64) float64 { return b*(1+base.Tolerance.Relative) + base.Tolerance.Absolute }
	for _, b := range base.Entries {
		name := Series{b.Method, b.Variant, b.Stage}.Name()
		n, ok := now[b.key()]
		if !ok {
			res.Missing++
			res.Table.Rows = append(res.Table.Rows, []Cell{plain(b.Suite), plain(name), plain(fmt.Sprint(b.Budget)),
				plain("0"), plain("-"), plain("-"), plain("-"), {Text: "MISSING", TeX: "missing", Bold: true}})
			continue
		}
		delete(now, b.key())
		if n.Runs < b.Runs {
			res.Incomplete++
			res.Table.Rows = append(res.Table.Rows, []Cell{plain(b.Suite), plain(name), plain(fmt.Sprint(b.Budget)),
				plain(fmt.Sprintf("%d of %d", n.Runs, b.Runs)), plain("-"), plain("-"), plain("-"), {Text: "INCOMPLETE", TeX: "incomplete", Bold: true}})
			continue
		}
		status := "ok"
		var worse []string
		cell := func(label string, v, ref float64) Cell {
			c := plain(fmt.Sprintf("%s / %s", fmtNum(v), fmtNum(ref)))
			if !(v <= limit(ref)) {
				c.Bold = true
				worse = append(worse, label)
			}
			return c
		}
		row := []Cell{plain(b.Suite), plain(name), plain(fmt.Sprint(b.Budget)), plain(fmt.Sprint(n.Runs)),
			cell("M1", n.M1, b.M1), cell("M2", n.M2, b.M2), cell("SW2", n.SW2, b.SW2)}
		if len(worse) > 0 {
			res.Regressions++
			status = "REGRESSED " + fmt.Sprint(worse)
		}
		row = append(row, Cell{Text: status, TeX: texEscape(status), Bold: len(worse) > 0})
		res.Table.Rows = append(res.Table.Rows, row)
	}
	checkFailures(res, recs, base)
	for _, k := range order {
		if n, ok := now[k]; ok {
			res.Unexpected++
			res.Table.Rows = append(res.Table.Rows, []Cell{plain(n.Suite), plain(Series{n.Method, n.Variant, n.Stage}.Name()),
				plain(fmt.Sprint(n.Budget)), plain(fmt.Sprint(n.Runs)), plain("-"), plain("-"), plain("-"),
				{Text: "NOT IN BASELINE", TeX: "not in baseline", Bold: true}})
		}
	}
	return res
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
