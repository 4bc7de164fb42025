package reports

import (
	"fmt"
	"math"
	"sort"

	"github.com/afin-bench/afin/records"
)

// decodersSection is the decoder comparison (paper Table 2): the
// Gaussian and flow decoders' AFIN and AFIN+SNIS, whose records carry
// the decoder as their variant, side by side per difficulty tier; the
// generic charts (each decoder's curves) follow the table.
func decodersSection(suite string, recs []records.Record) Section {
	sec := genericSection(suite, recs)
	sec.Title = "Decoder comparison: Gaussian vs flow decoder (paper Table 2)"
	sec.Intro = "Each decoder runs from its own checkpoint (see the provenance lines); AFIN+SNIS rows are at the largest proposal budget."
	sec.Tables = append([]*Table{decodersTable(recs)}, sec.Tables...)
	return sec
}

// decodersTable has one row per (tier, decoder, method) at each
// method's largest budget: M1, M2, SW2 as mean ± sd over runs, and the
// decoder's AFIN+SNIS Pareto k̂ at that budget as the median with how
// many runs exceed 0.7 and how many have no finite k̂, so no run is
// silently left out of the k̂ column.
func decodersTable(recs []records.Record) *Table {
	t := &Table{
		Name:      "table2_decoders",
		Title:     "Gaussian vs flow decoder (paper Table 2)",
		Caption:   "Mean ± sd over runs (settings × seeds) at each method's largest budget. k̂: median Pareto k̂ of the decoder's AFIN+SNIS at its largest proposal budget, with the count of runs above 0.7 and of runs without a finite k̂ (∞ or missing) out of all runs.",
		Header:    []string{"Tier", "Decoder", "Method", "M1", "M2", "SW2", "k̂", "Flags"},
		RuleAfter: map[int]bool{},
	}
	main := filter(recs, func(r *records.Record) bool { return r.Stage == "" })
	final := finalBudget(main)
	var total flagCounts
	for _, g := range append(groups(main), "all") {
		label := groupLabel(g)
		if g == "all" {
			label = "Overall"
		}
		first := true
		for _, s := range decoderSeries(final) {
			rs := inScope(final[s], g)
			if len(rs) == 0 {
				continue
			}
			row := []Cell{plain(""), plain(s.Variant), plain(displayName(s.Method))}
			if first {
				row[0], first = plain(label), false
			}
			for _, m := range Metrics {
				row = append(row, collect(rs, m.Value).meanSDCell())
			}
			row = append(row, paretoCell(inScope(final[Series{Method: qualifierOf(s.Method), Variant: s.Variant}], g)))
			flags := countFlags(rs)
			total = total.add(flags)
			row = append(row, flags.cell(len(rs)))
			t.Rows = append(t.Rows, row)
			if p, ok := paperDecoderRow(g, s, rs); ok {
				t.Rows = append(t.Rows, p)
			}
		}
		t.RuleAfter[len(t.Rows)-1] = true
	}
	t.Caption += ` "(k n/a)" counts runs whose metric was not finite and is left out of the mean.` + total.caption() + paperCaption(t)
	return t
}

// decoderSeries orders the series decoder by decoder (Gaussian first, as
// the paper), AFIN before AFIN+SNIS within one.
func decoderSeries(final map[Series][]records.Record) []Series {
	out := sortedSeries(final)
	rank := map[string]int{"gaussian": 0, "flow": 1}
	sort.SliceStable(out, func(i, j int) bool {
		ri, okI := rank[out[i].Variant]
		rj, okJ := rank[out[j].Variant]
		if okI && okJ && ri != rj {
			return ri < rj
		}
		return false
	})
	return out
}

// paretoCell is the median finite k̂ of recs with the counts above 0.7
// and without a finite value, or "n/a" without AFIN+SNIS runs.
func paretoCell(recs []records.Record) Cell {
	if len(recs) == 0 {
		return plain("n/a")
	}
	var finite []float64
	over := 0
	for _, r := range recs {
		k, ok := r.Diagnostics["pareto_k"]
		v := float64(k)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			over++ // an infinite k̂ is above 0.7 too
			continue
		}
		finite = append(finite, v)
		if v > 0.7 {
			over++
		}
	}
	bad := len(recs) - len(finite)
	med := median(finite) // NaN when none is finite
	text := fmt.Sprintf("%s (>0.7: %d/%d; ∞/missing: %d)", fmtNum(med), over, len(recs), bad)
	tex := fmt.Sprintf("$%s$ ($>0.7$: %d/%d; $\\infty$/missing: %d)", texNum(med), over, len(recs), bad)
	return Cell{Text: text, TeX: tex}
}

// paperDecoderRow is the paper's Table 2 synthetic row for a decoder's
// AFIN, shown under this run's overall row (the paper averages over all
// synthetic settings, as "Overall" does).
func paperDecoderRow(g string, s Series, rs []records.Record) ([]Cell, bool) {
	if g != "all" {
		return nil, false
	}
	v1, ok := paperLookup("decoders", "synthetic", s.Method, s.Variant, "m1")
	if !ok {
		return nil, false
	}
	row := []Cell{plain(""), plain(s.Variant), plain(paperPrefix + displayName(s.Method))}
	for _, m := range Metrics {
		v, ok := paperLookup("decoders", "synthetic", s.Method, s.Variant, string(m))
		if !ok {
			row = append(row, plain("—"))
			continue
		}
		row = append(row, paperCell(v, mean(collect(rs, m.Value).xs)))
	}
	return append(row, plain(v1.Table), plain("")), true
}
