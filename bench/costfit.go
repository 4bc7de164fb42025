package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/records"
	"gonum.org/v1/gonum/mat"
)

// CostSample is one measured cost: a unit's CPU seconds (its last
// record's CPUSeconds) or a task's target's, with what the model reads.
type CostSample struct {
	Suite, Profile string
	// Key is the term key the sample fits: suite/method/variant for a
	// unit, target/KIND for a task's target.
	Key     string
	Method  string // "" for a target
	Variant string
	Task    string // the task's setting and seed

	CostFeatures
	Seconds float64
}

// terms are the keys a sample fits, most specific first (unitKeys).
func (c CostSample) terms() []string {
	if c.Method == "" {
		kind := strings.TrimPrefix(c.Key, "target/")
		return targetKeys(c.Suite, kind)
	}
	return unitKeys(c.Suite, c.Method, c.Variant)
}

// fitKeys are the terms a sample is fitted into: its terms but a twin
// suite's (costTwins), which only stand in for it.
func (c CostSample) fitKeys() []string {
	twin := costTwins[c.Suite]
	var out []string
	for _, k := range c.terms() {
		if twin == "" || !strings.HasPrefix(k, twin+"/") {
			out = append(out, k)
		}
	}
	return out
}

// CostSamples reads the measured costs out of records: one sample per
// unit whose every record is scored, whose CPU time was measured and not
// shared with another unit (Record.CPUShared), and whose plan the suite
// and profile still have (its work is computed from the plan, as the
// estimate does); one per task whose target's CPU time was measured. A
// target is fitted only from a run whose reference cache started empty:
// a cached reference costs next to nothing.
func CostSamples(recs []records.Record) []CostSample {
	type acc struct {
		rec    records.Record
		cpu    float64
		failed bool
		shared bool
	}
	units := map[string]*acc{}
	var order []string
	for _, r := range recs {
		k := r.Provenance.Profile + "|" + r.UnitKey()
		a := units[k]
		if a == nil {
			a = &acc{rec: r}
			units[k] = a
			order = append(order, k)
		}
		a.cpu = max(a.cpu, float64(r.CPUSeconds))
		a.failed = a.failed || r.Failed() || math.IsNaN(float64(r.CPUSeconds))
		a.shared = a.shared || r.CPUShared
	}
	var out []CostSample
	tasks := map[string]bool{}
	for _, k := range order {
		a := units[k]
		r := a.rec
		plan, su, prof, ok := planOfRecord(&r)
		if !ok {
			continue
		}
		if a.cpu > 0 && !a.failed && !a.shared {
			out = append(out, CostSample{Suite: r.Suite, Profile: prof.Name, Key: unitKeys(r.Suite, r.Method, r.Variant)[0],
				Method: r.Method, Variant: r.Variant, Task: taskOf(&r), CostFeatures: features(r.D, r.N, unitWork(plan)), Seconds: a.cpu})
		}
		tk := r.Provenance.Profile + "|" + r.Suite + "|" + r.Setting + "|" + fmt.Sprint(r.Seed)
		if t := float64(r.TargetCPUSeconds); !tasks[tk] && t > 0 && !r.CPUShared {
			tasks[tk] = true
			kind := targetKind(su, Setting{Prior: r.Prior, Likelihood: r.Likelihood})
			out = append(out, CostSample{Suite: r.Suite, Profile: prof.Name, Key: "target/" + kind, Task: taskOf(&r),
				CostFeatures: features(r.D, r.N, targetWork(kind, prof)), Seconds: t})
		}
	}
	return out
}

func taskOf(r *records.Record) string { return r.Setting + "|" + strconv.FormatUint(r.Seed, 10) }

// SplitCostSamples splits samples in two halves by task (a stable hash of
// its setting and seed), so a model fitted to one half can be checked on
// tasks it never saw.
func SplitCostSamples(ss []CostSample) (a, b []CostSample) {
	for _, s := range ss {
		if hashString("costfit", s.Suite, s.Task)%2 == 0 {
			a = append(a, s)
		} else {
			b = append(b, s)
		}
	}
	return a, b
}

