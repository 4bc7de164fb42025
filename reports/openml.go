package reports

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/records"
)

// The openml suite's section (paper App. E.6): our methods' posterior
// predictive beside the paper's AFIN Flow + SNIS and TabPFN public v2, in
// the paper's summary form (means over datasets, accuracy wins or ties
// against TabPFN, mean accuracy gap in points), a gap table that splits
// the distance to TabPFN into the logistic model's (NUTS) and the
// approximation's, and a per-dataset table.

//go:embed openml_paper.json
var openmlPaperJSON []byte

// OpenMLPaper are the paper's published OpenML numbers.
type OpenMLPaper struct {
	Source      string `json:"source"`
	AFINLabel   string `json:"afin_label"`
	TabPFNLabel string `json:"tabpfn_label"`
	Summary     struct {
		AFIN     OpenMLScores `json:"afin"`
		TabPFN   OpenMLScores `json:"tabpfn"`
		WinsTies int          `json:"wins_ties"`
		Datasets int          `json:"datasets"`
		AccGapPP float64      `json:"acc_gap_pp"`
	} `json:"summary"`
	Datasets []OpenMLPaperRow `json:"datasets"`
}

// OpenMLScores are test accuracy, NLL and AUC.
type OpenMLScores struct {
	Acc float64 `json:"acc"`
	NLL float64 `json:"nll"`
	AUC float64 `json:"auc"`
}

// OpenMLPaperRow is one row of the paper's table openml-pfn-full.
type OpenMLPaperRow struct {
	Name       string       `json:"name"`
	ID         int          `json:"id"`
	AFIN       OpenMLScores `json:"afin"`
	TabPFN     OpenMLScores `json:"tabpfn"`
	DeltaAccPP float64      `json:"delta_acc_pp"`
}

var (
	openmlPaperOnce sync.Once
	openmlPaperData *OpenMLPaper
	openmlPaperErr  error
)

// PaperOpenML returns the embedded published OpenML values.
func PaperOpenML() (*OpenMLPaper, error) {
	openmlPaperOnce.Do(func() {
		var p OpenMLPaper
		if err := json.Unmarshal(openmlPaperJSON, &p); err != nil {
			openmlPaperErr = fmt.Errorf("openml paper values: %w", err)
			return
		}
		if len(p.Datasets) != 16 {
			openmlPaperErr = fmt.Errorf("openml paper values: %d datasets, want 16", len(p.Datasets))
			return
		}
		openmlPaperData = &p
	})
	return openmlPaperData, openmlPaperErr
}

// winTie is the authors' rule: AFIN's accuracy minus TabPFN's ≥ −1e-9.
func winTie(acc, tabpfn float64) bool { return acc-tabpfn >= -1e-9 }

// openmlCell is one (dataset, method) of our records: the means over
// seeds of the metrics at the method's largest budget.
type openmlCell struct {
	test, train    OpenMLScores
	seconds, ess   float64
	runs, d, n     int
	outside, notOK string
}

func openmlMetric(r *records.Record, k string) float64 {
	v, ok := r.Diagnostics[k]
	if !ok {
		return math.NaN()
	}
	return float64(v)
}

// openmlCells groups the records by series and dataset.
func openmlCells(recs []records.Record) (map[Series]map[string]*openmlCell, []Series) {
	final := finalBudget(filter(recs, func(r *records.Record) bool { return r.Stage == "" }))
	out := map[Series]map[string]*openmlCell{}
	for s, rs := range final {
		by := map[string][]records.Record{}
		for _, r := range rs {
			by[r.Setting] = append(by[r.Setting], r)
		}
		out[s] = map[string]*openmlCell{}
		for ds, rs := range by {
			c := &openmlCell{runs: len(rs), d: rs[0].D, n: rs[0].N}
			avg := func(k string) float64 {
				var xs []float64
				for i := range rs {
					xs = append(xs, openmlMetric(&rs[i], k))
				}
				return mean(xs)
			}
			c.test = OpenMLScores{avg("test_acc"), avg("test_nll"), avg("test_auc")}
			c.train = OpenMLScores{avg("train_acc"), avg("train_nll"), avg("train_auc")}
			c.ess = avg("ess_ratio")
			var secs []float64
			for _, r := range rs {
				secs = append(secs, float64(r.Seconds))
				if r.OutsideSupport != "" {
					c.outside = r.OutsideSupport
				}
				if r.NotConverged != "" {
					c.notOK = r.NotConverged
				}
			}
			c.seconds = mean(secs)
			out[s][ds] = c
		}
	}
	return out, sortedSeries(out)
}

