package reports

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sync"
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
