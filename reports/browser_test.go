package reports_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reports"
)

// The report is checked in a real browser: headless Chromium loads the
// generated page and a small script inspects it. The test runs when a
// Chromium binary is found ($AFIN_CHROMIUM, chromium, chromium-browser,
// google-chrome); with AFIN_BROWSER_TEST=1 (CI) a missing browser is a
// failure, not a skip. AFIN_SCREENSHOT=FILE also writes a full-page PNG.

// chartsPainted is true once every chart container holds a sized canvas.
const chartsPainted = `[...document.querySelectorAll("div.item")].every(el => {
  const cv = el.querySelector("canvas");
  return cv !== null && cv.width > 0 && cv.height > 0;
})`

// pageProbe is run in the page once it has loaded; it returns what the
// test asserts on, as JSON.
const pageProbe = `(() => {
  const out = {echarts: typeof echarts !== "undefined", charts: [], tables: [], links: [], sections: 0};
  document.querySelectorAll("div.item").forEach(el => {
    const c = {id: el.id, instance: false, points: 0, canvas: false, painted: 0};
    const inst = out.echarts ? echarts.getInstanceByDom(el) : null;
    if (inst) {
      c.instance = true;
      (inst.getOption().series || []).forEach(s => { c.points += (s.data || []).length; });
    }
    const cv = el.querySelector("canvas");
    if (cv && cv.width > 0 && cv.height > 0) {
      c.canvas = true;
      const px = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
      for (let i = 0; i < px.length; i += 4) {
        if (px[i + 3] > 0 && (px[i] < 245 || px[i + 1] < 245 || px[i + 2] < 245)) c.painted++;
      }
    }
    out.charts.push(c);
  });
  document.querySelectorAll("table").forEach(t => out.tables.push(t.rows.length));
  document.querySelectorAll('a[href^="#"]').forEach(a => {
    const id = decodeURIComponent(a.getAttribute("href").slice(1));
    out.links.push({href: id, ok: id !== "" && document.getElementById(id) !== null});
  });
  out.sections = document.querySelectorAll("h2[id]").length;
  return out;
})()`

type probe struct {
	ECharts bool `json:"echarts"`
	Charts  []struct {
		ID       string `json:"id"`
		Instance bool   `json:"instance"`
		Points   int    `json:"points"`
		Canvas   bool   `json:"canvas"`
		Painted  int    `json:"painted"`
	} `json:"charts"`
	Tables []int `json:"tables"`
	Links  []struct {
		Href string `json:"href"`
		OK   bool   `json:"ok"`
	} `json:"links"`
	Sections int `json:"sections"`
}

// chromium finds a headless-capable browser, or skips.
func chromium(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv("AFIN_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	if os.Getenv("AFIN_BROWSER_TEST") == "1" {
		t.Fatal("AFIN_BROWSER_TEST=1 but no Chromium found (apt-get install -y chromium, or set AFIN_CHROMIUM)")
	}
	t.Skip("no Chromium found; the browser test needs one (apt-get install -y chromium)")
	return ""
}

// smokeReport builds the report of the committed smoke results set
// (testdata/smoke: the smoke synthetic suite) into a temporary directory.
func smokeReport(t *testing.T) (string, *reports.Report) {
	t.Helper()
	recs, err := records.ReadDir("testdata/smoke")
	if err != nil || len(recs) == 0 {
		t.Fatalf("reading testdata/smoke: %d records, %v", len(recs), err)
	}
	rep, err := reports.Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	index, err := rep.WriteDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return index, rep
}

// loadInBrowser opens a page in headless Chromium and returns the probe's
// findings, every JavaScript exception or console error, and (when png
// is non-nil) a full-page screenshot.
func loadInBrowser(t *testing.T, browser, page string, png *[]byte) (*probe, []string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	var (
		mu   sync.Mutex
		errs []string
	)
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			errs = append(errs, "exception: "+e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				errs = append(errs, "console.error: "+strings.Join(parts, " "))
			}
		}
	})
	var raw []byte
	actions := []chromedp.Action{
		chromedp.Navigate("file://" + page),
		chromedp.WaitReady("body"),
	}
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("driving Chromium: %v", err)
	}
	// ECharts paints synchronously when animation is off; waiting for
	// every chart's canvas covers a lazily scheduled paint on a machine of
	// any speed. The verdict is the probe's: a chart that never paints
	// ends the wait at the cap (whose error is not the test's) and shows
	// up in the probe as unpainted.
	var painted bool
	_ = chromedp.Run(ctx, chromedp.Poll(chartsPainted, &painted, chromedp.WithPollingTimeout(5*time.Minute)))
	actions = []chromedp.Action{chromedp.Evaluate(pageProbe, &raw)}
	if png != nil {
		// Quality 100 makes chromedp write PNG (below it, JPEG).
		actions = append(actions, chromedp.FullScreenshot(png, 100))
	}
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("driving Chromium: %v", err)
	}
	var p probe
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("probe result: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return &p, append([]string(nil), errs...)
}

