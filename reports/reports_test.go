package reports

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// fakeRecords builds a small store by hand: for each suite the given
// methods at two budgets over three seeds, with metric values that are a
// known function of (method, budget, seed) so aggregates can be checked.
func fakeRecords() []records.Record {
	var out []records.Record
	add := func(suite, setting, group, method, variant, stage string, budget int, seed uint64, v float64) {
		out = append(out, records.Record{
			Suite: suite, Setting: setting, Group: group, Seed: seed, D: 4, N: 256,
			Method: method, Variant: variant, Stage: stage, BudgetKind: "draws", Budget: budget,
			M1: records.Num(v), M2: records.Num(2 * v), SW2: records.Num(v / 2), Seconds: records.Num(float64(budget) / 1000),
			Diagnostics: map[string]records.Num{"pareto_k": 0.3, "max_weight": records.Num(1e-4 * v), "entropy_ratio": 0.9, "energy_gap": -0.01},
			Provenance:  records.Provenance{GitCommit: "0123456789abcdef", Profile: "smoke", Backend: "go"},
		})
	}
	for _, g := range []string{"easy", "medium", "hard"} {
		for k := range 2 {
			setting := fmt.Sprintf("p%d/l/%s", k, g)
			for seed := range uint64(3) {
				s := float64(seed)
				for _, b := range []int{100, 1000} {
					scale := 1 / float64(b)
					add("synthetic", setting, g, "nuts", "", "", b, seed, 10*scale*(1+s))
					add("synthetic", setting, g, "frvi", "", "", b, seed, 20*scale*(1+s))
					add("snis", setting, g, "afin-snis", "", "", b, seed, 5*scale*(1+s))
					add("snis", setting, g, "frvi-snis", "1k", "", b, seed, 8*scale*(1+s))
					add("snis", setting, g, "frvi-snis", "1k", "proposal", 1000, seed, 0.05)
					add("snis", setting, g, "afin-snis", "", "proposal", 1000, seed, 0.04)
				}
				add("synthetic", setting, g, "afin", "", "", 500, seed, 0.02*(1+s))
			}
		}
	}
	for _, g := range []string{"ood_d", "ood_n", "ood_dn"} {
		for seed := range uint64(3) {
			add("extrapolation", "x/"+g, g, "afin", "", "", 1000, seed, 0.03)
			add("extrapolation", "x/"+g, g, "nuts", "", "", 1000, seed, 0.01+0.001*float64(seed))
		}
	}
	return out
}

// Curves average over settings per seed, then take mean and sd over
// seeds: for nuts at budget 100 the per-seed values are 0.1·(1+s),
// s = 0, 1, 2, so the mean is 0.2 and the sd 0.1.
func TestCurvesMeanSD(t *testing.T) {
	recs := filter(fakeRecords(), func(r *records.Record) bool { return r.Suite == "synthetic" })
	var nuts *Curve
	curves := Curves(recs, MetricM1)
	for i := range curves {
		if curves[i].Series.Method == "nuts" {
			nuts = &curves[i]
		}
	}
	if nuts == nil || len(nuts.Points) != 2 {
		t.Fatalf("nuts curve: %+v", nuts)
	}
	p := nuts.Points[0]
	if p.Budget != 100 || math.Abs(p.Mean-0.2) > 1e-12 || math.Abs(p.SD-0.1) > 1e-12 || p.Seeds != 3 || math.Abs(p.Seconds-0.1) > 1e-12 {
		t.Errorf("nuts at 100: %+v, want mean 0.2 sd 0.1 over 3 seeds at 0.1 s", p)
	}
	if got := []string{curves[0].Series.Method, curves[1].Series.Method, curves[2].Series.Method}; strings.Join(got, ",") != "afin,nuts,frvi" {
		t.Errorf("legend order %v", got)
	}
	if m, sd := meanSD([]float64{1, 2, 3, 4}); m != 2.5 || math.Abs(sd-math.Sqrt(5.0/3)) > 1e-12 {
		t.Errorf("meanSD = %v, %v", m, sd)
	}
}

