package reports

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/suite"
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
	// Warnings are the results reader's (records.Loaded): repairs,
	// duplicates and mixed profiles or commits, shown at the top.
	Warnings []string
	// Problems are what makes the numbers below partial, shown first of
	// all: plans the records do not complete ("incomplete: X of Y units",
	// records.Loaded.Incomplete) and metrics left out as implausible
	// (records.Implausible), each with where it is.
	Problems []string
	// Outliers are the records the report marked as outliers
	// (OutlierRule), one line each: which, what metric and by how much.
	Outliers []string

	// FailedUnits counts the units that left failed records: listed in
	// the Failures section, counted in each suite's captions.
	FailedUnits int
	// Checkpoint is the banner saying which checkpoint produced the AFIN
	// numbers (see Banner); set it with SetCheckpoint.
	Checkpoint []string
	// Kernel is the banner warning that AFIN ran on the generic matrix
	// kernel (see KernelBanner); empty when it did not.
	Kernel []string
	recs   []records.Record
}

// OutlierLines are the report's words on its outliers: the rule, then
// one line per marked record; nil when there is none.
func (r *Report) OutlierLines() []string {
	if len(r.Outliers) == 0 {
		return nil
	}
	return append([]string{fmt.Sprintf("%d record(s) marked as outliers (⚠ outlier in the tables): %s.", len(r.Outliers), OutlierRule())}, r.Outliers...)
}

// SetCheckpoint attributes the report's AFIN numbers to ck, checked
// against the checkpoint hashes the records carry.
func (r *Report) SetCheckpoint(ck *CheckpointInfo) { r.Checkpoint = Banner(r.recs, ck) }

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
	// Failed records have no metrics: the tables are built without them
	// and count them (addFailures).
	recs, failed := splitFailed(recs)
	rep.Outliers = markOutliers(recs)
	rep.recs = recs
	rep.SetCheckpoint(nil)
	bySuite := map[string][]records.Record{}
	prov := map[string]bool{}
	for _, r := range recs {
		bySuite[r.Suite] = append(bySuite[r.Suite], r)
		p := r.Provenance
		line := fmt.Sprintf("suite %s · profile %s · %s", r.Suite, p.Profile, binaryLabel(p))
		line += " · backend " + p.Backend
		if p.Kernel != "" {
			line += fmt.Sprintf(" · kernel %s (CPU features %s)", p.Kernel, p.CPUFeatures)
		}
		if p.Checkpoint != "" {
			line += " · checkpoint " + short(p.Checkpoint)
		}
		prov[line] = true
	}
	for l := range prov {
		rep.Provenance = append(rep.Provenance, l)
	}
	sort.Strings(rep.Provenance)
	rep.Kernel = KernelBanner(recs)

	for _, name := range sectionOrder(bySuite) {
		build := genericSection
		if b, ok := suiteSections[name]; ok {
			build = b
		}
		rep.Sections = append(rep.Sections, build(name, bySuite[name]))
	}
	addWorkflowTables(rep, bySuite)
	addFailures(rep, failed)
	return rep, nil
}

// sectionBuilder draws a suite's records as a report section.
type sectionBuilder = func(suite string, recs []records.Record) Section

// sectionLayouts are the suites with a layout of their own beyond the
// generic one (charts and a headline table), keyed by the suite's name in
// the suite registry (package suite; reports cannot import bench, which
// holds the rest of a suite), in report order: the paper's figures first.
// A suite without an entry gets genericSection, after these, by name.
var sectionLayouts = []struct {
	suite string
	build sectionBuilder
}{
	{suite.Synthetic, func(_ string, rs []records.Record) Section { return syntheticSection(rs) }},
	{suite.SNIS, func(_ string, rs []records.Record) Section { return snisSection(rs) }},
	{suite.Extrapolation, func(_ string, rs []records.Record) Section { return extrapolationSection(rs) }},
	{suite.UCI, func(_ string, rs []records.Record) Section { return uciSection(rs) }},
	{suite.Calibration, func(_ string, rs []records.Record) Section { return calibrationSection(rs) }},
	{suite.Decoders, decodersSection},
	{suite.External, externalSection},
	{suite.OpenML, openmlSection},
}