// planOfRecord is the plan of the suite and profile a record was written
// under, with the VI protocol its variant names.
func planOfRecord(r *records.Record) (Plan, Suite, *Profile, bool) {
	su, err := lookupSuite(r.Suite)
	if err != nil {
		return Plan{}, nil, nil, false
	}
	prof, err := GetProfile(r.Provenance.Profile)
	if err != nil {
		return Plan{}, nil, nil, false
	}
	if r.Variant == "paper" || strings.HasPrefix(r.Variant, "paper-") {
		prof.VIProtocol = vi.ProtocolPaper
	}
	for _, p := range prof.plansOf(su) {
		if p.Method == r.Method && p.Variant == r.Variant {
			return p, su, prof, true
		}
	}
	return Plan{}, nil, nil, false
}

// minCostSamples is the fewest samples a term is fitted from.
const minCostSamples = 3

// FitCostModel fits a term for every key with enough samples, at every
// level of specificity (unitKeys), and the pooled "*" term from every
// unit sample.
func FitCostModel(samples []CostSample, fitted string) (*CostModel, error) {
	by := map[string][]CostSample{}
	for _, s := range samples {
		for _, k := range s.fitKeys() {
			by[k] = append(by[k], s)
		}
		if s.Method != "" {
			by["*"] = append(by["*"], s)
		}
	}
	if len(by["*"]) < minCostSamples {
		return nil, fmt.Errorf("costfit: %d unit samples, want at least %d (records with cpu_seconds, not shared)", len(by["*"]), minCostSamples)
	}
	m := &CostModel{Fitted: fitted, Terms: map[string]CostTerm{}}
	for _, k := range keys(by) {
		if len(by[k]) < minCostSamples {
			continue
		}
		t, err := fitTerm(by[k])
		if err != nil {
			return nil, fmt.Errorf("costfit: term %s: %w", k, err)
		}
		m.Terms[k] = t
	}
	return m, nil
}

// costPrior is what each exponent is pulled towards (d, N, work), and
// costRidge how hard, per sample: a feature the samples do not vary (one
// profile's budget) keeps the prior, one they vary is set by the data.
// Cost linear in each is the neutral guess. The work exponent is pulled
// harder: within one profile a method's work differs only between suites,
// where it is confounded with everything else the suites differ in, and
// the paper profile's budgets lie far beyond the measured ones.
var (
	costPrior = [3]float64{1, 1, 1}
	costRidge = [3]float64{1e-2, 1e-2, 0.05}
)

// fitTerm fits log cost = a + D log d + N log n + Work log work by
// least squares with a weak ridge pull of the exponents to costPrior,
// each profile's samples weighing as much in all as another's
// (profileWeights).
func fitTerm(ss []CostSample) (CostTerm, error) {
	const p = 4
	ata := mat.NewSymDense(p, nil)
	atb := mat.NewVecDense(p, nil)
	ws := profileWeights(ss)
	for k, s := range ss {
		x := [p]float64{1, math.Log(s.D), math.Log(s.N), math.Log(s.Work)}
		y := math.Log(s.Seconds)
		for i := range p {
			atb.SetVec(i, atb.AtVec(i)+ws[k]*x[i]*y)
			for j := i; j < p; j++ {
				ata.SetSym(i, j, ata.At(i, j)+ws[k]*x[i]*x[j])
			}
		}
	}
	for j := 1; j < p; j++ {
		lambda := costRidge[j-1] * float64(len(ss))
		ata.SetSym(j, j, ata.At(j, j)+lambda)
		atb.SetVec(j, atb.AtVec(j)+lambda*costPrior[j-1])
	}
	var beta mat.VecDense
	if err := beta.SolveVec(ata, atb); err != nil {
		return CostTerm{}, fmt.Errorf("least squares: %w", err)
	}
	t := CostTerm{LogA: beta.AtVec(0), D: beta.AtVec(1), N: beta.AtVec(2), Work: beta.AtVec(3), Samples: len(ss)}
	sq, smear := 0.0, 0.0
	for k, s := range ss {
		r := math.Log(s.Seconds) - math.Log(t.Seconds(s.CostFeatures))
		sq += ws[k] * r * r
		smear += ws[k] * math.Exp(r)
	}
	t.RMSLog = math.Sqrt(sq / float64(len(ss)))
	// A fit on log cost estimates the median; a suite's cost is a sum, so
	// scale to the mean (Duan's smearing: the mean of the exponentiated
	// residuals).
	t.LogA += math.Log(smear / float64(len(ss)))
	return t, nil
}

