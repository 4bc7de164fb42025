package reports

import (
	"fmt"
	"github.com/afin-bench/afin/internal/moments"
	"math"
	"sort"

	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/records"
)

// Metric names a record's accuracy metric.
type Metric string

// The three accuracy metrics of the paper's App. D.3.
const (
	MetricM1  Metric = "m1"
	MetricM2  Metric = "m2"
	MetricSW2 Metric = "sw2"
)

// Metrics lists the metrics in the order the paper's figures show them.
var Metrics = []Metric{MetricM1, MetricM2, MetricSW2}

// Label is the metric's axis label.
func (m Metric) Label() string {
	switch m {
	case MetricM1:
		return "M1 (mean L2 error)"
	case MetricM2:
		return "M2 (covariance Frobenius error)"
	}
	return "SW2 (sliced Wasserstein-2)"
}

// Value reads the metric from a record.
func (m Metric) Value(r *records.Record) float64 {
	switch m {
	case MetricM1:
		return float64(r.M1)
	case MetricM2:
		return float64(r.M2)
	}
	return float64(r.SW2)
}

// Series identifies one curve: a method, its variant and stage.
type Series struct {
	Method, Variant, Stage string
}

// Name is the curve's legend label, e.g. "FRVI+SNIS (1k)"; a proposal
// star is named after the method that made it: "FRVI (1k) proposal".
func (s Series) Name() string {
	method := s.Method
	if e, ok := catalog.Lookup(method); ok && s.Stage == "proposal" && e.Proposal != "" {
		method = e.Proposal
	}
	n := displayName(method)
	if s.Variant != "" {
		n += " (" + s.Variant + ")"
	}
	if s.Stage == "proposal" {
		n += " proposal"
	}
	return n
}

func seriesOf(r *records.Record) Series {
	return Series{Method: r.Method, Variant: r.Variant, Stage: r.Stage}
}

// displayName is the paper's spelling of a method (its catalogue label).
func displayName(method string) string {
	if e, ok := catalog.Lookup(method); ok {
		return e.DisplayName()
	}
	return method
}

// methodOrder sorts series the way the paper's legends list methods; a
// method without a legend place comes after the ranked ones.
func methodOrder(method string) int {
	if e, ok := catalog.Lookup(method); ok && e.Legend > 0 {
		return e.Legend - 1
	}
	return 100
}

func lessSeries(a, b Series) bool {
	if oa, ob := methodOrder(a.Method), methodOrder(b.Method); oa != ob {
		return oa < ob
	}
	if a.Method != b.Method {
		return a.Method < b.Method
	}
	if va, vb := variantOrder(a.Variant), variantOrder(b.Variant); va != vb {
		return va < vb
	}
	return a.Stage < b.Stage
}

// variantOrder sorts "1k" < "5k" < "10k" numerically.
func variantOrder(v string) float64 {
	x, mult := 0.0, 1.0
	digits := 0
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			x = 10*x + float64(c-'0')
			digits++
		case c == 'k':
			mult = 1000
		}
	}
	if digits == 0 {
		return math.Inf(1)
	}
	return x * mult
}

// CurvePoint is one budget of a curve: the mean over seeds of the
// per-seed averages over settings, with the standard deviation over seeds.
type CurvePoint struct {
	Budget  int
	Seconds float64 // mean wall-clock seconds
	Mean    float64
	SD      float64 // over seeds; 0 with one seed
	Seeds   int
}

// Curve is a series' points in budget order.
type Curve struct {
	Series Series
	Points []CurvePoint
}