// suiteSections are sectionLayouts by suite name.
var suiteSections = func() map[string]sectionBuilder {
	m := map[string]sectionBuilder{}
	for _, l := range sectionLayouts {
		m[l.suite] = l.build
	}
	return m
}()

// sectionOrder lists the suites that have records: those with a layout
// in sectionLayouts' order, then the others by name.
func sectionOrder(bySuite map[string][]records.Record) []string {
	var out, other []string
	for _, l := range sectionLayouts {
		if len(bySuite[l.suite]) > 0 {
			out = append(out, l.suite)
		}
	}
	for s := range bySuite {
		if _, ok := suiteSections[s]; !ok {
			other = append(other, s)
		}
	}
	sort.Strings(other)
	return append(out, other...)
}

// binaryLabel names the binary that wrote a record as resume and check
// do (records.BinaryOf): its commit, or the hash of an unstamped
// executable, so two unstamped builds do not both read "unknown".
func binaryLabel(p records.Provenance) string {
	b := records.BinaryOf(p)
	if p.GitDirty && !strings.Contains(b, "modified") {
		b += " (dirty)"
	}
	if strings.HasPrefix(b, "build ") {
		return b
	}
	return "commit " + b
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
		Intro: fmt.Sprintf("%d settings. Points are budgets, labelled (SNIS proposals, NUTS post-warm-up draws, FRVI steps); x is the mean wall-clock time, y the metric's mean over settings (then over seeds), %s. "+
			"Hollow pins are the paper's published AFIN point (Gaussian decoder, its decoder table; A100/H100 timing, ~5M-parameter network).", countSettings(recs), bandNote(recs)),
	}
	main := filter(recs, func(r *records.Record) bool { return r.Stage == "" })
	for _, sc := range scopes(main) {
		rs := inScope(main, sc.id)
		for _, m := range Metrics {
			sec.Charts = append(sec.Charts, buildChart(chartSpec{
				id:       chartID("synthetic", sc.id, string(m)),
				title:    metricTitle(m) + " · " + sc.label,
				subtitle: fmt.Sprintf("%d settings · %s", countSettings(rs), seedsText(rs)) + excludedNote(rs, m),
				metric:   m,
				curves:   Curves(rs, m),
				paper:    paperPoints("synthetic", sc.id, m),
			}))
		}
	}
	sec.Tables = append(sec.Tables, headlineTable(main), perSettingTable(main, MetricSW2, "setting"), referenceTable(main))
	return sec
}

// headlineTable: per method at its largest budget, mean M1/M2/SW2 and the
// mean seconds over all settings and seeds (the statistic the charts
// plot, so a table row and its chart point agree), with how many values were
// not finite, the runs flagged and, for AFIN, the AFIN+SNIS diagnostics.
func headlineTable(recs []records.Record) *Table {
	suite := ""
	if len(recs) > 0 {
		suite = recs[0].Suite
	}
	t := &Table{
		Name:   "headline_synthetic",
		Title:  "Synthetic suite: headline",
		Header: []string{"Method", "Budget", "Runs", "M1", "M2", "SW2", "Mean seconds", "Flags", "AFIN+SNIS k̂, ESS"},
	}
	final := finalBudget(recs)
	var total flagCounts
	for _, s := range sortedSeries(final) {
		rs := final[s]
		secs := collect(rs, func(r *records.Record) float64 { return float64(r.Seconds) })
		flags := countFlags(rs)
		total = total.add(flags)
		snis := plain("")
		if isAFIN(s) {
			if signal := afinSNISSignal(recs, s.Variant); signal != "" {
				snis = plain(signal)
			}
		}
		t.Rows = append(t.Rows, []Cell{
			plain(s.Name()), plain(fmt.Sprintf("%d %s", rs[0].Budget, rs[0].BudgetKind)), plain(fmt.Sprint(len(rs))),
			collect(rs, MetricM1.Value).meanCell(), collect(rs, MetricM2.Value).meanCell(), collect(rs, MetricSW2.Value).meanCell(),
			plain(secondsText(mean(secs.xs))), flags.cell(len(rs)), snis,
		})
	}
	t.Rows = append(t.Rows, paperHeadlineRows(suite, final)...)
	t.Caption = fmt.Sprintf("Per method at its largest budget: mean M1, M2 and SW2 and mean wall-clock seconds over %d settings × seeds (%s); "+
		"\"(k n/a)\" counts runs whose value was not finite and is left out of the mean. "+
		"AFIN rows carry the AFIN+SNIS median Pareto k̂ and ESS at its largest budget, the amortised workflow's own warning.", countRuns(recs), seedsText(recs)) + total.caption() + paperCaption(t)
	return t
}

