package reports

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/afin-bench/afin/records"
)

// Section is one part of the report: a suite's figures and tables.
type Section struct {
	ID, Title, Intro string
	Charts           []Chart
	Tables           []*Table
}

// Report is everything `afin report` writes, built from records only.
type Report struct {
	Sections   []Section
	Records    int
	Provenance []string // distinct "commit / profile / backend / checkpoint" lines
}

// Tables returns every table of the report in section order.
func (r *Report) Tables() []*Table {
	var out []*Table
	for _, s := range r.Sections {
		out = append(out, s.Tables...)
	}
	return out
}

// Charts returns the number of charts.
func (r *Report) Charts() int {
	n := 0
	for _, s := range r.Sections {
		n += len(s.Charts)
	}
	return n
}

// Build turns records (from any number of results files, merged) into the
// report's figures and tables. Suites without records are left out.
func Build(recs []records.Record) (*Report, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("no records to report")
	}
	rep := &Report{Records: len(recs)}
	bySuite := map[string][]records.Record{}
	prov := map[string]bool{}
	for _, r := range recs {
		bySuite[r.Suite] = append(bySuite[r.Suite], r)
		p := r.Provenance
		line := fmt.Sprintf("suite %s · profile %s · commit %s", r.Suite, p.Profile, short(p.GitCommit))
		if p.GitDirty {
			line += " (dirty)"
		}
		line += " · backend " + p.Backend
		if p.Checkpoint != "" {
			line += " · checkpoint " + short(p.Checkpoint)
		}
		prov[line] = true
	}
	for l := range prov {
		rep.Provenance = append(rep.Provenance, l)
	}
	sort.Strings(rep.Provenance)

	if rs := bySuite["synthetic"]; len(rs) > 0 {
		rep.Sections = append(rep.Sections, syntheticSection(rs))
	}
	if rs := bySuite["snis"]; len(rs) > 0 {
		rep.Sections = append(rep.Sections, snisSection(rs))
	}
	if rs := bySuite["extrapolation"]; len(rs) > 0 {
		rep.Sections = append(rep.Sections, extrapolationSection(rs))
	}
	if rs := bySuite["uci"]; len(rs) > 0 {
		rep.Sections = append(rep.Sections, uciSection(rs))
	}
	if rs := bySuite["calibration"]; len(rs) > 0 {
		rep.Sections = append(rep.Sections, calibrationSection(rs))
	}
	var other []string
	for s := range bySuite {
		switch s {
		case "synthetic", "snis", "extrapolation", "uci", "calibration":
		default:
			other = append(other, s)
		}
	}
	sort.Strings(other)
	for _, s := range other {
		rep.Sections = append(rep.Sections, genericSection(s, bySuite[s]))
	}
	addWorkflowTables(rep, bySuite)
	return rep, nil
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	if s == "" {
		return "unknown"
	}
	return s
}

// scopes are the panels of a grouped figure: all groups pooled, then each.
func scopes(recs []records.Record) []struct{ id, label string } {
	out := []struct{ id, label string }{{"all", "overall"}}
	for _, g := range groups(recs) {
		out = append(out, struct{ id, label string }{g, groupLabel(g)})
	}
	return out
}

func inScope(recs []records.Record, scope string) []records.Record {
	if scope == "all" {
		return recs
	}
	return filter(recs, func(r *records.Record) bool { return r.Group == scope })
}

func syntheticSection(recs []records.Record) Section {
	sec := Section{
		ID:    "synthetic",
		Title: "Synthetic posterior accuracy against wall-clock time (paper Fig. 2; Figs. 5–7 by difficulty)",
		Intro: fmt.Sprintf("%d settings. Points are budgets (SNIS proposals, NUTS post-warm-up draws, FRVI steps); x is the mean wall-clock time, y the metric averaged over settings, bands ±1 sd over seeds.", countSettings(recs)),
	}
	main := filter(recs, func(r *records.Record) bool { return r.Stage == "" })
	for _, sc := range scopes(main) {
		rs := inScope(main, sc.id)
		for _, m := range Metrics {
			sec.Charts = append(sec.Charts, buildChart(chartSpec{
				id:       chartID("synthetic", sc.id, string(m)),
				title:    metricTitle(m) + " · " + sc.label,
				subtitle: fmt.Sprintf("%d settings", countSettings(rs)),
				metric:   m,
				curves:   Curves(rs, m),
			}))
		}
	}
	sec.Tables = append(sec.Tables, headlineTable(main))
	return sec
}

