package reports

import (
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// The reference table summarises each setting's references over seeds:
// the kind, the worst R̂ and smallest ESS, and the flagged ones.
func TestReferenceTable(t *testing.T) {
	ref := func(setting, group string, seed uint64, ri records.RefInfo) records.Record {
		return records.Record{Suite: "synthetic", Setting: setting, Group: group, Seed: seed, Method: "nuts", Reference: ri}
	}
	nuts := func(rhat, ess float64, nc bool) records.RefInfo {
		return records.RefInfo{Kind: "nuts", Draws: 2000, Warmup: 300, Rhat: rhat, ESS: ess, NotConverged: nc}
	}
	recs := []records.Record{
		ref("b/hard", "hard", 0, nuts(1.002, 900, false)),
		ref("b/hard", "hard", 1, nuts(1.04, 150, true)),
		ref("a/easy", "easy", 0, records.RefInfo{Kind: "exact", Draws: 2000}),
	}
	tab := referenceTable(recs)
	for _, c := range []struct {
		row  int
		want string
	}{
		{0, "a/easy|exact|2000|—|—|—|0/1"},
		{1, "b/hard|nuts|2000|300|⚠ 1.040|150|⚠ 1/2"},
	} {
		if got := strings.Join(texts(tab.Rows[c.row]), "|"); got != c.want {
			t.Errorf("row %d = %q, want %q", c.row, got, c.want)
		}
	}
	if !strings.Contains(tab.Caption, "Worst R̂ in the suite: 1.040; references flagged not converged: 1") {
		t.Errorf("caption %q", tab.Caption)
	}
	if !tab.RuleAfter[0] {
		t.Error("no rule between the easy and hard groups")
	}
}

// The per-setting table has a row per setting in group order and bolds
// the lowest of each row.
func TestPerSettingTable(t *testing.T) {
	var recs []records.Record
	for _, r := range []struct {
		setting, group, method string
		sw2                    float64
	}{
		{"x/hard", "hard", "afin", 0.3}, {"x/hard", "hard", "nuts", 0.1},
		{"x/easy", "easy", "afin", 0.05}, {"x/easy", "easy", "nuts", 0.2},
	} {
		recs = append(recs, records.Record{Suite: "synthetic", Setting: r.setting, Group: r.group, Method: r.method, Budget: 10, SW2: records.Num(r.sw2), D: 4, N: 8})
	}
	tab := perSettingTable(recs, MetricSW2, "setting")
	if got := strings.Join(tab.Header, "|"); got != "Setting|d|N|AFIN|NUTS" {
		t.Fatalf("header %q", got)
	}
	if tab.Rows[0][0].Text != "x/easy" || !tab.Rows[0][3].Bold || tab.Rows[1][3].Bold || !tab.Rows[1][4].Bold {
		t.Errorf("rows %v", tab.Rows)
	}
	if tab.Rows[1][3].Text != "0.300" {
		t.Errorf("AFIN hard cell %q", tab.Rows[1][3].Text)
	}
}
