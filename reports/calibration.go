package reports

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/afin-bench/afin/calibration"
	"github.com/afin-bench/afin/records"
)

// The calibration section (issue 18): per difficulty tier and method, the
// SBC verdicts of package calibration from the records of the calibration
// suite, the expected coverage, z-scores and contraction, and a rank
// ECDF-difference panel with its simultaneous band.

// calibrationCell is the pooled SBC of one (tier, method).
type calibrationCell struct {
	tier, method string
	sum          *calibration.Summary
	skipped      int // records without usable ranks
}

// calibrationCells pools records by (group, method); within a group every
// task has the same d.
func calibrationCells(recs []records.Record) ([]calibrationCell, error) {
	type key struct{ tier, method string }
	ranks := map[key][]*calibration.TaskRanks{}
	skipped := map[key]int{}
	for i := range recs {
		r := &recs[i]
		k := key{r.Group, r.Method}
		m := make(map[string]float64, len(r.Diagnostics))
		for name, v := range r.Diagnostics {
			m[name] = float64(v)
		}
		tr, ok := calibration.FromNumbers(m, r.D)
		if !ok {
			skipped[k]++
			continue
		}
		ranks[k] = append(ranks[k], tr)
	}
	var keys []key
	for k := range ranks {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if a, b := tierOrder(keys[i].tier), tierOrder(keys[j].tier); a != b {
			return a < b
		}
		return methodOrder(keys[i].method) < methodOrder(keys[j].method)
	})
	var out []calibrationCell
	for _, k := range keys {
		if len(ranks[k]) < 2 {
			continue
		}
		s, err := calibration.Summarize(ranks[k])
		if err != nil {
			return nil, fmt.Errorf("calibration %s/%s: %w", k.tier, k.method, err)
		}
		out = append(out, calibrationCell{tier: k.tier, method: k.method, sum: s, skipped: skipped[k]})
	}
	return out, nil
}

func tierOrder(t string) int {
	switch t {
	case "easy":
		return 0
	case "medium":
		return 1
	case "hard":
		return 2
	}
	return 3
}

// calibrationSection is the report section of the calibration suite.
func calibrationSection(recs []records.Record) Section {
	sec := Section{ID: "calibration", Title: "Calibration (simulation-based)",
		Intro: "Ranks of the true latent among the posterior draws (100 per task, pooled per tier over the 16 prior–likelihood pairs. " +
			"A group passes when every member's rank ECDF stays inside its simultaneous 95% band (Säilynoja et al. 2022; Bonferroni over a group's members). " +
			"z = (posterior mean − truth)/posterior sd should have mean 0 and sd 1; coverage is of central credible intervals."}
	cells, err := calibrationCells(recs)
	if err != nil {
		sec.Intro += " Error: " + err.Error()
		return sec
	}
	sec.Tables = append(sec.Tables, calibrationTable(cells))
	for _, c := range cells {
		sec.Charts = append(sec.Charts, ecdfChart(c))
	}
	return sec
}

// calibrationTable is one row per (tier, method).
func calibrationTable(cells []calibrationCell) *Table {
	t := &Table{Name: "calibration_sbc", Title: "Simulation-based calibration per tier and method",
		Caption:   "Verdicts from simultaneous 95% rank-ECDF bands; z-scores mean ± sd; coverage of the central 50% and 90% credible intervals; mean posterior contraction.",
		Header:    []string{"Tier", "Method", "Tasks", "Coordinates", "log p̃", "Projection", "z", "Cov. 50%", "Cov. 90%", "Contraction"},
		RuleAfter: map[int]bool{}}
	verdict := func(g calibration.Group) Cell {
		if g.Pass {
			return plain("pass")
		}
		return Cell{Text: "FAIL", TeX: "\\textbf{fail}", Bold: true}
	}
	for i, c := range cells {
		s := c.sum
		coord := s.Groups[0]
		row := []Cell{plain(c.tier), plain(displayName(c.method)), plain(fmt.Sprint(s.Tasks)),
			verdict(coord), verdict(s.Groups[1]), verdict(s.Groups[2]), meanSDCell(s.ZMean, s.ZSD),
			plain(fmtNum(coord.Coverage[5])), plain(fmtNum(coord.Coverage[9])), plain(fmtNum(s.Contraction))}
		t.Rows = append(t.Rows, row)
		if i+1 < len(cells) && cells[i+1].tier != c.tier {
			t.RuleAfter[i] = true
		}
	}
	return t
}

// ecdfChart draws F̂ − z of every coordinate's ranks with the band of the
// coordinates group.
func ecdfChart(c calibrationCell) Chart {
	g := c.sum.Groups[0]
	line := charts.NewLine()
	id := chartID("calibration", c.tier, c.method)
	status := "pass"
	if !g.Pass {
		status = "FAIL: " + g.Exit
	}
	line.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{Width: "420px", Height: "320px", ChartID: id}),
		charts.WithTitleOpts(opts.Title{Title: displayName(c.method) + " · " + c.tier, Subtitle: status, Left: "center"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithGridOpts(opts.Grid{Left: "60", Right: "20", Top: "60", Bottom: "40"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "fractional rank", NameLocation: "middle", NameGap: 24, Min: 0, Max: 1}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "ECDF − uniform", NameLocation: "middle", NameGap: 42}),
		charts.WithAnimation(false),
	)
	pts := func(ys []float64) []opts.LineData {
		out := make([]opts.LineData, len(ys))
		for i, y := range ys {
			out[i] = opts.LineData{Value: []any{g.Z[i], y}}
		}
		return out
	}
	band := charts.WithLineStyleOpts(opts.LineStyle{Color: "#888888", Type: "dashed"})
	line.AddSeries("band", pts(g.Lower), band).AddSeries("band ", pts(g.Upper), band)
	color := colorOf(Series{Method: c.method})
	for j, d := range g.Diff {
		line.AddSeries(fmt.Sprintf("z%d", j+1), pts(d), charts.WithLineStyleOpts(opts.LineStyle{Color: color, Opacity: opts.Float(0.6)}))
	}
	line.SetSeriesOptions(charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}))
	snip := line.RenderSnippet()
	return Chart{ID: id, Title: displayName(c.method) + " " + c.tier, Element: snip.Element, Script: snip.Script}
}

// CalibrationFailures lists, for the gate, every (tier, method) of the
// calibration suite's records whose SBC fails, among the methods given
// (typically the calibrated control, nuts, which must pass): `afin check`
// can fail when the list is not empty. Errors pooling the records are
// failures too.
func CalibrationFailures(recs []records.Record, methods ...string) []string {
	var cal []records.Record
	var out []string
	for _, r := range recs {
		switch {
		case r.Suite != "calibration":
		case r.Failed():
			// A failed unit of a gated method fails the gate by name.
			if slices.Contains(methods, r.Method) {
				out = append(out, fmt.Sprintf("%s seed %d %s failed: %s", r.Setting, r.Seed, r.Method, records.TruncateError(r.Error, 300)))
			}
		default:
			cal = append(cal, r)
		}
	}
	cells, err := calibrationCells(cal)
	if err != nil {
		return append(out, err.Error())
	}
	for _, c := range cells {
		if !slices.Contains(methods, c.method) || c.sum.Pass {
			continue
		}
		var groups []string
		for _, g := range c.sum.Groups {
			if !g.Pass {
				groups = append(groups, g.Name+" ("+g.Exit+")")
			}
		}
		out = append(out, fmt.Sprintf("%s/%s fails SBC: %s", c.tier, c.method, strings.Join(groups, ", ")))
	}
	return out
}