// headlineTable: per method at its largest budget, mean M1/M2/SW2 and the
// median seconds over all settings and seeds.
func headlineTable(recs []records.Record) *Table {
	t := &Table{
		Name:    "headline_synthetic",
		Title:   "Synthetic suite: headline",
		Caption: fmt.Sprintf("Per method at its largest budget: mean M1, M2 and SW2 and median wall-clock seconds over %d settings × seeds.", countRuns(recs)),
		Header:  []string{"Method", "Budget", "Runs", "M1", "M2", "SW2", "Median seconds"},
	}
	final := finalBudget(recs)
	for _, s := range sortedSeries(final) {
		rs := final[s]
		var m1, m2, sw2, secs []float64
		for _, r := range rs {
			m1 = appendFinite(m1, float64(r.M1))
			m2 = appendFinite(m2, float64(r.M2))
			sw2 = appendFinite(sw2, float64(r.SW2))
			secs = append(secs, float64(r.Seconds))
		}
		mean := func(x []float64) Cell { v, _ := meanSD(x); return Cell{Text: fmtNum(v), TeX: "$" + texNum(v) + "$"} }
		t.Rows = append(t.Rows, []Cell{
			plain(s.Name()), plain(fmt.Sprintf("%d %s", rs[0].Budget, rs[0].BudgetKind)), plain(fmt.Sprint(len(rs))),
			mean(m1), mean(m2), mean(sw2), plain(secondsText(median(secs))),
		})
	}
	return t
}

func appendFinite(xs []float64, v float64) []float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return xs
	}
	return append(xs, v)
}

func snisSection(recs []records.Record) Section {
	sec := Section{
		ID:    "snis",
		Title: "SNIS refinement: AFIN+SNIS against FRVI+SNIS (paper Fig. 3; Figs. 8–10 by difficulty)",
		Intro: "Curves vary the number of SNIS proposals; stars mark each proposal before SNIS. FRVI+SNIS seconds include the FRVI optimisation.",
	}
	curves := filter(recs, func(r *records.Record) bool { return r.Stage == "" && strings.HasSuffix(r.Method, "snis") })
	stars := filter(recs, func(r *records.Record) bool { return r.Stage == "proposal" })
	for _, sc := range scopes(recs) {
		for _, m := range Metrics {
			// A proposal is drawn once per budget; its star is its
			// largest-budget point.
			var starCurves []Curve
			for _, c := range Curves(inScope(stars, sc.id), m) {
				c.Points = c.Points[len(c.Points)-1:]
				starCurves = append(starCurves, c)
			}
			sec.Charts = append(sec.Charts, buildChart(chartSpec{
				id:     chartID("snis", sc.id, string(m)),
				title:  metricTitle(m) + " · " + sc.label,
				metric: m,
				curves: Curves(inScope(curves, sc.id), m),
				stars:  starCurves,
			}))
		}
	}
	sec.Tables = append(sec.Tables, snisDiagnosticsTable(curves))
	return sec
}

// snisDiagnosticsTable is the paper's Table 9 at each SNIS method's
// largest proposal budget: mean ± sd over runs (settings × seeds).
func snisDiagnosticsTable(recs []records.Record) *Table {
	t := &Table{
		Name:      "table9_snis_diagnostics",
		Title:     "SNIS weight-stability diagnostics (paper Table 9)",
		Caption:   "Mean ± sd over runs (settings × seeds) at the largest proposal budget. Lower is better for Pareto-k and max weight, higher for entropy ratio; energy gap is best near zero.",
		Header:    []string{"Split", "Method", "Pareto-k", "Max weight", "Entropy ratio", "Energy gap"},
		RuleAfter: map[int]bool{},
	}
	final := finalBudget(recs)
	diag := []string{"pareto_k", "max_weight", "entropy_ratio", "energy_gap"}
	splits := append(groups(recs), "all")
	for _, g := range splits {
		label := groupLabel(g)
		if g == "all" {
			label = "Overall"
		}
		first := true
		for _, s := range sortedSeries(final) {
			rs := inScope(final[s], g)
			if len(rs) == 0 {
				continue
			}
			row := []Cell{plain(""), plain(s.Name())}
			if first {
				row[0] = plain(label)
				first = false
			}
			for _, k := range diag {
				var xs []float64
				for _, r := range rs {
					xs = appendFinite(xs, float64(r.Diagnostics[k]))
				}
				row = append(row, meanSDCell(meanSD(xs)))
			}
			t.Rows = append(t.Rows, row)
		}
		t.RuleAfter[len(t.Rows)-1] = true
	}
	return t
}

func extrapolationSection(recs []records.Record) Section {
	sec := Section{
		ID:    "extrapolation",
		Title: "Extrapolation beyond the training support (paper Tables 3, 10, 11)",
		Intro: "Two (d, N) configurations per split; entries are mean ± sd over runs (configurations × seeds) at each method's budget, with mean wall-clock seconds in parentheses. Bold: lowest mean per split.",
	}
	main := filter(recs, func(r *records.Record) bool { return r.Stage == "" })
	for _, spec := range []struct {
		m    Metric
		name string
		what string
	}{
		{MetricSW2, "table3_extrapolation_sw2", "sliced Wasserstein-2 distance (paper Table 3)"},
		{MetricM1, "table10_extrapolation_m1", "posterior mean error M1 (paper Table 10)"},
		{MetricM2, "table11_extrapolation_m2", "covariance Frobenius error M2 (paper Table 11)"},
	} {
		sec.Tables = append(sec.Tables, extrapolationTable(main, spec.m, spec.name, spec.what))
	}
	return sec
}

