package reports

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/records"
)

// The trust table asks of every answer two questions a user cares about:
// is it right, and did the method say so? "Right" is judged per
// coordinate against the reference (records.Marginals), "said so" by the
// flags the record carries. An answer that is wrong and silent is the
// failure the flags exist to prevent; one that is right and flagged is a
// false alarm that trains users to ignore them.

// TrustTolerance is how close an answer must be to count as accurate: every
// coordinate's mean within MeanSD reference sds, and every sd ratio
// (method sd / reference sd) within [SDLo, SDHi].
type TrustTolerance struct {
	MeanSD, SDLo, SDHi float64
}

// Tolerances: amortised answers (one network pass, with or without
// reweighting) are held to 1 sd and a factor of 2; samplers and fitted
// approximations, which can be run longer, to 0.5 sd and 0.8–1.25.
var (
	AmortisedTrust = TrustTolerance{MeanSD: 1, SDLo: 0.5, SDHi: 2}
	StrictTrust    = TrustTolerance{MeanSD: 0.5, SDLo: 0.8, SDHi: 1.25}
)

// ToleranceFor is the tolerance a method's answers are judged by.
func ToleranceFor(method string) TrustTolerance {
	if e, ok := catalog.Lookup(method); ok && e.Family == catalog.Amortised {
		return AmortisedTrust
	}
	return StrictTrust
}

// Accurate reports whether m lies within t; NaN entries never do.
func (t TrustTolerance) Accurate(m *records.Marginals) bool {
	return float64(m.MaxMeanErr) <= t.MeanSD &&
		float64(m.MinSDRatio) >= t.SDLo && float64(m.MaxSDRatio) <= t.SDHi
}

func (t TrustTolerance) String() string {
	return fmt.Sprintf("%g sd, %g–%g", t.MeanSD, t.SDLo, t.SDHi)
}

// Limits of the flags read from a record's numbers. A NUTS answer is
// flagged by the checks the auto workflow holds its own NUTS stage to.
const maxParetoK = 0.7

// samplerChecks are the checks the registered workflow holds its fallback
// sampler's answer to; ok is false when no workflow is registered.
func samplerChecks() (catalog.SamplerChecks, bool) {
	_, w, ok := workflow()
	return w.Checks, ok
}

// TrustFlags lists why a record's answer is flagged, one short reason
// each; none means the method gave no sign of trouble. It reads every
// flag a record can carry: the method's warnings, a failed convergence
// check, a task outside the checkpoint's training support, a PSIS k̂
// above 0.7 (NaN or infinite included), and a NUTS run's R̂, divergences
// or bulk ESS outside the auto workflow's NUTS checks.
func TrustFlags(r *records.Record) []string {
	var why []string
	if len(r.Warnings) > 0 {
		why = append(why, fmt.Sprintf("%d warning(s)", len(r.Warnings)))
	}
	for _, name := range slices.Sorted(maps.Keys(r.Flags)) {
		why = append(why, name)
	}
	if r.NotConverged != "" {
		why = append(why, "not converged")
	}
	if r.OutsideSupport != "" {
		why = append(why, "outside support")
	}
	diag := func(k string) (float64, bool) {
		v, ok := r.Diagnostics[k]
		return float64(v), ok
	}
	// pareto_k is the k̂ of the weights behind the answer; an auto record
	// whose NUTS stage answered carries none (its auto_pareto_k is the
	// refused SNIS stage's and says nothing about the NUTS draws).
	if k, ok := diag("pareto_k"); ok && !(k <= maxParetoK) {
		why = append(why, fmt.Sprintf("k̂ %.3g > %g", k, maxParetoK))
	}
	return append(why, samplerFlags(diag)...)
}

// samplerFlags are a chain's R̂, divergences and bulk ESS outside the
// workflow's sampler checks.
func samplerFlags(diag func(string) (float64, bool)) []string {
	c, ok := samplerChecks()
	if !ok {
		return nil
	}
	var why []string
	if v, ok := diag("rhat"); ok && !(v <= c.MaxRhat) {
		why = append(why, fmt.Sprintf("R̂ %.4g > %g", v, c.MaxRhat))
	}
	if v, ok := diag("divergences"); ok && !(v <= float64(c.MaxDivergences)) {
		why = append(why, fmt.Sprintf("%g divergences", v))
	}
	if v, ok := diag("ess_bulk"); ok && !(v >= c.MinESSBulk) {
		why = append(why, fmt.Sprintf("bulk ESS %.3g < %g", v, c.MinESSBulk))
	}
	return why
}

// Trust classes, in table order.
const (
	AccurateSilent = iota
	AccurateFlagged
	WrongFlagged
	WrongSilent
	Failed
	nClasses
)

var classNames = [nClasses]string{
	"accurate, silent", "accurate, flagged (false alarm)", "wrong, flagged", "wrong, silent", "failed (no answer)",
}

// ClassName names a trust class as the table's header does.
func ClassName(c int) string { return classNames[c] }