// openmlDatasets are the datasets our records cover, in the paper's order.
func openmlDatasets(p *OpenMLPaper, cells map[Series]map[string]*openmlCell) []OpenMLPaperRow {
	seen := map[string]bool{}
	for _, m := range cells {
		for ds := range m {
			seen[ds] = true
		}
	}
	var out []OpenMLPaperRow
	for _, r := range p.Datasets {
		if seen[r.Name] {
			out = append(out, r)
		}
	}
	return out
}

func openmlSection(suite string, recs []records.Record) Section {
	sec := Section{ID: suite, Title: "Posterior-predictive transfer on OpenML (paper App. E.6)"}
	p, err := PaperOpenML()
	if err != nil {
		sec.Intro = "The paper's OpenML values could not be read: " + err.Error()
		return sec
	}
	cells, series := openmlCells(recs)
	ds := openmlDatasets(p, cells)
	sec.Intro = openmlIntro(recs, ds)
	sec.Tables = []*Table{openmlSummaryTable(p, cells, series, ds), openmlGapTable(p, cells, ds), openmlDatasetTable(p, cells, series, ds)}
	return sec
}

// openmlIntro says which checkpoint made our AFIN columns, which decoder
// the paper's used, and where the tasks leave the training support.
func openmlIntro(recs []records.Record, ds []OpenMLPaperRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Bayesian logistic regression z ~ N(0, I), y ~ Bernoulli(σ(xᵀz)) on %d binary OpenML datasets (%s); stratified 70/30 split, the same for every method; p(y=1|x) = E_q[σ(xᵀz)], SNIS-weighted for AFIN+SNIS. ",
		len(ds), seedsText(recs))
	cks := map[string]bool{}
	outside := map[string]string{}
	for _, r := range recs {
		if e, _ := catalog.Lookup(r.Method); !e.Network {
			continue
		}
		dir, _ := r.MethodSettings["checkpoint"].(string)
		cfg, _ := r.MethodSettings["checkpoint_config"].(string)
		dec, _ := r.MethodSettings["decoder"].(string)
		step, _ := r.MethodSettings["checkpoint_step"].(float64)
		cks[checkpointWords(dir, cfg, dec, int(step), r.Provenance.Checkpoint)] = true
		if r.OutsideSupport != "" {
			outside[r.Setting] = r.OutsideSupport
		}
	}
	if len(cks) > 0 {
		var names []string
		for k := range cks {
			names = append(names, k)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "Our AFIN and AFIN+SNIS columns come from checkpoint %s. The paper's AFIN column is its own flow-decoder network (5,051,458 parameters, GPU-trained), not this checkpoint. ", strings.Join(names, "; "))
	}
	if len(outside) > 0 {
		var names []string
		for _, r := range ds {
			if why, ok := outside[r.Name]; ok {
				names = append(names, fmt.Sprintf("%s (%s)", r.Name, why))
			}
		}
		fmt.Fprintf(&b, "Outside the checkpoint's training support on %d of %d datasets, so AFIN extrapolates there (flagged ⚑ in the tables): %s. ", len(names), len(ds), strings.Join(names, "; "))
		var overD []string
		for _, r := range ds {
			if why := outside[r.Name]; strings.HasPrefix(why, "d=") {
				overD = append(overD, r.Name)
			}
		}
		if len(overD) > 0 {
			fmt.Fprintf(&b, "On %d of them d_model itself exceeds the checkpoint's training dimensions (%s): %s. ", len(overD), dSupport(recs), strings.Join(overD, ", "))
		}
	}
	b.WriteString("NUTS is the reference for the model: its scores are what exact Bayesian logistic regression achieves on the split.")
	return b.String()
}