func snisSection(recs []records.Record) Section {
	sec := Section{
		ID:    "snis",
		Title: "SNIS refinement: AFIN+SNIS against FRVI+SNIS (paper Fig. 3; Figs. 8–10 by difficulty)",
		Intro: "Curves vary the number of SNIS proposals (points labelled with the budget); stars mark each proposal before SNIS. FRVI+SNIS seconds include the FRVI optimisation. y is the metric's mean over settings and seeds; " + bandNote(recs) + ".",
	}
	curves := filter(recs, func(r *records.Record) bool { return r.Stage == "" && catalog.IsWeighted(r.Method) })
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
				id:       chartID("snis", sc.id, string(m)),
				title:    metricTitle(m) + " · " + sc.label,
				subtitle: strings.TrimPrefix(excludedNote(inScope(curves, sc.id), m), " · "),
				metric:   m,
				curves:   Curves(inScope(curves, sc.id), m),
				stars:    starCurves,
			}))
		}
	}
	sec.Tables = append(sec.Tables, snisDiagnosticsTable(curves))
	return sec
}

// snisDiagnosticsTable is the paper's Table 9 at each SNIS method's
// largest proposal budget. Pareto k̂ is summarised by its median over all
// runs and the counts above 0.7 and infinite (a mean would drop the
// infinite ones); the other columns are mean ± sd over the finite values
// with the runs left out counted.
func snisDiagnosticsTable(recs []records.Record) *Table {
	t := &Table{
		Name:  "table9_snis_diagnostics",
		Title: "SNIS weight-stability diagnostics (paper Table 9)",
		Caption: "At the largest proposal budget, over runs (settings × seeds): median Pareto k̂, runs with k̂ > 0.7 and with k̂ = ∞ " +
			"(a k̂ stored as null, infinite or not fittable, counts as ∞); max weight, entropy ratio and energy gap as mean ± sd over finite values, " +
			"\"(k n/a)\" counting runs left out. Lower is better for k̂ and max weight, higher for entropy ratio; energy gap is best near zero.",
		Header:    []string{"Split", "Method", "Runs", "Median k̂", "k̂ > 0.7", "k̂ = ∞", "Max weight", "Entropy ratio", "Energy gap", "Flags"},
		RuleAfter: map[int]bool{},
	}
	final := finalBudget(recs)
	var total flagCounts
	diag := []string{"max_weight", "entropy_ratio", "energy_gap"}
	for _, g := range append(groups(recs), "all") {
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
			row := []Cell{plain(""), plain(s.Name()), plain(fmt.Sprint(len(rs)))}
			if first {
				row[0] = plain(label)
				first = false
			}
			row = append(row, summarizeK(rs).cells()...)
			for _, k := range diag {
				row = append(row, collect(rs, func(r *records.Record) float64 {
					v, ok := r.Diagnostics[k]
					if !ok {
						return math.NaN()
					}
					return float64(v)
				}).meanSDCell())
			}
			flags := countFlags(rs)
			if g != "all" {
				total = total.add(flags)
			}
			t.Rows = append(t.Rows, append(row, flags.cell(len(rs))))
			if p, ok := paperSNISRow(g, s, rs); ok {
				t.Rows = append(t.Rows, p)
			}
		}
		t.RuleAfter[len(t.Rows)-1] = true
	}
	t.Caption += total.caption()
	if pc := paperCaption(t); pc != "" {
		t.Caption += pc + " The paper's Pareto k̂ is a mean ± sd (Δ against this run's median)."
	}
	return t
}

