package reports

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/records"
)

// This file holds the aggregates that state what they leave out: a table
// that averages over a silently filtered set reads better than the runs
// were. A Pareto k̂ of ∞ is stored as "Inf" and read back as +Inf; one
// stored as null (records written before the tokens) reads back as NaN
// and counts as ∞ or unfittable.

// kThreshold is PSIS's reliability threshold: above it the importance
// weights' variance is too large to trust the estimate.
const kThreshold = 0.7

// finiteStats are the finite values of one metric over a set of runs and
// how many runs had none.
type finiteStats struct {
	xs       []float64
	excluded int
}

// add takes one run's value: kept when finite, counted as left out else.
func (s *finiteStats) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s.excluded++
		return
	}
	s.xs = append(s.xs, v)
}

func collect(recs []records.Record, get func(*records.Record) float64) finiteStats {
	var s finiteStats
	for i := range recs {
		s.add(get(&recs[i]))
	}
	return s
}

// meanCell is the mean of the finite values, followed by how many runs
// were left out when any were.
func (s finiteStats) meanCell() Cell {
	v, _ := meanSD(s.xs)
	c := Cell{Text: fmtNum(v), TeX: "$" + texNum(v) + "$"}
	return s.note(c)
}

// meanSDCell is mean ± sd of the finite values, with the exclusion note.
func (s finiteStats) meanSDCell() Cell { return s.note(meanSDCell(meanSD(s.xs))) }

func (s finiteStats) note(c Cell) Cell {
	if s.excluded > 0 {
		n := fmt.Sprintf(" (%d n/a)", s.excluded)
		c.Text += n
		c.TeX += texEscape(n)
	}
	return c
}

// paretoSummary is one cell group of the SNIS diagnostics table: the
// median k̂ over all runs, with a null (∞ or unfittable) k̂ counted as ∞,
// the runs above kThreshold and the infinite ones.
type paretoSummary struct {
	runs, above, infinite int
	median                float64
}

func summarizeK(recs []records.Record) paretoSummary {
	var ks []float64
	s := paretoSummary{runs: len(recs)}
	for i := range recs {
		k, ok := recs[i].Diagnostics["pareto_k"]
		v := float64(k)
		if !ok || math.IsNaN(v) || math.IsInf(v, 1) {
			v = math.Inf(1)
			s.infinite++
		}
		if v > kThreshold {
			s.above++
		}
		ks = append(ks, v)
	}
	s.median = median(ks)
	return s
}

func (s paretoSummary) cells() []Cell {
	frac := fmt.Sprintf("%d/%d", s.above, s.runs)
	return []Cell{
		{Text: fmtNum(s.median), TeX: "$" + texNum(s.median) + "$"},
		plain(frac), plain(fmt.Sprint(s.infinite)),
	}
}

// flagCounts counts the runs that carry each warning flag (by name), and
// the runs that carry any (warned).
type flagCounts struct {
	by     map[string]int
	warned int
}

// recordFlags are a record's raised flags by name: its flags map, and for
// records written before it, its not_converged and outside_support fields.
func recordFlags(r *records.Record) map[string]string {
	out := map[string]string{}
	for k, v := range r.Flags {
		out[k] = v
	}
	if r.NotConverged != "" {
		out["not_converged"] = r.NotConverged
	}
	if r.OutsideSupport != "" {
		out["outside_support"] = r.OutsideSupport
	}
	return out
}

func countFlags(recs []records.Record) flagCounts {
	f := flagCounts{by: map[string]int{}}
	for i := range recs {
		fl := recordFlags(&recs[i])
		for k := range fl {
			f.by[k]++
		}
		if len(fl) > 0 || len(recs[i].Warnings) > 0 {
			f.warned++
		}
	}
	return f
}

func (f flagCounts) add(g flagCounts) flagCounts {
	out := flagCounts{by: map[string]int{}, warned: f.warned + g.warned}
	for _, m := range []map[string]int{f.by, g.by} {
		for k, v := range m {
			out.by[k] += v
		}
	}
	return out
}