// openmlMeans averages a series' test scores over the datasets ds, with
// wins or ties against the paper's TabPFN and the mean accuracy gap;
// missing datasets are counted, not averaged as zeros.
type openmlMeans struct {
	acc, nll, auc, seconds, gapPP float64
	wins, n, outside, notOK       int
}

func meansOf(m map[string]*openmlCell, ds []OpenMLPaperRow) openmlMeans {
	var acc, nll, auc, secs, gap []float64
	var out openmlMeans
	for _, r := range ds {
		c, ok := m[r.Name]
		if !ok {
			continue
		}
		out.n++
		acc, nll, auc, secs = append(acc, c.test.Acc), append(nll, c.test.NLL), append(auc, c.test.AUC), append(secs, c.seconds)
		gap = append(gap, 100*(c.test.Acc-r.TabPFN.Acc))
		if winTie(c.test.Acc, r.TabPFN.Acc) {
			out.wins++
		}
		if c.outside != "" {
			out.outside++
		}
		if c.notOK != "" {
			out.notOK++
		}
	}
	out.acc, out.nll, out.auc, out.seconds, out.gapPP = mean(acc), mean(nll), mean(auc), mean(secs), mean(gap)
	return out
}

func num3(v float64) Cell {
	if math.IsNaN(v) {
		return plain("–")
	}
	return plain(fmt.Sprintf("%.3f", v))
}

func pp(v float64) Cell {
	if math.IsNaN(v) {
		return plain("–")
	}
	return Cell{Text: fmt.Sprintf("%+.2f pp", v), TeX: fmt.Sprintf("$%+.2f$ pp", v)}
}

// openmlSummaryTable is the paper's summary table with our methods
// added: every row averages over the same datasets (ours), and the
// paper's published row over all 16 is shown as printed.
func openmlSummaryTable(p *OpenMLPaper, cells map[Series]map[string]*openmlCell, series []Series, ds []OpenMLPaperRow) *Table {
	t := &Table{
		Name:  "openml_summary",
		Title: "OpenML posterior-predictive comparison (paper table openml-pfn-summary)",
		Caption: fmt.Sprintf("Test metrics averaged over the %d datasets our records cover (mean over seeds first). Acc. win/tie: datasets where the row's accuracy minus TabPFN's (the paper's) is ≥ −1e-9, the authors' rule; gap: mean accuracy minus TabPFN's in percentage points. "+
			"Paper rows marked \"as printed\" are the paper's summary over all 16 datasets; the others are the paper's per-dataset values averaged over the same datasets as ours. ⚑: datasets where the AFIN checkpoint runs outside its training support.", len(ds)),
		Header:    []string{"Method", "Source", "Mean acc. ↑", "Mean NLL ↓", "Mean AUC ↑", "Acc. win/tie", "Mean acc. gap", "Mean seconds", "Flags"},
		RuleAfter: map[int]bool{},
	}
	for _, s := range series {
		m := meansOf(cells[s], ds)
		flags := ""
		if m.outside > 0 {
			flags = fmt.Sprintf("⚑ %d/%d outside support", m.outside, m.n)
		}
		if m.notOK > 0 {
			flags = strings.TrimPrefix(flags+fmt.Sprintf("; %d not converged", m.notOK), "; ")
		}
		t.Rows = append(t.Rows, []Cell{plain(s.Name()), plain("ours"), num3(m.acc), num3(m.nll), num3(m.auc),
			plain(fmt.Sprintf("%d/%d", m.wins, m.n)), pp(m.gapPP), num3(m.seconds), plain(flags)})
	}
	t.RuleAfter[len(t.Rows)-1] = true
	var afinAcc, afinNLL, afinAUC, tAcc, tNLL, tAUC, gap []float64
	wins := 0
	for _, r := range ds {
		afinAcc, afinNLL, afinAUC = append(afinAcc, r.AFIN.Acc), append(afinNLL, r.AFIN.NLL), append(afinAUC, r.AFIN.AUC)
		tAcc, tNLL, tAUC = append(tAcc, r.TabPFN.Acc), append(tNLL, r.TabPFN.NLL), append(tAUC, r.TabPFN.AUC)
		gap = append(gap, 100*(r.AFIN.Acc-r.TabPFN.Acc))
		if winTie(r.AFIN.Acc, r.TabPFN.Acc) {
			wins++
		}
	}
	if len(ds) != len(p.Datasets) {
		t.Rows = append(t.Rows,
			[]Cell{plain("AFIN Flow + SNIS"), plain(fmt.Sprintf("paper, same %d datasets", len(ds))), num3(mean(afinAcc)), num3(mean(afinNLL)), num3(mean(afinAUC)),
				plain(fmt.Sprintf("%d/%d", wins, len(ds))), pp(mean(gap)), plain("–"), plain("")},
			[]Cell{plain(p.TabPFNLabel), plain(fmt.Sprintf("paper, same %d datasets", len(ds))), num3(mean(tAcc)), num3(mean(tNLL)), num3(mean(tAUC)),
				plain("–"), plain("–"), plain("–"), plain("")})
	}
	s := p.Summary
	t.Rows = append(t.Rows,
		[]Cell{plain("AFIN Flow + SNIS"), plain("paper, as printed"), num3(s.AFIN.Acc), num3(s.AFIN.NLL), num3(s.AFIN.AUC),
			plain(fmt.Sprintf("%d/%d", s.WinsTies, s.Datasets)), pp(s.AccGapPP), plain("–"), plain("")},
		[]Cell{plain(p.TabPFNLabel), plain("paper, as printed"), num3(s.TabPFN.Acc), num3(s.TabPFN.NLL), num3(s.TabPFN.AUC),
			plain("–"), plain("–"), plain("–"), plain("")})
	return t
}

