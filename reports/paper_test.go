package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// The shipped data file parses and every value can be traced to a table
// of the paper.
func TestPaperValuesParse(t *testing.T) {
	pv, err := Paper()
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]int{}
	for i, v := range pv.Values {
		if !strings.HasPrefix(v.Table, "tab:") {
			t.Errorf("values[%d]: table %q is not a LaTeX table label", i, v.Table)
		}
		tables[v.Table]++
	}
	for _, want := range []string{"tab:gaussian_flow_decoder_summary", "tab:extrapolate-highdn", "tab:extrapolate-highdn-m1", "tab:extrapolate-highdn-m2", "tab:snis-diagnostics"} {
		if tables[want] == 0 {
			t.Errorf("no values from %s", want)
		}
	}
	for _, c := range []struct {
		suite, group, method, variant, metric string
		mean                                  float64
	}{
		{"extrapolation", "ood_n", "afin-snis", "", "sw2", 0.0013},
		{"snis", "medium", "frvi-snis", "1k", "max_weight", 8.05e-2},
		{"synthetic", "all", "afin", "", "seconds", 0.0087},
		{"decoders", "uci", "afin", "flow", "m1", 0.1707},
	} {
		v, ok := paperLookup(c.suite, c.group, c.method, c.variant, c.metric)
		if !ok || v.Mean != c.mean {
			t.Errorf("%+v: got %v, %v", c, v.Mean, ok)
		}
	}
}

func TestParsePaperValuesRejects(t *testing.T) {
	for _, c := range []struct{ name, json, want string }{
		{"not json", `{`, "paper values"},
		{"empty", `{"values": []}`, "no values"},
		{"no table", `{"values": [{"suite":"s","group":"g","method":"m","metric":"m1","mean":1}]}`, "no table reference"},
		{"no metric", `{"values": [{"table":"tab:x","suite":"s","group":"g","method":"m","mean":1}]}`, "required"},
		{"twice", `{"values": [{"table":"tab:x","suite":"s","group":"g","method":"m","metric":"m1","mean":1},{"table":"tab:y","suite":"s","group":"g","method":"m","metric":"m1","mean":2}]}`, "given twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parsePaperValues([]byte(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestPaperCellDifference(t *testing.T) {
	sd := 0.001
	for _, c := range []struct {
		name string
		v    PaperValue
		ours float64
		want string
	}{
		{"above", PaperValue{Mean: 0.0358, SD: &sd}, 0.1, "0.0358 ± 0.00100 (Δ +0.0642)"},
		{"below", PaperValue{Mean: 0.5}, 0.25, "0.500 (Δ −0.250)"},
		{"no ours", PaperValue{Mean: 0.5}, math.NaN(), "0.500"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := paperCell(c.v, c.ours).Text; got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestFmtNumFixedSignificantDigits(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{0.1, "0.100"}, {0.0358, "0.0358"}, {0.09996, "0.100"}, {1, "1.00"}, {12.34, "12.3"},
		{123.4, "123"}, {1234.5, "1230"}, {0, "0"}, {2.5e-4, "2.50e-04"}, {-0.05, "-0.0500"},
		{math.NaN(), "n/a"}, {math.Inf(1), "∞"},
	} {
		if got := fmtNum(c.x); got != c.want {
			t.Errorf("fmtNum(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}

// The paper rows of the SNIS and decoder tables appear where the paper
// has a value and nowhere else.
func TestPaperRows(t *testing.T) {
	rec := func(method, variant string, sw2 float64) records.Record {
		return records.Record{Method: method, Variant: variant, SW2: records.Num(sw2),
			Diagnostics: map[string]records.Num{"pareto_k": 0.3, "max_weight": 0.01, "entropy_ratio": 0.9, "energy_gap": 0.1}}
	}
	for _, c := range []struct {
		name string
		row  func() ([]Cell, bool)
		ok   bool
		want string
	}{
		{"snis AFIN+SNIS medium", func() ([]Cell, bool) {
			return paperSNISRow("medium", Series{Method: "afin-snis"}, []records.Record{rec("afin-snis", "", 0.1)})
		}, true, "paper: AFIN+SNIS|tab:snis-diagnostics|0.261 ± 0.0100 (Δ +0.0390)"},
		{"snis FRVI+SNIS at a budget the paper lacks", func() ([]Cell, bool) {
			return paperSNISRow("medium", Series{Method: "frvi-snis", Variant: "100"}, nil)
		}, false, ""},
		{"decoder flow overall", func() ([]Cell, bool) {
			return paperDecoderRow("all", Series{Method: "afin", Variant: "flow"}, []records.Record{rec("afin", "flow", 0.02)})
		}, true, "0.0187 ± 1.00e-04 (Δ +0.00130)"},
		{"decoder per tier has none", func() ([]Cell, bool) {
			return paperDecoderRow("easy", Series{Method: "afin", Variant: "flow"}, nil)
		}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			row, ok := c.row()
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if got := strings.Join(texts(row), "|"); !strings.Contains(got, c.want) {
				t.Errorf("row %q lacks %q", got, c.want)
			}
		})
	}
}