// Classify puts a record in a trust class. ok is false for a record that
// cannot be judged: one written before records kept marginals.
func Classify(r *records.Record) (class int, ok bool) {
	if r.Failed() {
		return Failed, true
	}
	if r.Marginals == nil {
		return 0, false
	}
	accurate := ToleranceFor(r.Method).Accurate(r.Marginals)
	flagged := len(TrustFlags(r)) > 0
	switch {
	case accurate && !flagged:
		return AccurateSilent, true
	case accurate:
		return AccurateFlagged, true
	case flagged:
		return WrongFlagged, true
	}
	return WrongSilent, true
}

// trustRecords are the answers the trust tables judge: each method's
// own output (an SNIS method's proposal stage is not an answer).
func trustRecords(recs []records.Record) []records.Record {
	return filter(recs, func(r *records.Record) bool { return r.Stage == "" })
}

// trustMethodOrder puts the amortised methods first, then the baselines
// the paper compares them with (NUTS, FRVI), then the rest by name.
func trustMethodOrder(recs []records.Record) []string {
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Method] = true
	}
	var out []string
	for _, m := range append(catalog.InFamily(catalog.Amortised), catalog.Baselines()...) {
		if seen[m] {
			out = append(out, m)
			delete(seen, m)
		}
	}
	rest := make([]string, 0, len(seen))
	for m := range seen {
		rest = append(rest, m)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// TrustTable counts each method's answers per trust class. Records
// without marginals (written before they were kept) are left out and
// counted in the caption.
func TrustTable(recs []records.Record, name string) *Table {
	recs = trustRecords(recs)
	counts := map[string]*[nClasses]int{}
	unjudged := 0
	for i := range recs {
		c, ok := Classify(&recs[i])
		if !ok {
			unjudged++
			continue
		}
		if counts[recs[i].Method] == nil {
			counts[recs[i].Method] = &[nClasses]int{}
		}
		counts[recs[i].Method][c]++
	}
	checks, _ := samplerChecks()
	t := &Table{
		Name: name, Title: "Trust: is the answer right, and did the method say so?",
		Header: append([]string{"method", "accurate if"}, classNames[:]...),
		Caption: fmt.Sprintf("Each answer (one method on one task) is accurate when every coordinate's mean is within the tolerance's reference sds and every sd ratio (method / reference) within its range, "+
			"and flagged when its record carries a warning, a failed convergence check, outside_support, a k̂ above %g (NaN included), or NUTS R̂ above %g, divergences or bulk ESS below %g.",
			maxParetoK, checks.MaxRhat, checks.MinESSBulk),
	}
	if unjudged > 0 {
		t.Caption += fmt.Sprintf(" %d record(s) without per-coordinate errors (written before records kept them) are left out.", unjudged)
	}
	for _, m := range trustMethodOrder(recs) {
		c := counts[m]
		if c == nil {
			continue
		}
		row := []Cell{plain(m), plain(ToleranceFor(m).String())}
		for _, n := range c {
			row = append(row, plain(fmt.Sprint(n)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// TrustDetailTable lists every judged answer: its task, method, worst
// errors, flags and class, so a count in TrustTable can be traced to
// the tasks behind it.
func TrustDetailTable(recs []records.Record, name string) *Table {
	recs = trustRecords(recs)
	t := &Table{
		Name: name, Title: "Trust: every answer",
		Header:  []string{"setting", "seed", "method", "max |Δmean| / sd_ref", "sd ratio", "flags", "class"},
		Caption: "Worst coordinate's mean error in reference sds, the range of sd ratios over coordinates, and the flags the record carries.",
	}
	order := map[string]int{}
	for i, m := range trustMethodOrder(recs) {
		order[m] = i
	}
	sorted := slices.Clone(recs)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := &sorted[i], &sorted[j]
		if a.Setting != b.Setting {
			return a.Setting < b.Setting
		}
		if a.Seed != b.Seed {
			return a.Seed < b.Seed
		}
		return order[a.Method] < order[b.Method]
	})
	for i := range sorted {
		r := &sorted[i]
		c, ok := Classify(r)
		if !ok {
			continue
		}
		mean, ratio := "n/a", "n/a"
		if g := r.Marginals; g != nil {
			mean = fmtNum(float64(g.MaxMeanErr))
			ratio = fmtNum(float64(g.MinSDRatio)) + "–" + fmtNum(float64(g.MaxSDRatio))
		}
		flags := strings.Join(TrustFlags(r), "; ")
		if r.Failed() {
			flags = firstLine(r.Error)
		}
		t.Rows = append(t.Rows, []Cell{plain(r.Setting), plain(fmt.Sprint(r.Seed)), plain(r.Method),
			plain(mean), plain(ratio), plain(flags), plain(classNames[c])})
	}
	return t
}

// firstLine is s up to its first newline, at most 80 characters.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len([]rune(s)) > 80 {
		s = string([]rune(s)[:79]) + "…"
	}
	return s
}

// externalSection is the external suite's section: the generic charts
// and headline, then the trust tables.
func externalSection(suite string, recs []records.Record) Section {
	sec := genericSection(suite, recs)
	sec.Intro = "Models written as applied users write them (wide priors, raw covariate scales); see docs/external-suite.md."
	sec.Tables = append(sec.Tables, TrustTable(recs, "trust_"+suite), TrustDetailTable(recs, "trust_detail_"+suite))
	return sec
}