// paperSNISRow is the paper's Table 9 row for a split and series, with
// each diagnostic's difference from this run's summary of it.
func paperSNISRow(g string, s Series, rs []records.Record) ([]Cell, bool) {
	k, ok := paperLookup("snis", g, s.Method, s.Variant, "pareto_k")
	if !ok {
		return nil, false
	}
	row := []Cell{plain(""), plain(paperPrefix + s.Name()), plain(k.Table), paperCell(k, summarizeK(rs).median), plain("—"), plain("—")}
	for _, d := range []string{"max_weight", "entropy_ratio", "energy_gap"} {
		v, ok := paperLookup("snis", g, s.Method, s.Variant, d)
		if !ok {
			row = append(row, plain("—"))
			continue
		}
		ours := mean(collect(rs, func(r *records.Record) float64 {
			x, ok := r.Diagnostics[d]
			if !ok {
				return math.NaN()
			}
			return float64(x)
		}).xs)
		row = append(row, paperCell(v, ours))
	}
	return append(row, plain("")), true
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
	sec.Tables = append(sec.Tables, perSettingTable(main, MetricSW2, "configuration"), referenceTable(main))
	return sec
}

func extrapolationTable(recs []records.Record, m Metric, name, what string) *Table {
	final := finalBudget(recs)
	series := sortedSeries(final)
	t := &Table{
		Name:   name,
		Title:  "Extrapolation: " + what,
		Header: []string{"Split"},
	}
	for _, s := range series {
		t.Header = append(t.Header, s.Name())
	}
	var total flagCounts
	for _, g := range groups(recs) {
		row := []Cell{plain(groupLabel(g))}
		best, bestIdx := math.Inf(1), -1
		signal := afinSNISSignal(inScope(recs, g), "")
		for i, s := range series {
			rs := inScope(final[s], g)
			st := collect(rs, m.Value)
			if len(st.xs) == 0 {
				row = append(row, st.note(plain("n/a")))
				continue
			}
			mean, sd := meanSD(st.xs)
			secs := collect(rs, func(r *records.Record) float64 { return float64(r.Seconds) })
			sec, _ := meanSD(secs.xs)
			c := st.note(meanSDCell(mean, sd))
			c.Text += " (" + secondsText(sec) + ")"
			c.TeX += " (" + texEscape(secondsText(sec)) + ")"
			flags := countFlags(rs)
			total = total.add(flags)
			if f := flags.text(len(rs)); f != "" {
				c.Text += " ⚠ " + f
				c.TeX += " " + texEscape(f)
			}
			if isAFIN(s) && signal != "" {
				c.Text += " [AFIN+SNIS " + signal + "]"
				c.TeX += " [AFIN+SNIS " + texEscape(signal) + "]"
			}
			row = append(row, c)
			if mean < best {
				best, bestIdx = mean, i
			}
		}
		if bestIdx >= 0 {
			row[bestIdx+1].Bold = true
		}
		t.Rows = append(t.Rows, row)
		if p, ok := paperExtrapolationRow(g, m, series, final); ok {
			t.Rows = append(t.Rows, p)
		}
	}
	t.Caption = "Extrapolation beyond the training support: " + what + ", mean ± sd over runs with mean wall-clock seconds in parentheses; bold is the lowest mean in each split; " +
		"\"(k n/a)\" counts runs whose value was not finite and is left out. AFIN cells carry the AFIN+SNIS median k̂ and ESS of the split." + total.caption() + paperCaption(t)
	return t
}