func extrapolationTable(recs []records.Record, m Metric, name, what string) *Table {
	final := finalBudget(recs)
	series := sortedSeries(final)
	t := &Table{
		Name:    name,
		Title:   "Extrapolation: " + what,
		Caption: "Extrapolation beyond the training support: " + what + ", mean ± sd over runs with mean wall-clock seconds in parentheses; bold is the lowest mean in each split.",
		Header:  []string{"Split"},
	}
	for _, s := range series {
		t.Header = append(t.Header, s.Name())
	}
	for _, g := range groups(recs) {
		row := []Cell{plain(groupLabel(g))}
		best, bestIdx := math.Inf(1), -1
		for i, s := range series {
			rs := inScope(final[s], g)
			var xs, secs []float64
			for _, r := range rs {
				xs = appendFinite(xs, m.Value(&r))
				secs = append(secs, float64(r.Seconds))
			}
			if len(xs) == 0 {
				row = append(row, plain("n/a"))
				continue
			}
			mean, sd := meanSD(xs)
			sec, _ := meanSD(secs)
			c := meanSDCell(mean, sd)
			c.Text += " (" + secondsText(sec) + ")"
			c.TeX += " (" + texEscape(secondsText(sec)) + ")"
			row = append(row, c)
			if mean < best {
				best, bestIdx = mean, i
			}
		}
		if bestIdx >= 0 {
			row[bestIdx+1].Bold = true
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func uciSection(recs []records.Record) Section {
	sec := Section{
		ID:    "uci",
		Title: "UCI tasks: accuracy against wall-clock time (paper Fig. 4 for SW2; Figs. 11–12 for M1 and M2)",
		Intro: "One panel per dataset; red titles mark the heterogeneous-likelihood tasks. Seeds vary the methods, not the data. Bands ±1 sd over seeds.",
	}
	main := filter(recs, func(r *records.Record) bool { return r.Stage == "" })
	for _, m := range []Metric{MetricSW2, MetricM1, MetricM2} {
		for _, g := range groups(main) {
			rs := inScope(main, g)
			color := ""
			if rs[0].Likelihood == "heterogeneous" {
				color = "#c00000"
			}
			sec.Charts = append(sec.Charts, buildChart(chartSpec{
				titleColor: color,
				id:         chartID("uci", g, string(m)),
				title:      metricTitle(m) + " · " + g,
				subtitle:   fmt.Sprintf("d=%d, N=%d, %s", rs[0].D, rs[0].N, rs[0].Likelihood),
				metric:     m,
				curves:     Curves(rs, m),
			}))
		}
	}
	sec.Tables = append(sec.Tables, headlineTableNamed(main, "headline_uci", "UCI suite: headline"))
	return sec
}

func headlineTableNamed(recs []records.Record, name, title string) *Table {
	t := headlineTable(recs)
	t.Name, t.Title = name, title
	t.Caption = strings.Replace(t.Caption, "settings × seeds", "tasks × seeds", 1)
	return t
}

func genericSection(suite string, recs []records.Record) Section {
	sec := Section{ID: suite, Title: "Suite " + suite}
	main := filter(recs, func(r *records.Record) bool { return r.Stage == "" })
	for _, m := range Metrics {
		sec.Charts = append(sec.Charts, buildChart(chartSpec{
			id: chartID(suite, "all", string(m)), title: metricTitle(m), metric: m, curves: Curves(main, m),
		}))
	}
	sec.Tables = append(sec.Tables, headlineTableNamed(main, "headline_"+suite, "Suite "+suite+": headline"))
	return sec
}

func countSettings(recs []records.Record) int {
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Setting] = true
	}
	return len(seen)
}

func countRuns(recs []records.Record) int {
	seen := map[string]bool{}
	for _, r := range recs {
		seen[fmt.Sprintf("%s|%d", r.Setting, r.Seed)] = true
	}
	return len(seen)
}

// PrintTables writes every table to w with tablewriter.
func (r *Report) PrintTables(w io.Writer) error {
	for _, t := range r.Tables() {
		if err := t.WriteTerminal(w); err != nil {
			return err
		}
	}
	return nil
}

// WriteDir writes index.html (self-contained: the ECharts library is
// inlined) and, under tables/, one .md and one .tex file per table plus
// tables.md with all of them.
func (r *Report) WriteDir(out string) (string, error) {
	tdir := filepath.Join(out, "tables")
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return "", fmt.Errorf("report directory: %w", err)
	}
	var all strings.Builder
	for _, t := range r.Tables() {
		md, err := t.Markdown()
		if err != nil {
			return "", fmt.Errorf("table %s: %w", t.Name, err)
		}
		all.WriteString(md + "\n")
		if err := os.WriteFile(filepath.Join(tdir, t.Name+".md"), []byte(md), 0o644); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(tdir, t.Name+".tex"), []byte(t.LaTeX()), 0o644); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(tdir, "tables.md"), []byte(all.String()), 0o644); err != nil {
		return "", err
	}
	index := filepath.Join(out, "index.html")
	f, err := os.Create(index)
	if err != nil {
		return "", fmt.Errorf("writing report: %w", err)
	}
	if err := r.WriteHTML(f); err != nil {
		f.Close()
		return "", err
	}
	return index, f.Close()
}
