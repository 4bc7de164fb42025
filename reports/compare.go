package reports

import (
	"fmt"
	"github.com/afin-bench/afin/internal/moments"
	"math"
	"sort"
	"strings"

	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/suite"
)

// Comparing two runs (two checkpoints, two commits): per cell — suite,
// tier (the record's group: easy/medium/hard, an extrapolation split, a
// UCI dataset), method series and budget — the difference B − A of each
// metric's mean, judged against the noise the seeds show.
//
// A cell's replicates are its seeds: for each seed, the metric is
// averaged over the tier's settings (the same tasks in both runs, since a
// seed fixes them), and mean and sd are taken over those per-seed values.
// With at least 2 seeds on both sides, a change is flagged when
//
//	|Δ| > max(Z·√(sA²/nA + sB²/nB), Absolute)
//
// (Welch's standard error of a difference of means; Z = 2 by default).
// With fewer seeds there is no spread to judge by, and a change is flagged
// when |Δ| > Relative·|A| + Absolute, the accuracy gate's own tolerance.
// All three metrics are errors: lower is better; a mean that is NaN in B
// and a number in A (a run that could not compute a metric) is worse.

// CompareOptions are the flagging rule's constants.
type CompareOptions struct {
	Z        float64 // multiple of the difference's standard error (≥ 2 seeds)
	Relative float64 // relative threshold of A's mean (1 seed, or a baseline)
	Absolute float64 // absolute floor under either threshold
}

// DefaultCompareOptions: 2 standard errors; with one seed the gate's
// default tolerance, 25% + 0.002.
func DefaultCompareOptions() CompareOptions {
	return CompareOptions{Z: 2, Relative: 0.25, Absolute: 0.002}
}

// Rule states the flagging rule in one sentence (tables' caption).
func (o CompareOptions) Rule() string {
	return fmt.Sprintf("Δ = B − A of the mean over seeds of each seed's tier mean. Flagged when "+
		"|Δ| > max(%g·√(sA²/nA + sB²/nB), %g) with ≥ 2 seeds on both sides (sd over seeds), "+
		"else when |Δ| > %g·|A| + %g (one seed or a baseline: no spread to judge by). n: seeds (runs, for a baseline). Lower is better; NaN in B where A has a number is worse.",
		o.Z, o.Absolute, o.Relative, o.Absolute)
}

// compareKey is one compared cell.
type compareKey struct {
	Suite, Group string
	Series       Series
	Budget       int
}

// cellStats are one side of a cell: replicates and, per metric (in the
// order of Metrics), the mean and the sd over them (NaN when unknown).
type cellStats struct {
	N        int
	Mean, SD [3]float64
}

// Comparison is the result of comparing two runs.
type Comparison struct {
	Table         *Table
	Worse, Better int // flagged metric differences
	OnlyA, OnlyB  int // cells present on one side only
}

// CompareRecords compares two results sets cell by cell.
func CompareRecords(a, b []records.Record, labelA, labelB string, o CompareOptions) *Comparison {
	return compareStats(seedStats(a), seedStats(b), labelA, labelB, o)
}

// CompareBaseline compares records (B) with a baseline (A) the way the
// gate keys it — per suite, method series and budget over all tiers — and
// with the baseline's tolerance as the threshold, since a baseline keeps
// only means.
func CompareBaseline(recs []records.Record, base *Baseline) *Comparison {
	o := CompareOptions{Relative: base.Tolerance.Relative, Absolute: base.Tolerance.Absolute}
	return compareStats(entryStats(base.Entries), entryStats(Summarize(recs)), "baseline", "this run", o)
}

// seedStats groups records into cells and, within a cell, by seed.
func seedStats(recs []records.Record) map[compareKey]cellStats {
	type seedAcc struct {
		n   int
		sum [3]float64
	}
	cells := map[compareKey]map[uint64]*seedAcc{}
	for i := range recs {
		r := &recs[i]
		if suite.ScoringOf(r.Suite) == suite.ByRanks {
			continue // scored by SBC ranks, not by M1/M2/SW2
		}
		k := compareKey{r.Suite, r.Group, seriesOf(r), r.Budget}
		if cells[k] == nil {
			cells[k] = map[uint64]*seedAcc{}
		}
		acc := cells[k][r.Seed]
		if acc == nil {
			acc = &seedAcc{}
			cells[k][r.Seed] = acc
		}
		acc.n++
		for j, m := range Metrics {
			// A NaN stays one (metricCells counts it as worse), so a
			// broken value cannot be averaged away or shown as ∞.
			acc.sum[j] += m.Value(r)
		}
	}
	out := map[compareKey]cellStats{}
	for k, seeds := range cells {
		var st cellStats
		per := make([][]float64, len(Metrics))
		for _, acc := range seeds {
			for j := range Metrics {
				per[j] = append(per[j], acc.sum[j]/float64(acc.n))
			}
		}
		st.N = len(seeds)
		for j := range Metrics {
			st.Mean[j], st.SD[j] = moments.SampleMeanSD(per[j])
		}
		out[k] = st
	}
	return out
}

// entryStats turns baseline entries (means only) into cells of tier
// "all": the entries of suites scored by M1, M2 and SW2, the metrics this
// comparison knows (the gate's own table shows the others).
func entryStats(entries []BaselineEntry) map[compareKey]cellStats {
	out := map[compareKey]cellStats{}
	for _, e := range entries {
		if suite.ScoringOf(e.Suite) != suite.ByReference {
			continue
		}
		nan := math.NaN()
		var mean [3]float64
		for j, m := range Metrics {
			v, ok := e.Metrics[string(m)]
			if !ok {
				v = nan
			}
			mean[j] = v
		}
		out[compareKey{e.Suite, "all", Series{e.Method, e.Variant, e.Stage}, e.Budget}] = cellStats{
			N: e.Runs, Mean: mean, SD: [3]float64{nan, nan, nan},
		}
	}
	return out
}

