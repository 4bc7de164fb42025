package reports

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/afin-bench/afin/records"
)

// settingOrder sorts settings by their group in the paper's order, then
// by name, so a per-setting table reads tier by tier.
func settingOrder(recs []records.Record) []string {
	rank := map[string]int{}
	for i, g := range groups(recs) {
		rank[g] = i
	}
	group := map[string]string{}
	for i := range recs {
		group[recs[i].Setting] = recs[i].Group
	}
	out := make([]string, 0, len(group))
	for s := range group {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if ri, rj := rank[group[out[i]]], rank[group[out[j]]]; ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

// perSettingTable shows one metric for every setting (a synthetic
// setting, a UCI dataset, an extrapolation configuration) and every
// method at its largest budget: the averages of the headline and the
// charts hide which settings a method fails on. Cells are the mean over
// seeds, with the runs left out counted; bold is the row's lowest.
func perSettingTable(recs []records.Record, m Metric, what string) *Table {
	suite := recs[0].Suite
	final := finalBudget(recs)
	series := sortedSeries(final)
	t := &Table{
		Name:      "settings_" + suite,
		Title:     fmt.Sprintf("%s per %s: %s at each method's largest budget", titleCase(suite), what, metricTitle(m)),
		Header:    []string{strings.ToUpper(what[:1]) + what[1:], "d", "N"},
		RuleAfter: map[int]bool{},
	}
	for _, s := range series {
		t.Header = append(t.Header, s.Name())
	}
	bySetting := map[string][]records.Record{}
	for _, r := range recs {
		bySetting[r.Setting] = append(bySetting[r.Setting], r)
	}
	prevGroup := ""
	for _, setting := range settingOrder(recs) {
		rs := bySetting[setting]
		if prevGroup != "" && rs[0].Group != prevGroup {
			t.RuleAfter[len(t.Rows)-1] = true
		}
		prevGroup = rs[0].Group
		row := []Cell{plain(setting), plain(fmt.Sprint(rs[0].D)), plain(fmt.Sprint(rs[0].N))}
		best, bestIdx := math.Inf(1), -1
		for i, s := range series {
			st := collect(filter(final[s], func(r *records.Record) bool { return r.Setting == setting }), m.Value)
			v := mean(st.xs)
			row = append(row, st.note(Cell{Text: fmtNum(v), TeX: "$" + texNum(v) + "$"}))
			if v < best {
				best, bestIdx = v, i
			}
		}
		if bestIdx >= 0 {
			row[bestIdx+3].Bold = true
		}
		t.Rows = append(t.Rows, row)
	}
	t.Caption = fmt.Sprintf("%s per %s at each method's largest budget, mean over %s (the statistic of the headline table and the charts); "+
		"bold is the lowest in the row; \"(k n/a)\" counts runs whose value was not finite and is left out.", metricTitle(m), what, seedsText(recs))
	return t
}

// referenceTable says how good the reference every metric is measured
// against is, per setting: exact (the conjugate posterior) or a long NUTS
// run, its draws and warm-up, its worst R̂ and smallest bulk ESS over the
// seeds' tasks, and how many were flagged not converged. A metric against
// an unconverged reference measures the reference as much as the method.
func referenceTable(recs []records.Record) *Table {
	suite := recs[0].Suite
	t := &Table{
		Name:      "reference_" + suite,
		Title:     titleCase(suite) + ": reference posteriors per setting",
		Header:    []string{"Setting", "Reference", "Draws", "Warm-up", "Max R̂", "Min bulk ESS", "Not converged"},
		RuleAfter: map[int]bool{},
	}
	type task struct {
		setting string
		seed    uint64
	}
	refs := map[task]records.RefInfo{}
	group := map[string]string{}
	for _, r := range recs {
		refs[task{r.Setting, r.Seed}] = r.Reference
		group[r.Setting] = r.Group
	}
	worstRhat, flagged := 0.0, 0
	prevGroup := ""
	for _, setting := range settingOrder(recs) {
		var rs []records.RefInfo
		for k, v := range refs {
			if k.setting == setting {
				rs = append(rs, v)
			}
		}
		if prevGroup != "" && group[setting] != prevGroup {
			t.RuleAfter[len(t.Rows)-1] = true
		}
		prevGroup = group[setting]
		row, rh, nc := referenceRow(setting, rs)
		worstRhat, flagged = math.Max(worstRhat, rh), flagged+nc
		t.Rows = append(t.Rows, row)
	}
	t.Caption = fmt.Sprintf("One reference per task (setting × seed; %s). Exact: draws from the conjugate posterior, no R̂ or ESS to report. "+
		"NUTS: the long reference run; max R̂ and min bulk ESS over the seeds' tasks (⚠ when R̂ > 1.01). Worst R̂ in the suite: %.3f; references flagged not converged: %d.",
		seedsText(recs), worstRhat, flagged)
	return t
}

// referenceRow summarises one setting's references; it returns the
// row, its worst R̂ (0 for exact) and its count flagged not converged.
func referenceRow(setting string, rs []records.RefInfo) ([]Cell, float64, int) {
	kinds := map[string]bool{}
	draws, warm := map[int]bool{}, map[int]bool{}
	rhat, ess, nc := 0.0, math.Inf(1), 0
	for _, r := range rs {
		k := r.Kind
		if k == "" {
			k = "unknown"
		}
		kinds[k] = true
		draws[r.Draws] = true
		if r.Kind != "exact" {
			warm[r.Warmup] = true // an exact draw has no warm-up
		}
		if r.Rhat > 0 {
			rhat = math.Max(rhat, r.Rhat)
		}
		if r.ESS > 0 {
			ess = math.Min(ess, r.ESS)
		}
		if r.NotConverged {
			nc++
		}
	}
	rhatCell, essCell := plain("—"), plain("—")
	if rhat > 0 {
		// R̂ is read against 1.01: three decimals, not three digits.
		rhatCell = plain(fmt.Sprintf("%.3f", rhat))
		if rhat > 1.01 {
			rhatCell = plain(fmt.Sprintf("⚠ %.3f", rhat))
		}
	}
	if !math.IsInf(ess, 1) {
		essCell = plain(fmt.Sprintf("%.0f", ess))
	}
	ncCell := plain(fmt.Sprintf("%d/%d", nc, len(rs)))
	if nc > 0 {
		ncCell = plain(fmt.Sprintf("⚠ %d/%d", nc, len(rs)))
	}
	return []Cell{plain(setting), plain(joinKeys(kinds)), plain(joinInts(draws)), plain(joinInts(warm)), rhatCell, essCell, ncCell}, rhat, nc
}

func joinKeys(m map[string]bool) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func joinInts(m map[int]bool) string {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	if len(out) == 0 {
		return "—"
	}
	sort.Ints(out)
	s := make([]string, len(out))
	for i, v := range out {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ", ")
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
