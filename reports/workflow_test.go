package reports

import (
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// TestWorkflowTable: shares of the answering stage, per-task seconds and
// the break-even count from hand-made records (saving 10 − 1.6 = 8.4 s
// per task against 1000 s of training: 120 tasks).
func TestWorkflowTable(t *testing.T) {
	rec := func(method string, seed uint64, budget int, secs float64, diag map[string]records.Num) records.Record {
		return records.Record{Suite: "synthetic", Setting: "s", Group: "easy", Seed: seed, Method: method,
			BudgetKind: "draws", Budget: budget, M1: 0.1, M2: 0.1, SW2: 0.1, Seconds: records.Num(secs), Diagnostics: diag}
	}
	recs := []records.Record{
		rec("nuts", 0, 100, 1, nil), rec("nuts", 0, 1000, 10, nil), rec("nuts", 1, 1000, 10, nil),
		rec("afin", 0, 2000, 0.1, nil), rec("afin", 1, 2000, 0.1, nil),
		rec("auto", 0, 1000, 0.2, map[string]records.Num{"auto_nuts": 0, "auto_train_seconds": 1000}),
		rec("auto", 1, 1000, 3, map[string]records.Num{"auto_nuts": 1, "auto_train_seconds": 1000}),
	}
	tbl := workflowTable("synthetic", recs)
	if tbl == nil {
		t.Fatal("no workflow table")
	}
	var text []string
	for _, r := range tbl.Rows {
		text = append(text, strings.Join(texts(r), " | "))
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"auto (workflow) | 2 | 50% | 50%", "NUTS alone | 2 | - | - ", "| 10.0s | 20.0s", "break-even: 120 tasks"} {
		if !strings.Contains(all, want) {
			t.Errorf("table lacks %q:\n%s", want, all)
		}
	}
	if workflowTable("synthetic", recs[:5]) != nil {
		t.Error("a table without auto records")
	}
}