// threshold is the largest |Δ| still taken as noise for metric j.
func (o CompareOptions) threshold(a, b cellStats, j int) float64 {
	if a.N >= 2 && b.N >= 2 && !math.IsNaN(a.SD[j]) && !math.IsNaN(b.SD[j]) {
		se := math.Sqrt(a.SD[j]*a.SD[j]/float64(a.N) + b.SD[j]*b.SD[j]/float64(b.N))
		return math.Max(o.Z*se, o.Absolute)
	}
	return o.Relative*math.Abs(a.Mean[j]) + o.Absolute
}

// compareStats builds the comparison table of cells a (A) and b (B).
func compareStats(a, b map[compareKey]cellStats, labelA, labelB string, o CompareOptions) *Comparison {
	c := &Comparison{Table: &Table{
		Name:    "compare",
		Title:   fmt.Sprintf("Comparison: A = %s, B = %s", labelA, labelB),
		Caption: o.Rule(),
		Header:  []string{"Suite", "Tier", "Method", "Budget", "Metric", "A mean ± sd (n)", "B mean ± sd (n)", "Δ = B − A", "Noise", "Verdict"},
	}}
	for _, k := range unionKeys(a, b) {
		sa, inA := a[k]
		sb, inB := b[k]
		head := []Cell{plain(k.Suite), plain(groupLabel(k.Group)), plain(k.Series.Name()), plain(fmt.Sprint(k.Budget))}
		if !inA || !inB {
			side := sb
			if inA {
				side = sa
			}
			c.Table.Rows = append(c.Table.Rows, c.oneSidedRow(head, side, inA))
			continue
		}
		for j, m := range Metrics {
			c.Table.Rows = append(c.Table.Rows, append(append([]Cell{}, head...), c.metricCells(sa, sb, j, m, o)...))
		}
	}
	return c
}

// oneSidedRow is the row of a cell that only one run has (a method or
// budget added or dropped): nothing to compare, but it must not vanish.
func (c *Comparison) oneSidedRow(head []Cell, s cellStats, inA bool) []Cell {
	here, absent := plain(fmt.Sprintf("n = %d", s.N)), plain("-")
	verdict := "only in B"
	cellA, cellB := absent, here
	if inA {
		verdict = "only in A"
		cellA, cellB = here, absent
		c.OnlyA++
	} else {
		c.OnlyB++
	}
	return append(head, plain("all"), cellA, cellB, plain("-"), plain("-"), Cell{Text: verdict, TeX: verdict, Bold: true})
}

// metricCells are the Metric … Verdict cells of one metric of one cell,
// counting what is flagged.
func (c *Comparison) metricCells(sa, sb cellStats, j int, m Metric, o CompareOptions) []Cell {
	side := func(s cellStats) Cell {
		if math.IsNaN(s.SD[j]) {
			return plain(fmt.Sprintf("%s (%d)", gateNum(s.Mean[j]), s.N))
		}
		return plain(fmt.Sprintf("%s ± %s (%d)", gateNum(s.Mean[j]), fmtNum(s.SD[j]), s.N))
	}
	delta := sb.Mean[j] - sa.Mean[j]
	thr := o.threshold(sa, sb, j)
	verdict := Cell{Text: "within noise", TeX: "within noise"}
	switch {
	case math.IsNaN(sb.Mean[j]) && !math.IsNaN(sa.Mean[j]):
		// B could not compute what A did: a broken method is worse.
		verdict = Cell{Text: "WORSE", TeX: "worse", Bold: true}
		c.Worse++
	case math.IsNaN(delta):
		verdict = plain("n/a")
	case math.Abs(delta) > thr && delta > 0:
		verdict = Cell{Text: "WORSE", TeX: "worse", Bold: true}
		c.Worse++
	case math.Abs(delta) > thr:
		verdict = Cell{Text: "better", TeX: "better", Bold: true}
		c.Better++
	}
	sign := ""
	if delta > 0 {
		sign = "+"
	}
	return []Cell{plain(strings.ToUpper(string(m))), side(sa), side(sb), plain(sign + fmtNum(delta)), plain(fmtNum(thr)), verdict}
}

// unionKeys lists the cells of either side in the report's order: suite,
// tier (the paper's difficulty and split orders first), method series as
// the legends order them, budget.
func unionKeys(a, b map[compareKey]cellStats) []compareKey {
	seen := map[compareKey]bool{}
	var keys []compareKey
	for _, m := range []map[compareKey]cellStats{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		x, y := keys[i], keys[j]
		switch {
		case x.Suite != y.Suite:
			return x.Suite < y.Suite
		case x.Group != y.Group:
			if rx, ry := tierRank(x.Group), tierRank(y.Group); rx != ry {
				return rx < ry
			}
			return x.Group < y.Group
		case x.Series != y.Series:
			return lessSeries(x.Series, y.Series)
		}
		return x.Budget < y.Budget
	})
	return keys
}

// tierRank orders tiers as the report does (see groups), unknown ones
// after, alphabetically by the caller.
func tierRank(g string) int {
	for i, t := range []string{"easy", "medium", "hard", "ood_d", "ood_n", "ood_dn"} {
		if g == t {
			return i
		}
	}
	return 100
}
