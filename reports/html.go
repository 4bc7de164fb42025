package reports

import (
	_ "embed"
	"fmt"
	"html"
	"io"
	"strings"
)

// echartsJS is Apache ECharts 5.6.0 (dist/echarts.min.js of the npm
// package echarts@5.6.0, Apache-2.0; license and notice beside it in
// assets/). It is inlined into every report so the page works offline:
// go-echarts would otherwise load it from a CDN.
//
//go:embed assets/echarts.min.js
var echartsJS string

// EChartsVersion is the version of the inlined library.
const EChartsVersion = "5.6.0"

// WriteHTML writes the self-contained report page.
func (r *Report) WriteHTML(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>afin benchmark report</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; }
h1 { margin-bottom: 4px; }
h2 { margin-top: 36px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
.meta { color: #555; font-size: 13px; }
.grid { display: flex; flex-wrap: wrap; gap: 8px; }
.container { display: inline-block; }
.item { margin: 0; }
table { border-collapse: collapse; margin: 8px 0 20px; font-size: 13px; }
th, td { padding: 4px 10px; text-align: center; }
th { border-top: 2px solid #222; border-bottom: 1px solid #222; }
tr:last-child td { border-bottom: 2px solid #222; }
tr.rule td { border-bottom: 1px solid #888; }
tr.paper td { color: #555; font-style: italic; background: #f4f4f8; }
td:first-child, th:first-child { text-align: left; }
.caption { color: #444; font-size: 13px; max-width: 1100px; }
.banner { background: #fff8e1; border: 1px solid #e0b000; border-radius: 4px; padding: 8px 14px; max-width: 1100px; font-size: 14px; }
.banner p { margin: 4px 0; }
.banner p:first-child { font-weight: 600; }
.banner.problems { background: #fdecea; border-color: #c62828; }
.banner.problems p { font-weight: 600; }
</style>
<script>
`)
	b.WriteString(echartsJS)
	b.WriteString("\n</script>\n</head>\n<body>\n<h1>afin benchmark report</h1>\n")
	writeBanner(&b, "banner problems", "problems", r.Problems)
	fmt.Fprintf(&b, "<p class=\"meta\">%d records, %d charts, ECharts %s inlined. Every number below is read from the results store.</p>\n<ul class=\"meta\">\n",
		r.Records, r.Charts(), EChartsVersion)
	for _, p := range r.Provenance {
		fmt.Fprintf(&b, "<li>%s</li>\n", html.EscapeString(p))
	}
	b.WriteString("</ul>\n")
	writeBanner(&b, "banner", "checkpoint", r.Checkpoint)
	writeBanner(&b, "banner", "outliers", r.OutlierLines())
	writeBanner(&b, "banner", "kernel", r.Kernel)
	if len(r.Warnings) > 0 {
		b.WriteString("<p class=\"meta\"><b>Warnings from reading the results:</b></p>\n<ul class=\"meta\">\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "<li><b>%s</b></li>\n", html.EscapeString(w))
		}
		b.WriteString("</ul>\n")
	}
	for _, s := range r.Sections {
		writeSection(&b, s)
	}
	for _, s := range r.Sections {
		for _, c := range s.Charts {
			b.WriteString(c.Script)
			b.WriteString("\n")
		}
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSection writes one section's heading, intro, charts and tables.
func writeSection(b *strings.Builder, s Section) {
	fmt.Fprintf(b, "<h2 id=\"%s\">%s</h2>\n", html.EscapeString(s.ID), html.EscapeString(s.Title))
	if s.Intro != "" {
		fmt.Fprintf(b, "<p class=\"caption\">%s</p>\n", html.EscapeString(s.Intro))
	}
	// The section's first table (its headline) comes before the
	// charts, so the numbers a reader looks for first are on the first
	// screen; the detailed tables follow the charts.
	tables := s.Tables
	if len(s.Charts) > 0 && len(tables) > 0 {
		b.WriteString(tables[0].HTML())
		tables = tables[1:]
	}
	if len(s.Charts) > 0 {
		b.WriteString("<div class=\"grid\">\n")
		for _, c := range s.Charts {
			b.WriteString(c.Element)
			b.WriteString("\n")
		}
		b.WriteString("</div>\n")
	}
	for _, t := range tables {
		b.WriteString(t.HTML())
	}
}

// writeBanner writes lines as a banner of the given class and id; nothing
// when there are none.
func writeBanner(b *strings.Builder, class, id string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "<div class=\"%s\" id=\"%s\">\n", class, id)
	for _, l := range lines {
		fmt.Fprintf(b, "<p>%s</p>\n", html.EscapeString(l))
	}
	b.WriteString("</div>\n")
}