// openmlGapTable splits the distance from our AFIN+SNIS (and the paper's
// AFIN) to TabPFN into the model's part, NUTS − TabPFN, and the
// approximation's, AFIN − NUTS, per metric, over the datasets where NUTS
// ran.
func openmlGapTable(p *OpenMLPaper, cells map[Series]map[string]*openmlCell, ds []OpenMLPaperRow) *Table {
	t := &Table{
		Name:  "openml_gaps",
		Title: "OpenML: the logistic model's gap to TabPFN vs the amortised approximation's",
		Caption: "Means over the datasets where NUTS ran. Model gap: NUTS (exact Bayesian logistic regression on this split) minus the paper's TabPFN; approximation gap: AFIN minus NUTS. " +
			"Model gap + approximation gap = AFIN − TabPFN. Accuracy and AUC: higher is better; NLL: lower is better. The paper's split differs from ours (same sizes, other rows), so the paper's AFIN − NUTS mixes two splits.",
		Header: []string{"Metric", "TabPFN (paper)", "NUTS (ours)", "Model gap", "AFIN Flow+SNIS (paper)", "Approx. gap (paper AFIN)", "AFIN+SNIS (ours)", "Approx. gap (our AFIN+SNIS)"},
	}
	_, wf, _ := workflow()
	nuts := cells[Series{Method: referenceName()}]
	snis := cells[Series{Method: wf.Weighted}]
	var keep []OpenMLPaperRow
	for _, r := range ds {
		if _, ok := nuts[r.Name]; ok {
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		t.Caption += " No NUTS records: nothing to split."
		return t
	}
	for _, m := range []struct {
		name string
		get  func(OpenMLScores) float64
	}{{"Accuracy", func(s OpenMLScores) float64 { return s.Acc }}, {"NLL", func(s OpenMLScores) float64 { return s.NLL }}, {"AUC", func(s OpenMLScores) float64 { return s.AUC }}} {
		var tab, nu, pa, ours []float64
		for _, r := range keep {
			tab, nu, pa = append(tab, m.get(r.TabPFN)), append(nu, m.get(nuts[r.Name].test)), append(pa, m.get(r.AFIN))
			if c, ok := snis[r.Name]; ok {
				ours = append(ours, m.get(c.test))
			} else {
				ours = append(ours, math.NaN())
			}
		}
		T, N, P, O := mean(tab), mean(nu), mean(pa), mean(ours)
		t.Rows = append(t.Rows, []Cell{plain(m.name), num3(T), num3(N), signed3(N - T), num3(P), signed3(P - N), num3(O), signed3(O - N)})
	}
	return t
}

func signed3(v float64) Cell {
	if math.IsNaN(v) {
		return plain("–")
	}
	return Cell{Text: fmt.Sprintf("%+.3f", v), TeX: fmt.Sprintf("$%+.3f$", v)}
}

// openmlDatasetTable has, per dataset, one row per method of ours and the
// paper's two rows: test accuracy, NLL and AUC, training accuracy, seconds
// and the SNIS ESS ratio.
func openmlDatasetTable(p *OpenMLPaper, cells map[Series]map[string]*openmlCell, series []Series, ds []OpenMLPaperRow) *Table {
	t := &Table{
		Name:  "openml_datasets",
		Title: "OpenML per dataset (paper table openml-pfn-full)",
		Caption: "Test accuracy, NLL and AUC (train accuracy beside), mean over seeds at each method's largest budget; seconds are the method's wall-clock time; ESS: the SNIS effective sample size over the proposals. " +
			"d and N are the model's d_model and N_tr. ⚑: outside the AFIN checkpoint's training support (d ≤ 16, N ≤ 256 for the shipped one).",
		Header:    []string{"Dataset", "d", "N", "Method", "Acc.", "NLL", "AUC", "Train acc.", "Seconds", "ESS ratio", "Flags"},
		RuleAfter: map[int]bool{},
	}
	for _, r := range ds {
		first := true
		head := func() []Cell {
			if !first {
				return []Cell{plain(""), plain(""), plain("")}
			}
			first = false
			d, n := datasetDims(cells, r.Name)
			return []Cell{plain(fmt.Sprintf("%s (%d)", r.Name, r.ID)), plain(d), plain(n)}
		}
		for _, s := range series {
			c, ok := cells[s][r.Name]
			if !ok {
				continue
			}
			ess := plain("–")
			if !math.IsNaN(c.ess) {
				ess = plain(fmt.Sprintf("%.4f", c.ess))
			}
			flag := ""
			if c.outside != "" {
				flag = "⚑ " + c.outside
			}
			if c.notOK != "" {
				flag = strings.TrimPrefix(flag+"; not converged", "; ")
			}
			t.Rows = append(t.Rows, append(head(), plain(s.Name()), num3(c.test.Acc), num3(c.test.NLL), num3(c.test.AUC), num3(c.train.Acc), num3(c.seconds), ess, plain(flag)))
		}
		t.Rows = append(t.Rows,
			append(head(), plain("AFIN Flow + SNIS (paper)"), num3(r.AFIN.Acc), num3(r.AFIN.NLL), num3(r.AFIN.AUC), plain("–"), plain("–"), plain("–"), plain("")),
			append(head(), plain(p.TabPFNLabel+" (paper)"), num3(r.TabPFN.Acc), num3(r.TabPFN.NLL), num3(r.TabPFN.AUC), plain("–"), plain("–"), plain("–"), plain("")))
		t.RuleAfter[len(t.Rows)-1] = true
	}
	return t
}

// datasetDims are d_model and N_tr of a dataset as our records give them.
func datasetDims(cells map[Series]map[string]*openmlCell, name string) (string, string) {
	for _, m := range cells {
		if c, ok := m[name]; ok {
			return fmt.Sprint(c.d), fmt.Sprint(c.n)
		}
	}
	return "", ""
}

// dSupport is the checkpoint's training range of d as the records'
// out-of-support reasons state it ("d=47 outside the training range
// [1, 16]").
func dSupport(recs []records.Record) string {
	for _, r := range recs {
		if i := strings.Index(r.OutsideSupport, "range "); strings.HasPrefix(r.OutsideSupport, "d=") && i > 0 {
			return "d in " + r.OutsideSupport[i+len("range "):]
		}
	}
	return "d"
}

// checkpointWords names a checkpoint with what a record tells of it;
// records written before the openml suite stored the directory, config
// and decoder give the hash and step only.
func checkpointWords(dir, cfg, dec string, step int, hash string) string {
	var parts []string
	if cfg != "" {
		parts = append(parts, cfg+" config")
	}
	if dec != "" {
		parts = append(parts, dec+" decoder")
	}
	parts = append(parts, fmt.Sprintf("step %d", step), "hash "+short(hash))
	name := dir
	if name == "" {
		name = short(hash)
	}
	return fmt.Sprintf("%s (%s)", name, strings.Join(parts, ", "))
}
