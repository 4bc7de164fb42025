package records

import (
	"fmt"
	"math"
	"sort"
)

// Bounds on the metrics a record may carry, shared by report, check and
// bench. Validate refuses what no metric can be: a negative or infinite
// m1, m2, sw2 (each is a distance or a norm, so finite and ≥ 0; NaN is an
// unscorable point). Within those, a value can still be absurd (a
// hand-edited or corrupted line, or an overflow short of +Inf, such as
// m1 = 1e308): Implausible flags a metric beyond
//
//   - PlausibilityFactor × its scale, the scale being the prior's M1
//     when the record carries it (diagnostic PriorM1Diagnostic, for m1
//     only), else the median of that metric over every scored record of
//     the same suite and setting (all methods, seeds and budgets) when
//     there are at least minPeers of them; or
//   - MetricCeiling, whatever the scale: no benchmark task's posterior is
//     that far from anything (their parameters are O(1)–O(10³)).
//
// A flagged metric is an answer 10⁶ times worse than what the other
// methods made of the same task: at best a diverged fit, at worst a
// corrupt file. Either way a mean over it says nothing, so readers leave
// it out (ExcludeImplausible) and say where it was.
const (
	PlausibilityFactor = 1e6
	MetricCeiling      = 1e12
	// PriorM1Diagnostic is the diagnostic that, when a record carries it,
	// holds M1 of the prior mean against the reference: the scale of the
	// record's m1.
	PriorM1Diagnostic = "prior_m1"
	minPeers          = 3
	// FlagImplausible is the flag ExcludeImplausible sets on a record
	// whose metric it left out.
	FlagImplausible = "implausible"
)

// ImplausibleMetric is one metric beyond its bound.
type ImplausibleMetric struct {
	Where  string // file:line of the record ("" when not read from a file)
	Key    string // the record's Key
	Metric string // m1, m2 or sw2
	Value  float64
	Bound  float64
	Basis  string // what the bound is: "1e+06 × the prior's m1 0.41", …
}

func (m ImplausibleMetric) String() string {
	where := m.Where
	if where == "" {
		where = m.Key
	}
	return fmt.Sprintf("%s: %s = %g is implausible: beyond %.3g (%s)", where, m.Metric, m.Value, m.Bound, m.Basis)
}

// metricsOf names a record's bounded metrics.
func metricsOf(r *Record) []struct {
	name string
	v    *Num
} {
	return []struct {
		name string
		v    *Num
	}{{"m1", &r.M1}, {"m2", &r.M2}, {"sw2", &r.SW2}}
}

// Implausible lists the metrics of recs beyond their bounds (see the
// package's bounds above), in record order; where gives a record's
// file:line by Key (nil, or a missing key, leaves Where empty).
func Implausible(recs []Record, where map[string]string) []ImplausibleMetric {
	medians := peerMedians(recs)
	var out []ImplausibleMetric
	for i := range recs {
		r := &recs[i]
		if r.Failed() {
			continue
		}
		for _, m := range metricsOf(r) {
			v := float64(*m.v)
			if math.IsNaN(v) {
				continue
			}
			bound, basis := MetricBound(r, m.name, medians[peerKey(r, m.name)])
			if v > bound {
				out = append(out, ImplausibleMetric{Where: where[r.Key()], Key: r.Key(), Metric: m.name, Value: v, Bound: bound, Basis: basis})
			}
		}
	}
	return out
}

// MetricBound is the largest plausible value of metric (m1, m2 or sw2)
// in r, given the median of that metric over r's setting (NaN when there
// are too few records to say), and what it rests on. Bench calls it on a
// record it is about to write, with the setting's median so far.
func MetricBound(r *Record, metric string, median float64) (float64, string) {
	if metric == "m1" {
		if p, ok := r.Diagnostics[PriorM1Diagnostic]; ok && float64(p) > 0 && !math.IsInf(float64(p), 0) {
			b := PlausibilityFactor * float64(p)
			return math.Min(b, MetricCeiling), fmt.Sprintf("%g × the prior's m1 %.3g", PlausibilityFactor, float64(p))
		}
	}
	if median > 0 && !math.IsNaN(median) {
		if b := PlausibilityFactor * median; b < MetricCeiling {
			return b, fmt.Sprintf("%g × the median %s %.3g of setting %s", PlausibilityFactor, metric, median, r.Setting)
		}
	}
	return MetricCeiling, fmt.Sprintf("the ceiling %g of any metric", MetricCeiling)
}

func peerKey(r *Record, metric string) string { return r.Suite + "|" + r.Setting + "|" + metric }

// peerMedians is the median of each metric over each setting's scored
// records, for settings with at least minPeers finite values (NaN
// otherwise, so the ceiling alone applies).
func peerMedians(recs []Record) map[string]float64 {
	vals := map[string][]float64{}
	for i := range recs {
		r := &recs[i]
		if r.Failed() {
			continue
		}
		for _, m := range metricsOf(r) {
			if v := float64(*m.v); !math.IsNaN(v) {
				vals[peerKey(r, m.name)] = append(vals[peerKey(r, m.name)], v)
			}
		}
	}
	out := make(map[string]float64, len(vals))
	for k, v := range vals {
		if len(v) < minPeers {
			out[k] = math.NaN()
			continue
		}
		sort.Float64s(v)
		n := len(v)
		out[k] = (v[(n-1)/2] + v[n/2]) / 2
	}
	return out
}

// ExcludeImplausible sets every flagged metric of l's records to NaN (an
// unscorable point, which the report counts as an exclusion) and returns
// what it flagged, each with its file:line: a report's means then say
// something, and the caller says where the absurd values were.
func (l *Loaded) ExcludeImplausible() []ImplausibleMetric {
	bad := Implausible(l.Records, l.Where)
	if len(bad) == 0 {
		return nil
	}
	flagged := map[string]ImplausibleMetric{}
	for _, b := range bad {
		flagged[b.Key+"|"+b.Metric] = b
	}
	for i := range l.Records {
		r := &l.Records[i]
		for _, m := range metricsOf(r) {
			b, ok := flagged[r.Key()+"|"+m.name]
			if !ok {
				continue
			}
			*m.v = Num(math.NaN())
			// The report counts flags per method: the point shows up
			// there too, not only as an exclusion.
			if r.Flags == nil {
				r.Flags = map[string]string{}
			}
			r.Flags[FlagImplausible] = b.String()
		}
	}
	return bad
}