// Curves aggregates records into one curve per series for a metric: at
// each budget, for each seed, the metric and the seconds are averaged over
// the settings; the curve point is the mean over seeds, its band the
// standard deviation over seeds (the paper's "mean curves with
// one-standard-deviation bands over three seeds"). Non-finite metric
// values are left out of the averages.
func Curves(recs []records.Record, m Metric) []Curve {
	type bk struct {
		s      Series
		budget int
		seed   uint64
	}
	type acc struct {
		sum, secs float64
		n         int
	}
	cells := map[bk]*acc{}
	for i := range recs {
		r := &recs[i]
		v := m.Value(r)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		k := bk{seriesOf(r), r.Budget, r.Seed}
		a := cells[k]
		if a == nil {
			a = &acc{}
			cells[k] = a
		}
		a.sum += v
		a.secs += float64(r.Seconds)
		a.n++
	}
	type pk struct {
		s      Series
		budget int
	}
	perSeed := map[pk][][2]float64{}
	for k, a := range cells {
		p := pk{k.s, k.budget}
		perSeed[p] = append(perSeed[p], [2]float64{a.sum / float64(a.n), a.secs / float64(a.n)})
	}
	bySeries := map[Series][]CurvePoint{}
	for p, vals := range perSeed {
		var ys, xs []float64
		for _, v := range vals {
			ys = append(ys, v[0])
			xs = append(xs, v[1])
		}
		mean, sd := meanSD(ys)
		sec, _ := meanSD(xs)
		bySeries[p.s] = append(bySeries[p.s], CurvePoint{Budget: p.budget, Seconds: sec, Mean: mean, SD: sd, Seeds: len(vals)})
	}
	var out []Curve
	for s, pts := range bySeries {
		sort.Slice(pts, func(i, j int) bool { return pts[i].Budget < pts[j].Budget })
		out = append(out, Curve{Series: s, Points: pts})
	}
	sort.Slice(out, func(i, j int) bool { return lessSeries(out[i].Series, out[j].Series) })
	return out
}

// meanSD is the mean and the sample standard deviation (n−1; 0 for one
// value) of xs.
func meanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	// A single run has no spread to show: sd 0, as moments gives.
	return moments.MeanSD(xs, 1)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// filter returns the records for which keep is true.
func filter(recs []records.Record, keep func(*records.Record) bool) []records.Record {
	var out []records.Record
	for i := range recs {
		if keep(&recs[i]) {
			out = append(out, recs[i])
		}
	}
	return out
}

// finalBudget returns, per series, the records at the series' largest
// budget: the point tables report.
func finalBudget(recs []records.Record) map[Series][]records.Record {
	top := map[Series]int{}
	for i := range recs {
		s := seriesOf(&recs[i])
		if b, ok := top[s]; !ok || recs[i].Budget > b {
			top[s] = recs[i].Budget
		}
	}
	out := map[Series][]records.Record{}
	for i := range recs {
		s := seriesOf(&recs[i])
		if recs[i].Budget == top[s] {
			out[s] = append(out[s], recs[i])
		}
	}
	return out
}

func sortedSeries[V any](m map[Series]V) []Series {
	out := make([]Series, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return lessSeries(out[i], out[j]) })
	return out
}

// groups returns the distinct groups of recs in a fixed order: the
// paper's difficulty and split orders first, then the rest sorted.
func groups(recs []records.Record) []string {
	seen := map[string]bool{}
	for i := range recs {
		seen[recs[i].Group] = true
	}
	var out []string
	for _, g := range []string{"easy", "medium", "hard", "ood_d", "ood_n", "ood_dn"} {
		if seen[g] {
			out = append(out, g)
			delete(seen, g)
		}
	}
	var rest []string
	for g := range seen {
		rest = append(rest, g)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// groupLabel is how tables and titles spell a group.
func groupLabel(g string) string {
	switch g {
	case "easy":
		return "Easy (d=4, N=256)"
	case "medium":
		return "Medium (d=8, N=64)"
	case "hard":
		return "Hard (d=16, N=1)"
	case "ood_d":
		return "OOD d"
	case "ood_n":
		return "OOD N"
	case "ood_dn":
		return "OOD d,N"
	}
	return g
}

// mean is the mean of xs (NaN for none).
func mean(xs []float64) float64 {
	m, _ := meanSD(xs)
	return m
}

// countSeeds is the number of distinct seeds among recs.
func countSeeds(recs []records.Record) int {
	seen := map[uint64]bool{}
	for i := range recs {
		seen[recs[i].Seed] = true
	}
	return len(seen)
}

// seedsText says how many seeds a figure or table averages: "1 seed"
// or "3 seeds".
func seedsText(recs []records.Record) string {
	if n := countSeeds(recs); n != 1 {
		return fmt.Sprintf("%d seeds", n)
	}
	return "1 seed"
}

// bandNote describes the charts' bands honestly: with one seed there is
// no spread over seeds to draw, and a caption must not promise one.
func bandNote(recs []records.Record) string {
	if n := countSeeds(recs); n > 1 {
		return fmt.Sprintf("bands ±1 sd over %d seeds", n)
	}
	return "1 seed, so no ±1 sd band (the paper profile runs 3)"
}
