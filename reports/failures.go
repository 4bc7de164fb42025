package reports

import (
	"fmt"
	"sort"
	"strings"

	"github.com/afin-bench/afin/records"
)

// splitFailed separates the scored records from the failed ones
// (records.Record.Failed): tables and charts are built from the first,
// the Failures section and the per-table counts from the second.
func splitFailed(recs []records.Record) (scored, failed []records.Record) {
	for _, r := range recs {
		if r.Failed() {
			failed = append(failed, r)
		} else {
			scored = append(scored, r)
		}
	}
	return scored, failed
}

// failedUnit is one failed unit as the report lists it: its key, the
// points it failed at and the reason.
type failedUnit struct {
	suite, setting, method, reason string
	seed                           uint64
	points                         []string
}

// failedUnits groups failed records by unit (a unit fails every pending
// slot with one reason), in suite, setting, seed, method order.
func failedUnits(failed []records.Record) []*failedUnit {
	byKey := map[string]*failedUnit{}
	var out []*failedUnit
	for _, r := range failed {
		k := r.UnitKey()
		u := byKey[k]
		if u == nil {
			u = &failedUnit{suite: r.Suite, setting: r.Setting, seed: r.Seed,
				method: Series{r.Method, r.Variant, ""}.Name(), reason: r.Error}
			byKey[k] = u
			out = append(out, u)
		}
		p := fmt.Sprintf("%d %s", r.Budget, r.BudgetKind)
		if r.Stage != "" {
			p += " (" + r.Stage + ")"
		}
		u.points = append(u.points, p)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.suite != b.suite {
			return a.suite < b.suite
		}
		if a.setting != b.setting {
			return a.setting < b.setting
		}
		if a.seed != b.seed {
			return a.seed < b.seed
		}
		return a.method < b.method
	})
	return out
}

// addFailures counts the failed units of each suite in its section's
// intro and every caption of it (its tables leave them out), and appends
// a Failures section listing each failed unit with its reason. A report
// without failures is unchanged.
func addFailures(rep *Report, failed []records.Record) {
	units := failedUnits(failed)
	if len(units) == 0 {
		return
	}
	perSuite := map[string]int{}
	for _, u := range units {
		perSuite[u.suite]++
	}
	for i := range rep.Sections {
		sec := &rep.Sections[i]
		n := perSuite[sec.ID]
		if n == 0 {
			continue
		}
		note := fmt.Sprintf(" %d failed unit(s) of this suite have no numbers and are left out (see Failures).", n)
		sec.Intro += note
		for _, t := range sec.Tables {
			t.Caption += note
		}
	}
	rep.FailedUnits = len(units)
	rep.Sections = append(rep.Sections, failuresSection(units))
}

// failuresSection lists the failed units with their reasons.
func failuresSection(units []*failedUnit) Section {
	t := &Table{
		Name:   "failures",
		Title:  "Failed units",
		Header: []string{"Suite", "Setting", "Seed", "Method", "Points", "Reason"},
		Caption: fmt.Sprintf("%d unit(s) failed: they left failed records (no metrics) and every table above leaves them out. "+
			"`afin bench --retry-failed` reruns them; a success supersedes the failure.", len(units)),
	}
	for _, u := range units {
		t.Rows = append(t.Rows, []Cell{plain(u.suite), plain(u.setting), plain(fmt.Sprint(u.seed)), plain(u.method),
			plain(strings.Join(u.points, ", ")), plain(records.TruncateError(u.reason, 600))})
	}
	return Section{ID: "failures", Title: "Failures", Intro: t.Caption, Tables: []*Table{t}}
}
