package reports

import (
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"github.com/afin-bench/afin/catalog"
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"
)

// Chart is one rendered figure panel: the element and the script that
// go-echarts produces for it.
type Chart struct {
	ID      string
	Title   string
	Element string
	Script  string
}

// Each method's colour and marker are in its catalogue entry (package
// catalog), so a method looks the same in every panel. The
// colours are the Okabe–Ito set (distinct under the common colour-vision
// deficiencies), extended with Paul Tol's muted scheme for the less common
// methods; AFIN and AFIN+SNIS, the pair a reader compares most, are
// orange and reddish purple, far apart in every vision type, and also
// differ in marker shape, so a grey-scale print or a reader who cannot
// tell two colours apart still can. Series without a colour fall back to
// the default cycle.

func markerOf(s Series) string {
	if e, ok := catalog.Lookup(s.Method); ok && e.Marker != "" {
		return e.Marker
	}
	return "circle"
}

var fallback = []string{"#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"}

// colorOf gives a series its method's (and variant's) colour; a
// proposal star takes the colour of the curve it seeds.
func colorOf(s Series) string {
	key := s.Method
	if s.Variant != "" {
		key += "/" + s.Variant
	}
	if e, ok := catalog.Lookup(s.Method); ok {
		if c := e.VariantColours[s.Variant]; c != "" && s.Variant != "" {
			return c
		}
		if e.Colour != "" && s.Variant == "" {
			return e.Colour
		}
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return fallback[int(h.Sum32()%uint32(len(fallback)))]
}

// starSymbol is a five-pointed star as an SVG path (ECharts has no
// built-in star symbol).
const starSymbol = "path://M50,0 L61,35 L98,35 L68,57 L79,91 L50,70 L21,91 L32,57 L2,35 L39,35 Z"

// chartSpec is what one panel shows.
type chartSpec struct {
	id, title, subtitle string
	titleColor          string // "" = default; the paper marks heterogeneous tasks red
	metric              Metric
	curves              []Curve
	// stars are single-point series drawn as stars (proposal quality
	// before SNIS); curves with one point are drawn as plain markers.
	stars []Curve
	// paper are the paper's published points for this panel, drawn as
	// hollow pins so they cannot be mistaken for this run's.
	paper []paperPoint
}

// paperPoint is one published (seconds, metric) point.
type paperPoint struct {
	series  Series
	seconds float64
	value   float64
	table   string
}

// buildChart renders one log–log panel: each curve as a line with a ±1 sd
// band (a transparent lower series plus a stacked, filled difference
// series) and its budgets written beside its points, stars as star
// markers, the paper's points as hollow pins.
func buildChart(spec chartSpec) Chart {
	line := charts.NewLine()
	var legend []string
	for _, c := range spec.curves {
		legend = append(legend, c.Series.Name())
	}
	for _, c := range spec.stars {
		legend = append(legend, c.Series.Name())
	}
	for _, p := range spec.paper {
		legend = append(legend, paperName(p.series))
	}
	line.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{Width: "640px", Height: "420px", ChartID: spec.id}),
		charts.WithTitleOpts(opts.Title{Title: spec.title, Subtitle: spec.subtitle, Left: "center", TitleStyle: titleStyle(spec.titleColor)}),
		charts.WithLegendOpts(opts.Legend{Data: legend, Bottom: "0", Type: "scroll"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithGridOpts(opts.Grid{Left: "70", Right: "30", Top: "60", Bottom: "80"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "log", Name: "wall-clock seconds (mean)", NameLocation: "middle", NameGap: 28}),
		charts.WithYAxisOpts(opts.YAxis{Type: "log", Name: spec.metric.Label() + ", mean", NameLocation: "middle", NameGap: 50}),
		charts.WithAnimation(false),
	)
	for _, c := range spec.curves {
		addCurve(line, c)
	}
	for _, c := range spec.stars {
		addStar(line, c)
	}
	for _, p := range spec.paper {
		addPaperPoint(line, p)
	}
	snip := line.RenderSnippet()
	return Chart{ID: spec.id, Title: spec.title, Element: snip.Element, Script: snip.Script}
}

// addCurve draws one curve with its band and a budget label per point,
// so a reader sees which budget bought which accuracy without the
// tooltip.
func addCurve(line *charts.Line, c Curve) {
	color := colorOf(c.Series)
	name := c.Series.Name()
	var main []opts.LineData
	hasBand := false
	for _, p := range c.Points {
		if !(p.Seconds > 0) || !(p.Mean > 0) {
			continue // a log axis cannot place zero or NaN
		}
		main = append(main, opts.LineData{Name: budgetLabel(p.Budget), Value: []any{p.Seconds, p.Mean}})
		if p.SD > 0 {
			hasBand = true
		}
	}
	if len(main) == 0 {
		return
	}
	if hasBand {
		addBand(line, name+" ±sd", color, c.Points)
	}
	size := 8
	if len(main) == 1 {
		size = 12
	}
	line.AddSeries(name, main,
		charts.WithLineChartOpts(opts.LineChart{Symbol: markerOf(c.Series), SymbolSize: size, ShowSymbol: opts.Bool(true)}),
		charts.WithLineStyleOpts(opts.LineStyle{Color: color, Width: 2}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
		charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Position: "top", Formatter: "{b}", FontSize: 10, Color: color}),
	)
}

