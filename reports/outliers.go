package reports

import (
	"fmt"
	"maps"
	"math"

	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/suite"
)

// A plausible but wrong metric (a scoring bug, a record edited by hand,
// a run that went wrong without raising a flag) passes records'
// MetricBound and moves a method's headline mean: one NUTS m1 of 50
// among values near 0.03 lifts the mean over 48 settings from 0.031 to
// 1.07. The report marks such a record, by this rule:
//
//	an unflagged record's M1, M2 or SW2 is an outlier when it is more
//	than outlierFactor times above, or below 1/outlierFactor of, the
//	median of the same metric over its method's other records in the
//	same setting (every seed and budget), given at least
//	outlierMinOthers of them.
//
// The ratio to a median of the others, not a z-score: a setting has 2 to
// 15 records of a method, too few for a spread (a MAD over 3 values is
// often 0), while a ratio needs none. Budgets are pooled because the
// records of one setting differ by budget more than by anything else.

// outlierFactor is 100: on two quick-profile synthetic runs (966 and
// 1,752 metric values, 354 and 627 cells of setting × method × metric,
// measured on 2026-11-29 with the shipped checkpoint), the largest ratio
// of a value to the median of its method's other values in its setting
// was 12× (AFIN+SNIS at 100 proposals; 99.9% were under 8×) and the
// smallest 0.10 (AFIN+SNIS at 30,000 proposals against its smaller
// budgets): 100 leaves a factor of 8 above and 10 below what the runs
// themselves show.
const outlierFactor = 100

// outlierMinOthers is the fewest other records a median is taken over:
// against one other record there is no telling which of two is off.
const outlierMinOthers = 2

// outlierFlag is the flag the report gives an outlier (records.Record's
// Flags: the tables count and mark it as any other).
const outlierFlag = "outlier"

// outlierWords are the flag's words in the tables: the rule in brief.
func outlierWords() string {
	return fmt.Sprintf("outlier (> %d× or < 1/%d of its method's median in the setting)", outlierFactor, outlierFactor)
}

// OutlierRule states the rule in one sentence, for the report's readers.
func OutlierRule() string {
	return fmt.Sprintf("a record with no flag whose M1, M2 or SW2 is more than %d× above or below the median of its method's other records in the same setting (every seed and budget, at least %d of them) is marked as an outlier; it stays in the means",
		outlierFactor, outlierMinOthers)
}

// markOutliers gives each outlier of recs (see the rule above) the
// outlier flag, on a copy of its flags, and returns one line per outlier
// saying which record, which metric and by how much.
func markOutliers(recs []records.Record) []string {
	type cellKey struct {
		suite, setting string
		series         Series
	}
	cells := map[cellKey][]int{}
	var order []cellKey
	for i := range recs {
		r := &recs[i]
		if r.Failed() || suite.ScoringOf(r.Suite) != suite.ByReference {
			continue
		}
		k := cellKey{r.Suite, r.Setting, seriesOf(r)}
		if cells[k] == nil {
			order = append(order, k)
		}
		cells[k] = append(cells[k], i)
	}
	var lines []string
	for _, k := range order {
		idx := cells[k]
		if len(idx) < outlierMinOthers+1 {
			continue
		}
		for _, i := range idx {
			if len(recordFlags(&recs[i])) > 0 {
				continue // already marked, and its flag says why
			}
			if line := outlierLine(recs, idx, i); line != "" {
				r := &recs[i]
				r.Flags = maps.Clone(r.Flags)
				if r.Flags == nil {
					r.Flags = map[string]string{}
				}
				r.Flags[outlierFlag] = line
				lines = append(lines, line)
			}
		}
	}
	return lines
}

// outlierLine says why recs[i] is an outlier among recs[idx] ("" when it
// is not): its first metric beyond the rule.
func outlierLine(recs []records.Record, idx []int, i int) string {
	r := &recs[i]
	for _, m := range Metrics {
		v := m.Value(r)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue // not finite: the tables already count it as n/a
		}
		var others []float64
		for _, j := range idx {
			if o := m.Value(&recs[j]); j != i && !math.IsNaN(o) && !math.IsInf(o, 0) {
				others = append(others, o)
			}
		}
		if len(others) < outlierMinOthers {
			continue
		}
		med := median(others)
		if !(med > 0) || (v <= outlierFactor*med && v >= med/outlierFactor) {
			continue
		}
		return fmt.Sprintf("%s %s seed %d %s at %d %s: %s %s is %s× the median %s of its method's %d other records in this setting (outlier rule: more than %d× above or below)",
			r.Suite, r.Setting, r.Seed, seriesOf(r).Name(), r.Budget, r.BudgetKind, m, fmtNum(v), fmtNum(v/med), fmtNum(med), len(others), outlierFactor)
	}
	return ""
}
