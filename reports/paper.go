package reports

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/afin-bench/afin/records"
)

// paperValuesJSON holds the AFIN paper's published numbers, each with the
// LaTeX label of the table it was read from. They live in one data file,
// not in code, so a reader can check every value against the paper and a
// correction is a one-line diff.
//
//go:embed paper_values.json
var paperValuesJSON []byte

// PaperValue is one published number: a metric of a method (and
// variant) on a suite's group, as mean and, where printed, sd.
type PaperValue struct {
	Table   string   `json:"table"` // LaTeX label, e.g. "tab:extrapolate-highdn"
	Suite   string   `json:"suite"`
	Group   string   `json:"group"` // a records.Record group, "all" for a suite average
	Method  string   `json:"method"`
	Variant string   `json:"variant,omitempty"`
	Metric  string   `json:"metric"` // m1, m2, sw2, seconds, pareto_k, max_weight, entropy_ratio, energy_gap
	Mean    float64  `json:"mean"`
	SD      *float64 `json:"sd,omitempty"`
	Note    string   `json:"note,omitempty"`
}

// PaperValues is the data file.
type PaperValues struct {
	Source   string       `json:"source"`
	Hardware string       `json:"hardware"`
	Values   []PaperValue `json:"values"`
}

var (
	paperOnce sync.Once
	paperData *PaperValues
	paperErr  error
)

// Paper returns the embedded published values, parsed and checked once.
func Paper() (*PaperValues, error) {
	paperOnce.Do(func() { paperData, paperErr = parsePaperValues(paperValuesJSON) })
	return paperData, paperErr
}

// parsePaperValues decodes the data file and rejects a value without a
// table reference or a finite mean: a number nobody can trace back to
// the paper must not appear beside ours.
func parsePaperValues(data []byte) (*PaperValues, error) {
	var pv PaperValues
	if err := json.Unmarshal(data, &pv); err != nil {
		return nil, fmt.Errorf("paper values: %w", err)
	}
	if len(pv.Values) == 0 {
		return nil, fmt.Errorf("paper values: no values")
	}
	seen := map[string]bool{}
	for i, v := range pv.Values {
		switch {
		case v.Table == "":
			return nil, fmt.Errorf("paper values: values[%d]: no table reference", i)
		case v.Suite == "" || v.Group == "" || v.Method == "" || v.Metric == "":
			return nil, fmt.Errorf("paper values: values[%d] (%s): suite, group, method and metric are required", i, v.Table)
		case math.IsNaN(v.Mean) || math.IsInf(v.Mean, 0):
			return nil, fmt.Errorf("paper values: values[%d] (%s): mean must be finite", i, v.Table)
		}
		k := v.key()
		if seen[k] {
			return nil, fmt.Errorf("paper values: values[%d] (%s): %s given twice", i, v.Table, k)
		}
		seen[k] = true
	}
	return &pv, nil
}

func (v PaperValue) key() string {
	return v.Suite + "|" + v.Group + "|" + v.Method + "|" + v.Variant + "|" + v.Metric
}

// lookup finds a published value; ok is false when the paper has none
// (or the data file failed to parse, which its test rules out).
func paperLookup(suite, group, method, variant, metric string) (PaperValue, bool) {
	pv, err := Paper()
	if err != nil {
		return PaperValue{}, false
	}
	want := PaperValue{Suite: suite, Group: group, Method: method, Variant: variant, Metric: metric}.key()
	for _, v := range pv.Values {
		if v.key() == want {
			return v, true
		}
	}
	return PaperValue{}, false
}

// paperCell writes a published value as the paper's tables do (mean ± sd
// when printed) and ours minus it, so the gap reads at a glance.
func paperCell(v PaperValue, ours float64) Cell {
	c := Cell{Text: fmtNum(v.Mean), TeX: "$" + texNum(v.Mean)}
	if v.SD != nil {
		c.Text += " ± " + fmtNum(*v.SD)
		c.TeX += " \\pm " + texNum(*v.SD)
	}
	c.TeX += "$"
	if !math.IsNaN(ours) {
		d := ours - v.Mean
		sign := "+"
		if d < 0 {
			sign = "−"
		}
		c.Text += fmt.Sprintf(" (Δ %s%s)", sign, fmtNum(math.Abs(d)))
		c.TeX += fmt.Sprintf(" ($\\Delta$ %s%s)", map[string]string{"+": "+", "−": "$-$"}[sign], texNum(math.Abs(d)))
	}
	return c
}

// paperPrefix starts the name of every table row that holds the paper's
// numbers rather than this run's.
const paperPrefix = "paper: "

// paperPoints are the paper's headline points for one panel of a suite:
// a series' (seconds, metric) pair where the paper publishes both for
// the scope ("all" for the suite average).
func paperPoints(suite, scope string, m Metric) []paperPoint {
	pv, err := Paper()
	if err != nil {
		return nil
	}
	var out []paperPoint
	for _, v := range pv.Values {
		if v.Suite != suite || v.Group != scope || v.Metric != string(m) {
			continue
		}
		secs, ok := paperLookup(suite, scope, v.Method, v.Variant, "seconds")
		if !ok {
			continue
		}
		out = append(out, paperPoint{series: Series{Method: v.Method, Variant: v.Variant}, seconds: secs.Mean, value: v.Mean, table: v.Table})
	}
	return out
}

// paperHeadlineRows are a headline table's "paper" rows: for each of
// this run's series with a published suite average, the paper's M1, M2,
// SW2 with the difference from ours, and its seconds (its hardware).
func paperHeadlineRows(suite string, final map[Series][]records.Record) [][]Cell {
	var rows [][]Cell
	for _, s := range sortedSeries(final) {
		row := []Cell{plain(paperPrefix + s.Name()), plain(""), plain("")}
		found := false
		for _, m := range Metrics {
			v, ok := paperLookup(suite, "all", s.Method, s.Variant, string(m))
			if !ok {
				row = append(row, plain("—"))
				continue
			}
			found = true
			row[1] = plain(v.Table)
			ours, _ := meanSD(collect(final[s], m.Value).xs)
			row = append(row, paperCell(v, ours))
		}
		if !found {
			continue
		}
		secs := plain("—")
		if v, ok := paperLookup(suite, "all", s.Method, s.Variant, "seconds"); ok {
			secs = plain(secondsText(v.Mean) + " (paper's GPU)")
		}
		rows = append(rows, append(row, secs, plain(""), plain("")))
	}
	return rows
}

// paperCaption explains a table's paper rows or cells, if it has any.
func paperCaption(t *Table) string {
	for _, r := range t.Rows {
		for _, c := range r {
			if strings.HasPrefix(c.Text, paperPrefix) || strings.Contains(c.Text, "(Δ ") {
				return " Rows and cells marked \"paper\" are the AFIN paper's published values (mean ± sd as printed; the LaTeX table label is given) " +
					"with Δ = this run − paper; the paper ran a ~5M-parameter network on an A100/H100 with 3 seeds and the paper profile's budgets, so Δ measures this run's setup as much as the code."
			}
		}
	}
	return ""
}