func TestTables(t *testing.T) {
	rep, err := Build(fakeRecords())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*Table{}
	for _, tb := range rep.Tables() {
		names[tb.Name] = tb
	}
	for _, n := range []string{"headline_synthetic", "table9_snis_diagnostics", "table3_extrapolation_sw2", "table10_extrapolation_m1", "table11_extrapolation_m2"} {
		if names[n] == nil {
			t.Fatalf("missing table %s (have %v)", n, names)
		}
	}
	// Extrapolation SW2: NUTS has mean 0.0055 < AFIN's 0.015 in every
	// split, so it is bold; the entry carries mean ± sd and seconds.
	// Each split's row is followed by the paper's row for it.
	ex := names["table3_extrapolation_sw2"]
	if len(ex.Rows) != 6 || ex.Rows[0][0].Text != "OOD d" || ex.Rows[1][0].Text != "paper: OOD d" {
		t.Fatalf("extrapolation rows %v", ex.Rows)
	}
	nutsCol := -1
	for i, h := range ex.Header {
		if h == "NUTS" {
			nutsCol = i
		}
	}
	c := ex.Rows[0][nutsCol]
	if !c.Bold || c.Text != "0.00550 ± 5.00e-04 (1.00s)" {
		t.Errorf("NUTS cell %+v", c)
	}
	tex := ex.LaTeX()
	for _, want := range []string{"\\toprule", "\\midrule", "\\bottomrule", "\\textbf{\\boldmath $0.00550 \\pm 5.00{\\times}10^{-4}$ (1.00s)}", "\\label{tab:table3_extrapolation_sw2}"} {
		if !strings.Contains(tex, want) {
			t.Errorf("LaTeX lacks %q:\n%s", want, tex)
		}
	}
	md, err := ex.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "**0.00550 ± 5.00e-04 (1.00s)**") || !strings.Contains(md, "|") {
		t.Errorf("Markdown:\n%s", md)
	}
	head := names["headline_synthetic"]
	// Three methods, then the paper's published AFIN headline with the
	// difference from this run (0.04 − 0.0424).
	if len(head.Rows) != 4 || head.Rows[3][0].Text != "paper: AFIN" || !strings.Contains(head.Rows[3][3].Text, "(Δ −0.00240)") {
		t.Fatalf("headline rows %v", head.Rows)
	}
	// nuts at its largest budget (1000): M1 mean over 6 settings × 3
	// seeds of 0.01·(1+s) = 0.02.
	if row := head.Rows[1]; row[0].Text != "NUTS" || row[3].Text != "0.0200" || row[6].Text != "1.00s" {
		t.Errorf("headline NUTS row %v", texts(row))
	}
	var buf strings.Builder
	if err := rep.PrintTables(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "SNIS weight-stability diagnostics") {
		t.Error("terminal output lacks Table 9")
	}
}