func addStar(line *charts.Line, c Curve) {
	color := colorOf(c.Series)
	var pts []opts.LineData
	for _, p := range c.Points {
		if p.Seconds > 0 && p.Mean > 0 {
			pts = append(pts, opts.LineData{Value: []any{p.Seconds, p.Mean}})
		}
	}
	if len(pts) == 0 {
		return
	}
	line.AddSeries(c.Series.Name(), pts,
		charts.WithLineChartOpts(opts.LineChart{Symbol: starSymbol, SymbolSize: 20, ShowSymbol: opts.Bool(true)}),
		charts.WithLineStyleOpts(opts.LineStyle{Width: 0, Opacity: opts.Float(0)}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: color, BorderColor: "#000", BorderWidth: 0.5}),
	)
}

// addPaperPoint draws a published point as a hollow pin in its method's
// colour, labelled "paper", so it reads as a reference, not a result.
func addPaperPoint(line *charts.Line, p paperPoint) {
	if !(p.seconds > 0) || !(p.value > 0) {
		return
	}
	color := colorOf(p.series)
	line.AddSeries(paperName(p.series), []opts.LineData{{Name: "paper", Value: []any{p.seconds, p.value}}},
		charts.WithLineChartOpts(opts.LineChart{Symbol: "emptyPin", SymbolSize: 22, ShowSymbol: opts.Bool(true)}),
		charts.WithLineStyleOpts(opts.LineStyle{Width: 0, Opacity: opts.Float(0)}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: color, BorderColor: color, BorderWidth: 2}),
		charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Position: "right", Formatter: "paper", FontSize: 10, Color: "#333"}),
	)
}

func paperName(s Series) string { return "paper: " + s.Name() }

// budgetLabel spells a budget short: 500, 1k, 50k, 1M.
func budgetLabel(b int) string {
	switch {
	case b >= 1_000_000 && b%100_000 == 0:
		return strconv.FormatFloat(float64(b)/1e6, 'f', -1, 64) + "M"
	case b >= 1000 && b%100 == 0:
		return strconv.FormatFloat(float64(b)/1e3, 'f', -1, 64) + "k"
	}
	return strconv.Itoa(b)
}

// addBand draws the ±1 sd band of a curve as one filled polygon: a custom
// series whose renderItem maps the upper edge left to right and the lower
// edge back through the axes' own (log) scales. Stacked line areas cannot
// do this: ECharts stacks by data index, not by x, on value axes.
func addBand(line *charts.Line, name, color string, pts []CurvePoint) {
	var up, lo []string
	var first []opts.LineData
	for _, p := range pts {
		if !(p.Seconds > 0) || !(p.Mean > 0) {
			continue
		}
		l, h := bandLimits(p.Mean, p.SD)
		up = append(up, fmt.Sprintf("[%g,%g]", p.Seconds, h))
		lo = append(lo, fmt.Sprintf("[%g,%g]", p.Seconds, l))
		if first == nil {
			first = []opts.LineData{{Value: []any{p.Seconds, p.Mean}}}
		}
	}
	if len(up) < 2 {
		return
	}
	js := fmt.Sprintf(`function (params, api) {
		if (params.dataIndex !== 0) { return null; }
		var up = [%s], lo = [%s], pts = [], i;
		for (i = 0; i < up.length; i++) { pts.push(api.coord(up[i])); }
		for (i = lo.length - 1; i >= 0; i--) { pts.push(api.coord(lo[i])); }
		return { type: 'polygon', shape: { points: pts }, style: { fill: '%s', opacity: 0.18 }, silent: true };
	}`, strings.Join(up, ","), strings.Join(lo, ","), color)
	line.AddSeries(name, first, charts.WithCustomChartOpts(opts.CustomChart{RenderItem: opts.FuncOpts(js)}))
	line.MultiSeries[len(line.MultiSeries)-1].Type = types.ChartCustom
}

// bandLimits clamps the mean ± sd band to positive values, since a log
// axis cannot show zero or negatives: the lower edge stops at a tenth of
// the mean.
func bandLimits(mean, sd float64) (lo, hi float64) {
	lo, hi = mean-sd, mean+sd
	if lo < mean/10 {
		lo = mean / 10
	}
	if math.IsNaN(hi) {
		hi = mean
	}
	return lo, hi
}

func titleStyle(color string) *opts.TextStyle {
	if color == "" {
		return nil
	}
	return &opts.TextStyle{Color: color}
}

// chartID makes a stable DOM id from parts.
func chartID(parts ...string) string {
	id := "chart_" + strings.Join(parts, "_")
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, id)
}

func metricTitle(m Metric) string {
	switch m {
	case MetricM1:
		return "M1"
	case MetricM2:
		return "M2"
	}
	return "SW2"
}