// profileWeights weighs each sample so that each profile's samples sum to
// the same weight, and all to len(ss). Smoke and quick runs give a term
// hundreds of samples, the paper profile's few units a handful, yet the
// paper's units are where the estimate matters (they are its hours), and
// their budgets lie far beyond the others': unweighted, the fit followed
// the small runs and put the paper snis suite's afin-snis units at 1.6
// times what they measured (and the paper snis suite at +27%, synthetic
// +84%; weighted, +3.5% and +9.2%, while the smoke synthetic suite went
// from 0 to +61%: seconds, where the paper's errors are hours).
func profileWeights(ss []CostSample) []float64 {
	count := map[string]int{}
	for _, s := range ss {
		count[s.Profile]++
	}
	ws := make([]float64, len(ss))
	for k, s := range ss {
		ws[k] = float64(len(ss)) / float64(len(count)*count[s.Profile])
	}
	return ws
}

// CostCheck compares a model's estimate with measured costs per suite and
// profile: the sum of the estimates of the measured samples against the
// sum of what they measured.
type CostCheck struct {
	Suite, Profile     string
	Samples            int
	Measured, Estimate float64 // CPU seconds
}

// RelErr is (estimate − measured) / measured.
func (c CostCheck) RelErr() float64 { return (c.Estimate - c.Measured) / c.Measured }

// CheckCostModel is m's estimate of every suite and profile of samples
// against the measurement, sorted by profile and suite; byKey splits each
// suite by the samples' term keys (Suite then holds the key).
func CheckCostModel(m *CostModel, samples []CostSample, byKey bool) []CostCheck {
	by := map[string]*CostCheck{}
	for _, s := range samples {
		name := s.Suite
		if byKey {
			name = s.Key
		}
		k := s.Profile + "|" + name
		c := by[k]
		if c == nil {
			c = &CostCheck{Suite: name, Profile: s.Profile}
			by[k] = c
		}
		t, _ := m.term(s.terms()...)
		c.Samples++
		c.Measured += s.Seconds
		c.Estimate += t.Seconds(s.CostFeatures)
	}
	var out []CostCheck
	for _, k := range keys(by) {
		out = append(out, *by[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Profile < out[j].Profile })
	return out
}

// CostSampleHeader is the header of the CSV tools/costfit writes the
// samples it fitted to (ReadCostSamples reads it back).
var CostSampleHeader = []string{"profile", "suite", "key", "method", "variant", "task", "d", "n", "work", "cpu_seconds"}

// ReadCostSamples reads samples written by tools/costfit.
func ReadCostSamples(r io.Reader) ([]CostSample, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("cost samples: %w", err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], CostSampleHeader) {
		return nil, fmt.Errorf("cost samples: header is not %v", CostSampleHeader)
	}
	var out []CostSample
	for i, row := range rows[1:] {
		var x [4]float64
		for j := range x {
			if x[j], err = strconv.ParseFloat(row[6+j], 64); err != nil || !(x[j] > 0) {
				return nil, fmt.Errorf("cost samples: row %d: %s = %q is not a positive number", i+2, CostSampleHeader[6+j], row[6+j])
			}
		}
		out = append(out, CostSample{Profile: row[0], Suite: row[1], Key: row[2], Method: row[3], Variant: row[4], Task: row[5],
			CostFeatures: CostFeatures{D: x[0], N: x[1], Work: x[2]}, Seconds: x[3]})
	}
	return out, nil
}
