package reports

import (
	"fmt"
	"math"

	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/suite"
)

// The workflow table (issue 18): how the amortised workflow `auto` (AFIN,
// then PSIS-checked SNIS or AFIN-initialised NUTS) compares with AFIN
// alone and NUTS alone on a suite: which stage answered, accuracy, time,
// and the number of tasks that repays the checkpoint's training.

// workflowRow accumulates one method's final points over tasks.
type workflowRow struct {
	tasks           int
	sw2, m1, secs   finiteStats // each with the count of runs left out
	snis, nuts      int
	trainSecs       float64
	label, method   string
	budgetOfTaskKey map[string]int
}

// addWorkflowTables appends a workflow table to the sections of suites
// whose records include auto; not to a suite scored by calibration ranks,
// which has no reference to score accuracy against.
func addWorkflowTables(rep *Report, bySuite map[string][]records.Record) {
	for i := range rep.Sections {
		sec := &rep.Sections[i]
		if suite.ScoringOf(sec.ID) == suite.ByRanks {
			continue
		}
		if t := workflowTable(sec.ID, bySuite[sec.ID]); t != nil {
			sec.Tables = append(sec.Tables, t)
		}
	}
}

// workflowStages are the workflow table's rows in order: the workflow's
// network stage alone, its fallback sampler alone, the workflow.
type workflowStages struct{ network, fallback, workflow string }

func (s workflowStages) order() []string { return []string{s.network, s.fallback, s.workflow} }

// workflowTable is nil when the suite has no records of the catalog's
// workflow method (or the binary registers none).
func workflowTable(suite string, recs []records.Record) *Table {
	name, wf, ok := workflow()
	if !ok {
		return nil
	}
	st := workflowStages{network: wf.Network, fallback: wf.Fallback, workflow: name}
	rows := map[string]*workflowRow{}
	for _, m := range st.order() {
		rows[m] = &workflowRow{method: m, label: displayName(m) + " alone", trainSecs: math.NaN(), budgetOfTaskKey: map[string]int{}}
	}
	rows[name].label = name + " (workflow)"
	// The largest budget per task and method is the point compared.
	for i := range recs {
		r := &recs[i]
		w := rows[r.Method]
		if w == nil || r.Stage != "" {
			continue
		}
		k := r.Setting + "|" + fmt.Sprint(r.Seed)
		if b, ok := w.budgetOfTaskKey[k]; !ok || r.Budget > b {
			w.budgetOfTaskKey[k] = r.Budget
		}
	}
	for i := range recs {
		r := &recs[i]
		w := rows[r.Method]
		if w == nil || r.Stage != "" || w.budgetOfTaskKey[r.Setting+"|"+fmt.Sprint(r.Seed)] != r.Budget {
			continue
		}
		w.add(r)
	}
	if rows[name].tasks == 0 {
		return nil
	}
	return renderWorkflow(suite, st, rows)
}

func (w *workflowRow) add(r *records.Record) {
	w.tasks++
	w.sw2.add(float64(r.SW2))
	w.m1.add(float64(r.M1))
	w.secs.add(float64(r.Seconds))
	if v, ok := r.Diagnostics["auto_nuts"]; ok {
		if v == 1 {
			w.nuts++
		} else {
			w.snis++
		}
	}
	if v, ok := r.Diagnostics["auto_train_seconds"]; ok && !math.IsNaN(float64(v)) {
		w.trainSecs = float64(v)
	}
}

// renderWorkflow writes the rows and the break-even line.
func renderWorkflow(suite string, st workflowStages, rows map[string]*workflowRow) *Table {
	t := &Table{Name: "workflow_" + suite,
		Title:   fmt.Sprintf("Suite %s: the amortised workflow (%s) against %s and %s alone", suite, st.workflow, displayName(st.network), displayName(st.fallback)),
		Caption: "Each method's largest budget per task. auto answers with AFIN+SNIS when PSIS k̂ ≤ 0.7 inside the training support, else with NUTS started at AFIN draws with AFIN's covariance as metric and a short warm-up; tasks where neither stage passed its own diagnostics have no auto record. Break-even: checkpoint training seconds ÷ (NUTS seconds − auto seconds) per task.",
		Header:  []string{"Method", "Tasks", "SNIS answered", "NUTS answered", "M1", "SW2", "Seconds/task", "Total seconds"}}
	nutsTasks := rows[st.fallback].tasks
	for _, m := range st.order() {
		w := rows[m]
		if w.tasks == 0 {
			continue
		}
		share := func(n int) Cell {
			if m != st.workflow {
				return plain("-")
			}
			return plain(fmt.Sprintf("%.0f%%", 100*float64(n)/float64(w.tasks)))
		}
		mt, _ := meanSD(w.secs.xs)
		t.Rows = append(t.Rows, []Cell{plain(w.label), plain(fmt.Sprint(w.tasks)), share(w.snis), share(w.nuts),
			w.m1.meanSDCell(), w.sw2.meanSDCell(), w.secs.note(plain(secondsText(mt))), plain(secondsText(mt * float64(w.tasks)))})
	}
	auto := rows[st.workflow]
	if nutsTasks > auto.tasks {
		t.Rows = append(t.Rows, []Cell{plain(fmt.Sprintf("%s: no stage passed on %d of %d tasks", st.workflow, nutsTasks-auto.tasks, nutsTasks))})
	}
	tn, _ := meanSD(rows[st.fallback].secs.xs)
	ta, _ := meanSD(auto.secs.xs)
	saving := tn - ta
	text := "break-even: n/a (no NUTS records or no training time)"
	switch {
	case !(saving > 0) && !math.IsNaN(saving):
		text = fmt.Sprintf("break-even: never (auto costs %s more per task than NUTS)", secondsText(-saving))
	case saving > 0 && !math.IsNaN(auto.trainSecs):
		text = fmt.Sprintf("break-even: %.0f tasks (training %s ÷ saving %s per task)", math.Ceil(auto.trainSecs/saving),
			secondsText(auto.trainSecs), secondsText(saving))
	}
	t.Rows = append(t.Rows, []Cell{plain(text)})
	// Short rows are notes; pad them to the header's width.
	for i, r := range t.Rows {
		for len(r) < len(t.Header) {
			r = append(r, plain(""))
		}
		t.Rows[i] = r
	}
	return t
}