// parts are the flags raised, in words with their counts, in table order.
func (f flagCounts) parts(runs int) []string {
	var parts []string
	for _, k := range f.kinds() {
		if n := f.by[k.Name]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d/%d %s", n, runs, k.Words))
		}
	}
	return parts
}

// kinds are the flag kinds to name: every known kind
// (records.FlagKinds), then any other the records carry (a kind added
// after this binary was built), under its own name.
func (f flagCounts) kinds() []records.FlagKind {
	// The methods' kinds, then the one the report raises itself.
	out := append(records.FlagKinds(), records.FlagKind{Name: outlierFlag, Words: outlierWords()})
	seen := map[string]bool{}
	for _, k := range out {
		seen[k.Name] = true
	}
	var extra []string
	for k := range f.by {
		if !seen[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		out = append(out, records.FlagKind{Name: k, Words: strings.ReplaceAll(k, "_", " ")})
	}
	return out
}

// text is the marker a row or cell carries: "" when no run is flagged.
func (f flagCounts) text(runs int) string { return strings.Join(f.parts(runs), ", ") }

func (f flagCounts) cell(runs int) Cell {
	t := f.text(runs)
	if t == "" {
		return plain("-")
	}
	return Cell{Text: "⚠ " + t, TeX: texEscape(t), Bold: true}
}

// caption is the sentence a table's caption gets for its flags: every
// flag kind with its count, and their total, which exceeds the runs
// with a warning when a run carries several flags.
func (f flagCounts) caption() string {
	var parts, words []string
	total := 0
	for _, k := range f.kinds() {
		parts = append(parts, fmt.Sprintf("%d %s", f.by[k.Name], k.Words))
		words = append(words, k.Words)
		total += f.by[k.Name]
	}
	if f.warned == 0 {
		return fmt.Sprintf(" No run carries a warning (%s).", strings.Join(words, ", "))
	}
	return fmt.Sprintf(" Runs with a warning: %d, carrying %d flags (%s; a run may carry several); marked ⚠.", f.warned, total, strings.Join(parts, ", "))
}

// isAFIN reports whether a series is an AFIN output, whose numbers the
// AFIN+SNIS diagnostics qualify (its catalogue entry names a qualifier).
func isAFIN(s Series) bool { return qualifierOf(s.Method) != "" }

// qualifierOf is the weighted method whose Pareto k̂ and ESS qualify
// method's rows; "" for none.
func qualifierOf(method string) string {
	e, _ := catalog.Lookup(method)
	return e.QualifiedBy
}

// signalMethod is the method whose diagnostics are the amortised
// workflow's own warning: the qualifier the catalogue's methods name
// (AFIN+SNIS).
func signalMethod() string {
	for _, e := range catalog.All() {
		if e.QualifiedBy != "" {
			return e.QualifiedBy
		}
	}
	return ""
}

// afinSNISSignal is the amortised workflow's own warning for the runs in
// recs: median Pareto k̂ and median ESS of the AFIN+SNIS runs of the
// variant (the decoders suite's "gaussian" or "flow"; "" elsewhere) at
// their largest proposal budget, and how many had k̂ > 0.7. "" when recs
// holds no such run.
func afinSNISSignal(recs []records.Record, variant string) string {
	method := signalMethod()
	snis := filter(recs, func(r *records.Record) bool {
		return r.Method == method && r.Stage == "" && r.Variant == variant
	})
	if len(snis) == 0 {
		return ""
	}
	final := finalBudget(snis)[Series{Method: method, Variant: variant}]
	k := summarizeK(final)
	ess := collect(final, func(r *records.Record) float64 { return float64(r.Diagnostics["ess"]) })
	out := fmt.Sprintf("k̂ %s (%d/%d > 0.7), ESS %s", fmtNum(k.median), k.above, k.runs, fmtNum(median(ess.xs)))
	if ess.excluded > 0 {
		out += fmt.Sprintf(" (%d n/a)", ess.excluded)
	}
	return out
}

// excludedNote is what a chart's subtitle adds when non-finite values of
// m were left out of its curves.
func excludedNote(recs []records.Record, m Metric) string {
	n := 0
	for i := range recs {
		v := m.Value(&recs[i])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" · %d non-finite value(s) left out", n)
}
