package reports

import (
	"fmt"
	"math"
	"sort"

	"github.com/afin-bench/afin/calibration"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/suite"
)

// gateMetric is one metric the accuracy gate compares for a suite.
type gateMetric struct {
	key, label string
	// higher is true when a larger value is better (accuracy, AUC).
	higher bool
}

// gateMetricsOf lists the metrics the gate keeps for a suite scored by s,
// in the order its table shows them. Every suite has some: a suite whose
// numbers cannot be gated would pass any change.
func gateMetricsOf(s suite.Scoring) []gateMetric {
	switch s {
	case suite.ByPrediction:
		// The held-out split's, as the paper's Table 8 and the report show
		// them; the training split's say how well the method fits, not how
		// well it predicts.
		return []gateMetric{{"test_acc", "test acc", true}, {"test_nll", "test NLL", false}, {"test_auc", "test AUC", true}}
	case suite.ByRanks:
		return []gateMetric{{"sbc_coverage_err", "coverage error", false}, {"sbc_abs_z_mean", "|z mean|", false}, {"sbc_z_sd_err", "|z sd − 1|", false}}
	}
	return []gateMetric{{"m1", "M1", false}, {"m2", "M2", false}, {"sw2", "SW2", false}}
}

// loss is what the tolerance applies to: the metric itself when lower is
// better, its complement 1 − v when higher is (accuracy and AUC lie in
// [0, 1]). A relative tolerance on the error rate means the same as on
// any other error: 25% on accuracy itself would let 0.85 fall to 0.64,
// 25% on its complement lets it fall to 0.81.
func (m gateMetric) loss(v float64) float64 {
	if m.higher {
		return 1 - v
	}
	return v
}

// regressed reports whether now is worse than base beyond the tolerance.
// A NaN (a metric the run could not compute) or an infinite value is
// always a regression: a broken method must not pass.
func (m gateMetric) regressed(now, base float64, tol Tolerance) bool {
	if math.IsNaN(now) || math.IsInf(now, 0) {
		return true
	}
	return !(m.loss(now) <= m.loss(base)*(1+tol.Relative)+tol.Absolute)
}

// limit is the worst value of the metric that still passes.
func (m gateMetric) limit(base float64, tol Tolerance) float64 {
	l := m.loss(base)*(1+tol.Relative) + tol.Absolute
	if m.higher {
		return 1 - l
	}
	return l
}

// gateNum prints a gated value: NaN as NaN, not as the report's n/a (a
// gate line says what the run produced).
func gateNum(x float64) string {
	if math.IsNaN(x) {
		return "NaN"
	}
	return fmtNum(x)
}

// entryMetrics are an entry's gated values over its scored records.
func entryMetrics(s suite.Scoring, recs []*records.Record) map[string]float64 {
	out := map[string]float64{}
	switch s {
	case suite.ByRanks:
		return calibrationGateStats(recs)
	case suite.ByPrediction:
		for _, m := range gateMetricsOf(s) {
			out[m.key] = meanOf(recs, func(r *records.Record) float64 {
				v, ok := r.Diagnostics[m.key]
				if !ok {
					return math.NaN()
				}
				return float64(v)
			})
		}
		return out
	}
	out["m1"] = meanOf(recs, func(r *records.Record) float64 { return float64(r.M1) })
	out["m2"] = meanOf(recs, func(r *records.Record) float64 { return float64(r.M2) })
	out["sw2"] = meanOf(recs, func(r *records.Record) float64 { return float64(r.SW2) })
	return out
}

// meanOf is the plain mean: a NaN or infinite run makes it NaN or
// infinite, so the gate sees it rather than averaging it away.
func meanOf(recs []*records.Record, get func(*records.Record) float64) float64 {
	sum := 0.0
	for _, r := range recs {
		sum += get(r)
	}
	return sum / float64(len(recs))
}

// calibrationGateStats are the calibration statistics of an entry's
// records, pooled per tier (each tier's tasks share d, which
// calibration.Summarize needs) and averaged over tiers by their tasks:
// the mean absolute gap between the coordinates' expected coverage and
// its nominal level, |mean z| and |sd z − 1|. A calibrated method has
// all three near 0. NaN when no tier has two tasks with ranks.
func calibrationGateStats(recs []*records.Record) map[string]float64 {
	byTier := map[string][]*calibration.TaskRanks{}
	for _, r := range recs {
		m := make(map[string]float64, len(r.Diagnostics))
		for k, v := range r.Diagnostics {
			m[k] = float64(v)
		}
		if tr, ok := calibration.FromNumbers(m, r.D); ok {
			byTier[r.Group] = append(byTier[r.Group], tr)
		}
	}
	tiers := make([]string, 0, len(byTier))
	for t := range byTier {
		tiers = append(tiers, t)
	}
	sort.Strings(tiers) // a fixed order: the sums below are then reproducible
	var cov, zMean, zSD, tasks float64
	for _, t := range tiers {
		s, err := calibration.Summarize(byTier[t])
		if err != nil {
			continue // fewer than two tasks: no pooled statistic
		}
		n := float64(s.Tasks)
		for _, g := range s.Groups {
			if g.Name != calibration.GroupCoordinates {
				continue
			}
			gap := 0.0
			for i, c := range g.Coverage {
				gap += math.Abs(c - calibration.CoverageLevels[i])
			}
			cov += n * gap / float64(len(g.Coverage))
		}
		zMean += n * s.ZMean
		zSD += n * s.ZSD
		tasks += n
	}
	return map[string]float64{
		"sbc_coverage_err": cov / tasks,
		"sbc_abs_z_mean":   math.Abs(zMean / tasks),
		"sbc_z_sd_err":     math.Abs(zSD/tasks - 1),
	}
}

// checkEntryMetrics refuses an entry whose metrics are not the suite's
// gated ones or not finite: a gate against NaN or a misspelt name would
// pass or fail for a reason nobody wrote down.
func checkEntryMetrics(e BaselineEntry) error {
	known := map[string]bool{}
	for _, m := range gateMetricsOf(suite.ScoringOf(e.Suite)) {
		known[m.key] = true
	}
	if len(e.Metrics) == 0 {
		return fmt.Errorf("entry %s has no metrics", e.name())
	}
	for k, v := range e.Metrics {
		if !known[k] {
			return fmt.Errorf("entry %s: metric %q is not one the gate keeps for suite %s", e.name(), k, e.Suite)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("entry %s: metric %s is %s, not a finite number", e.name(), k, gateNum(v))
		}
	}
	return nil
}