func TestCheckGate(t *testing.T) {
	recs := fakeRecords()
	base := &Baseline{Tolerance: Tolerance{Relative: 0.25, Absolute: 1e-4}, Entries: Summarize(recs)}
	if res := Check(recs, base); res.Failed() {
		t.Fatalf("identical results fail the gate:\n%v", res.Table.Rows)
	}
	// worseIn scales one metric of NUTS's synthetic records.
	worseIn := func(metric string, factor float64) []records.Record {
		out := append([]records.Record(nil), recs...)
		for i := range out {
			if out[i].Method == "nuts" && out[i].Suite == "synthetic" {
				switch metric {
				case "M1":
					out[i].M1 *= records.Num(factor)
				case "M2":
					out[i].M2 *= records.Num(factor)
				case "SW2":
					out[i].SW2 *= records.Num(factor)
				}
			}
		}
		return out
	}
	worse := func(factor float64) []records.Record { return worseIn("SW2", factor) }
	// Each metric is gated on its own: a regression in any one of them
	// fails, and the table names that metric.
	for _, m := range []string{"M1", "M2", "SW2"} {
		if res := Check(worseIn(m, 1.1), base); res.Failed() {
			t.Errorf("a 10%% %s change within a 25%% tolerance fails", m)
		}
		res := Check(worseIn(m, 2), base)
		if !res.Failed() || res.Regressions != 2 {
			t.Fatalf("doubling NUTS's %s gave %d regressions, want 2 (one per budget)", m, res.Regressions)
		}
		var flagged int
		for _, row := range res.Table.Rows {
			if row[len(row)-1].Text == "REGRESSED ["+m+"]" {
				flagged++
			}
		}
		if flagged != 2 {
			t.Errorf("doubling %s: table flags %d rows with REGRESSED [%s], want 2", m, flagged, m)
		}
	}
	// Fewer runs than the baseline: a seed of NUTS's synthetic runs lost.
	oneSeedLess := filter(recs, func(r *records.Record) bool {
		return !(r.Method == "nuts" && r.Suite == "synthetic" && r.Seed == 2)
	})
	if res := Check(oneSeedLess, base); !res.Failed() || res.Incomplete != 2 || res.Regressions != 0 {
		t.Errorf("dropping one NUTS seed: failed %v, %d incomplete (want 2, one per budget), %d regressions", res.Failed(), res.Incomplete, res.Regressions)
	}
	// A series the baseline does not name fails too.
	extra := append(append([]records.Record(nil), recs...), records.Record{Suite: "synthetic", Setting: "p0/l/easy", Group: "easy",
		Method: "maf", BudgetKind: "steps", Budget: 100, M1: 1, M2: 1, SW2: 1})
	if res := Check(extra, base); !res.Failed() || res.Unexpected != 1 {
		t.Errorf("a method not in the baseline: failed %v, %d unexpected, want 1", res.Failed(), res.Unexpected)
	}
	noNUTS := filter(recs, func(r *records.Record) bool { return r.Method != "nuts" })
	if res := Check(noNUTS, base); res.Missing != 3 {
		t.Errorf("dropping NUTS gave %d missing entries, want 3 (two synthetic budgets, one extrapolation)", res.Missing)
	}
	nan := worse(math.NaN())
	if res := Check(nan, base); !res.Failed() {
		t.Error("NaN metrics pass the gate")
	}
}

func TestHTMLSelfContained(t *testing.T) {
	rep, err := Build(fakeRecords())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	index, err := rep.WriteDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(index)
	page := string(data)
	if regexp.MustCompile(`<script[^>]+src=`).MatchString(page) || strings.Contains(page, "cdn") {
		t.Error("page loads scripts from elsewhere")
	}
	if !strings.Contains(page, "Licensed to the Apache Software Foundation") {
		t.Error("ECharts is not inlined")
	}
	// 12 synthetic panels (3 metrics × overall + 3 difficulties), 12 SNIS.
	if rep.Charts() != 24 || strings.Count(page, "echarts.init(") != 24 {
		t.Errorf("%d charts, %d inits", rep.Charts(), strings.Count(page, "echarts.init("))
	}
	for _, f := range []string{"tables/tables.md", "tables/table9_snis_diagnostics.tex", "tables/headline_synthetic.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// The page opens in headless Chromium and every chart draws a canvas.
// A screenshot is left in $AFIN_REPORT_SCREENSHOT when set.
func TestReportInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no Chromium on PATH (chromium, chromium-browser or google-chrome; apt-get install -y chromium)")
	}
	rep, err := Build(fakeRecords())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	index, err := rep.WriteDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + t.TempDir()}
	dom, err := exec.CommandContext(ctx, browser, append(flags, "--virtual-time-budget=5000", "--dump-dom", "file://"+index)...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	// Each drawn ECharts instance holds a <canvas>; an undrawn one stays
	// an empty div.
	if got := strings.Count(string(dom), "<canvas"); got != rep.Charts() {
		t.Errorf("%d canvases for %d charts", got, rep.Charts())
	}
	if shot := os.Getenv("AFIN_REPORT_SCREENSHOT"); shot != "" {
		abs, _ := filepath.Abs(shot)
		cmd := exec.CommandContext(ctx, browser, append(flags, "--screenshot="+abs, "--window-size=1400,3000", "file://"+index)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("screenshot: %v\n%s", err, out)
		}
	}
}