// problems lists what is wrong with a loaded report.
func problems(p *probe, errs []string, wantCharts int) []string {
	out := append([]string(nil), errs...)
	if !p.ECharts {
		out = append(out, "ECharts did not load")
	}
	if len(p.Charts) != wantCharts {
		out = append(out, fmt.Sprintf("%d chart elements, the report has %d charts", len(p.Charts), wantCharts))
	}
	for _, c := range p.Charts {
		switch {
		case !c.Instance:
			out = append(out, c.ID+": no ECharts instance")
		case c.Points == 0:
			out = append(out, c.ID+": no data points")
		case !c.Canvas:
			out = append(out, c.ID+": no canvas")
		case c.Painted < 500:
			out = append(out, fmt.Sprintf("%s: canvas nearly blank (%d painted pixels)", c.ID, c.Painted))
		}
	}
	if len(p.Tables) == 0 {
		out = append(out, "no tables")
	}
	for i, rows := range p.Tables {
		if rows < 2 {
			out = append(out, fmt.Sprintf("table %d has %d rows", i+1, rows))
		}
	}
	if p.Sections == 0 {
		out = append(out, "no sections with ids (h2[id])")
	}
	for _, l := range p.Links {
		if !l.OK {
			out = append(out, "link #"+l.Href+" points nowhere")
		}
	}
	return out
}

// TestReportRendersInChromium: on the smoke synthetic report every chart
// renders (an ECharts instance with data and a painted canvas), there is
// no JavaScript error, the tables are present and in-page links resolve.
func TestReportRendersInChromium(t *testing.T) {
	browser := chromium(t)
	index, rep := smokeReport(t)
	var png []byte
	shot := os.Getenv("AFIN_SCREENSHOT")
	pngp := &png
	if shot == "" {
		pngp = nil
	}
	p, errs := loadInBrowser(t, browser, index, pngp)
	for _, msg := range problems(p, errs, rep.Charts()) {
		t.Error(msg)
	}
	t.Logf("%d charts, %d tables, %d sections, %d in-page links checked", len(p.Charts), len(p.Tables), p.Sections, len(p.Links))
	if shot != "" {
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// optionLine matches one chart's option literal in the generated page.
var optionLine = regexp.MustCompile(`(?m)^(\s*let option_(\S+) = )(\{.*\});?[ \t]*$`)

// TestBrowserCheckCatchesEmptyChart: the same check must fail on a page
// where one chart's data was removed, or on a page with a script error.
func TestBrowserCheckCatchesEmptyChart(t *testing.T) {
	browser := chromium(t)
	index, rep := smokeReport(t)
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func(string) string
		want   string
	}{
		{"chart data removed", emptyFirstChart(t), "no data points"},
		{"script error", func(s string) string {
			return strings.Replace(s, "</body>", "<script>undefinedFunction();</script></body>", 1)
		}, "exception"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page := filepath.Join(t.TempDir(), "index.html")
			if err := os.WriteFile(page, []byte(tc.mutate(string(data))), 0o644); err != nil {
				t.Fatal(err)
			}
			p, errs := loadInBrowser(t, browser, page, nil)
			got := strings.Join(problems(p, errs, rep.Charts()), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("check passed a broken page (want a problem containing %q), problems:\n%s", tc.want, got)
			}
		})
	}
}

// emptyFirstChart returns a mutation that empties every series of the
// page's first chart.
func emptyFirstChart(t *testing.T) func(string) string {
	return func(s string) string {
		loc := optionLine.FindStringSubmatchIndex(s)
		if loc == nil {
			t.Fatal("no chart option found in the page; update optionLine")
		}
		var opt map[string]any
		if err := json.Unmarshal([]byte(s[loc[6]:loc[7]]), &opt); err != nil {
			t.Fatalf("chart option: %v", err)
		}
		series, _ := opt["series"].([]any)
		for _, sr := range series {
			if m, ok := sr.(map[string]any); ok {
				m["data"] = []any{}
			}
		}
		out, err := json.Marshal(opt)
		if err != nil {
			t.Fatal(err)
		}
		return s[:loc[6]] + string(out) + s[loc[7]:]
	}
}