// paperExtrapolationRow is the paper's row of an extrapolation table for
// a split: each series' published mean ± sd, its difference from this
// run's mean, and the paper's seconds where printed.
func paperExtrapolationRow(g string, m Metric, series []Series, final map[Series][]records.Record) ([]Cell, bool) {
	row := []Cell{plain(paperPrefix + groupLabel(g))}
	found := false
	for _, s := range series {
		v, ok := paperLookup("extrapolation", g, s.Method, s.Variant, string(m))
		if !ok {
			row = append(row, plain("—"))
			continue
		}
		found = true
		c := paperCell(v, mean(collect(inScope(final[s], g), m.Value).xs))
		if sec, ok := paperLookup("extrapolation", g, s.Method, s.Variant, "seconds"); ok {
			c.Text += " (" + secondsText(sec.Mean) + ")"
			c.TeX += " (" + texEscape(secondsText(sec.Mean)) + ")"
		}
		row = append(row, c)
	}
	return row, found
}

func uciSection(recs []records.Record) Section {
	sec := Section{
		ID:    "uci",
		Title: "UCI tasks: accuracy against wall-clock time (paper Fig. 4 for SW2; Figs. 11–12 for M1 and M2)",
		Intro: "One panel per dataset; red titles mark the heterogeneous-likelihood tasks. Seeds vary the methods, not the data; points are labelled budgets; y is the mean over seeds, " + bandNote(recs) + ".",
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
				subtitle:   fmt.Sprintf("d=%d, N=%d, %s", rs[0].D, rs[0].N, rs[0].Likelihood) + excludedNote(rs, m),
				metric:     m,
				curves:     Curves(rs, m),
			}))
		}
	}
	sec.Tables = append(sec.Tables, headlineTableNamed(main, "headline_uci", "UCI suite: headline"),
		perSettingTable(main, MetricSW2, "dataset"), referenceTable(main))
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
			subtitle: strings.TrimPrefix(excludedNote(main, m), " · "),
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

// KernelBanner says, when the native engine ran AFIN records on the
// generic (portable Go) matrix kernel, how many and on which CPU
// features: their timings are several times the AVX-512 kernel's and do
// not compare with them. Empty otherwise (records without a kernel, from
// before it was recorded, say nothing).
func KernelBanner(recs []records.Record) []string {
	n, all := 0, 0
	features := map[string]bool{}
	for _, r := range recs {
		p := r.Provenance
		if p.Backend != "native" || p.Checkpoint == "" {
			continue // no network, or not the native engine
		}
		all++
		if p.Kernel == "generic" {
			n++
			features[p.CPUFeatures] = true
		}
	}
	if n == 0 {
		return nil
	}
	fs := slices.Sorted(maps.Keys(features))
	return []string{
		fmt.Sprintf("%d of %d AFIN records ran on the generic (portable Go) matrix kernel (CPU features: %s), not the AVX-512 one.", n, all, strings.Join(fs, "; ")),
		"Their seconds are several times what the AVX-512 kernel takes and do not compare with timings of avx512 runs; their metrics are unaffected.",
	}
}

// PrintTables writes every table to w with tablewriter.
func (r *Report) PrintTables(w io.Writer) error {
	for _, l := range append(append(slices.Clone(r.Checkpoint), r.Kernel...), r.OutlierLines()...) {
		fmt.Fprintln(w, l)
	}
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
	for _, l := range append(append(slices.Clone(r.Checkpoint), r.Kernel...), r.OutlierLines()...) {
		all.WriteString("> " + l + "\n>\n")
	}
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
