package factor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Interval is the closed range [Min, Max].
type Interval struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Contains reports whether v lies in the interval (false for NaN).
func (iv Interval) Contains(v float64) bool { return v >= iv.Min && v <= iv.Max }

func (iv Interval) String() string { return fmt.Sprintf("[%.4g, %.4g]", iv.Min, iv.Max) }

// widen grows iv to hold v.
func (iv *Interval) widen(v float64) {
	iv.Min, iv.Max = math.Min(iv.Min, v), math.Max(iv.Max, v)
}

func emptyInterval() Interval { return Interval{math.Inf(1), math.Inf(-1)} }

// PriorRanges are the ranges of one prior family's parameters in the
// simulated tasks. Scale is the per-coordinate scale for the diagonal
// families and the conditional standard deviation 1/√Λᵢᵢ for
// fullrank_gaussian; DF is set for diag_student_t.
type PriorRanges struct {
	Family   string    `json:"family"`
	Location Interval  `json:"location"`
	Scale    Interval  `json:"scale"`
	DF       *Interval `json:"df,omitempty"`
}

// LikelihoodRanges are the ranges of one likelihood family's parameters
// and responses in the simulated tasks (a field is nil where the family
// has no such quantity).
type LikelihoodRanges struct {
	Family   string    `json:"family"`
	Noise    *Interval `json:"noise_scale,omitempty"` // σ
	DF       *Interval `json:"df,omitempty"`          // lin_student_t ν
	Trials   *Interval `json:"trials,omitempty"`      // binomial_logit n
	Response *Interval `json:"response,omitempty"`    // y (lin_gaussian, lin_student_t, gaussian)
}

// CovariateRanges bound the design rows at one d, over every design
// family of the training mixture (a task does not record its design):
// the largest column root-mean-square (uncentred: the network sees raw
// x; the simulator's columns have mean zero, so it is their sd there),
// the largest |x_ij| and the largest row norm ‖x_n‖ of a task.
type CovariateRanges struct {
	D          int     `json:"d"`
	ColumnRMS  float64 `json:"column_rms_max"`
	AbsMax     float64 `json:"abs_max"`
	RowNormMax float64 `json:"row_norm_max"`
	// ColumnRMSTypical is the root-mean-square of the column rms over the
	// simulated tasks and columns: the scale Rescaling moves covariates to.
	ColumnRMSTypical float64 `json:"column_rms_typical"`
}

// Ranges are the ranges of every quantity the network reads from a task,
// over the tasks Simulate draws with one SimOptions: see TrainingRanges.
type Ranges struct {
	// Derivation says how the ranges were obtained.
	Derivation  string             `json:"derivation"`
	TasksPerD   int                `json:"tasks_per_d"`
	Seed        uint64             `json:"seed"`
	Priors      []PriorRanges      `json:"priors"`
	Likelihoods []LikelihoodRanges `json:"likelihoods"`
	Covariates  []CovariateRanges  `json:"covariates"`
}

// RangeTasksPerD is how many tasks per d TrainingRanges simulates for
// the quantities without a bound of their own (locations, covariates,
// responses): a fresh task exceeds the largest of k draws of a per-task
// statistic with probability 1/(k+1).
const RangeTasksPerD = 1000

// rangeSeed fixes the stream TrainingRanges simulates with.
const rangeSeed = 0x5eed_5afe

// TrainingRanges returns the ranges of the quantities the network sees in
// the tasks Simulate draws with o (its size ranges and families; fixed D
// and N are ignored). Quantities drawn from bounded distributions (prior
// scales and degrees of freedom, noise scales, Student-t ν, binomial
// trials) take the bounds of the simulator's own declarations; the
// unbounded ones (prior locations, fullrank conditional scales,
// covariates, responses) take the extremes over RangeTasksPerD tasks per
// d simulated with a fixed seed.
func TrainingRanges(o SimOptions) (*Ranges, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("training ranges: %w", err)
	}
	dMin, dMax, nMin, nMax := o.support()
	r := &Ranges{
		Derivation: fmt.Sprintf("factor.TrainingRanges: bounded parameters from the simulator's declarations; locations, fullrank scales, covariates and responses the extremes of %d tasks per d simulated with d∈[%d,%d], N∈[%d,%d]",
			RangeTasksPerD, dMin, dMax, nMin, nMax),
		TasksPerD: RangeTasksPerD, Seed: rangeSeed,
	}
	priors, liks := declaredRanges(o)
	for d := dMin; d <= dMax; d++ {
		so := o
		so.D, so.N, so.DMin, so.DMax, so.NMin, so.NMax = d, 0, dMin, dMax, nMin, nMax
		cr, err := simulatedRanges(so, priors, liks)
		if err != nil {
			return nil, err
		}
		r.Covariates = append(r.Covariates, cr)
	}
	// An interval still empty would be a family the simulations never
	// drew (and ±Inf, which JSON cannot hold): a range not derived.
	for _, f := range PriorFamilies {
		if pr := priors[f]; pr != nil {
			if pr.Location.Min > pr.Location.Max || pr.Scale.Min > pr.Scale.Max {
				return nil, fmt.Errorf("training ranges: prior %s was never drawn in %d tasks per d", f, RangeTasksPerD)
			}
			r.Priors = append(r.Priors, *pr)
		}
	}
	for _, f := range LikelihoodFamilies {
		if lr := liks[f]; lr != nil && lr.Response != nil && lr.Response.Min > lr.Response.Max {
			return nil, fmt.Errorf("training ranges: likelihood %s was never drawn in %d tasks per d", f, RangeTasksPerD)
		}
	}
	for _, f := range LikelihoodFamilies {
		if lr := liks[f]; lr != nil {
			r.Likelihoods = append(r.Likelihoods, *lr)
		}
	}
	return r, nil
}

// declaredRanges are the ranges of o's prior and likelihood families,
// by family, with the bounded quantities at the simulator's declared
// bounds and the simulated ones empty, to be widened.
func declaredRanges(o SimOptions) (map[string]*PriorRanges, map[string]*LikelihoodRanges) {
	priors := map[string]*PriorRanges{}
	for _, f := range PriorFamilies {
		if o.Prior != "" && o.Prior != f {
			continue
		}
		pr := &PriorRanges{Family: f, Location: emptyInterval()}
		switch f {
		case DiagGaussianFamily:
			pr.Scale = simScaleGauss.interval()
		case DiagStudentTFamily:
			pr.Scale = simScaleT.interval()
			df := simDFPriorT.interval()
			pr.DF = &df
		case DiagLaplaceFamily:
			pr.Scale = simScaleLaplace.interval()
		case FullRankGaussianFamily:
			pr.Scale = emptyInterval()
		}
		priors[f] = pr
	}
	liks := map[string]*LikelihoodRanges{}
	for _, f := range LikelihoodFamilies {
		if len(o.Likelihoods) > 0 && !slices.Contains(o.Likelihoods, f) {
			continue
		}
		lr := &LikelihoodRanges{Family: f}
		ivp := func(iv Interval) *Interval { return &iv }
		switch f {
		case LinGaussianFamily:
			lr.Noise, lr.Response = ivp(simSigmaLin.interval()), ivp(emptyInterval())
		case GaussianFamily:
			lr.Noise, lr.Response = ivp(simSigmaVec.interval()), ivp(emptyInterval())
		case LinStudentTFamily:
			lr.Noise, lr.DF, lr.Response = ivp(simSigmaT.interval()), ivp(simDFT.interval()), ivp(emptyInterval())
		case BinomialLogitFamily:
			lr.Trials = &Interval{simTrialsMin, simTrialsMax}
		}
		liks[f] = lr
	}
	return priors, liks
}

// simulatedRanges simulates RangeTasksPerD tasks of dimension so.D (from
// the seed (rangeSeed, d)), widens priors' and liks' simulated intervals
// by them, and returns their covariate ranges.
func simulatedRanges(so SimOptions, priors map[string]*PriorRanges, liks map[string]*LikelihoodRanges) (CovariateRanges, error) {
	d := so.D
	rng := rand.New(rand.NewPCG(rangeSeed, uint64(d)))
	cr := CovariateRanges{D: d}
	var sumSq float64
	var cols int
	for range RangeTasksPerD {
		t, err := Simulate(rng, so)
		if err != nil {
			return cr, fmt.Errorf("training ranges: %w", err)
		}
		widenByTask(t, priors[t.Prior.Family()], liks)
		if st, ok := covariateStats(t); ok {
			cr.ColumnRMS = math.Max(cr.ColumnRMS, st.columnRMS)
			cr.AbsMax = math.Max(cr.AbsMax, st.absMax)
			cr.RowNormMax = math.Max(cr.RowNormMax, st.rowNorm)
			for _, c := range st.colRMS {
				sumSq += c * c
			}
			cols += d
		}
	}
	if cols > 0 {
		cr.ColumnRMSTypical = math.Sqrt(sumSq / float64(cols))
	}
	return cr, nil
}

// widenByTask widens the prior's location (and a fullrank prior's
// conditional scales) and the sites' responses to cover task t.
func widenByTask(t *Task, pr *PriorRanges, liks map[string]*LikelihoodRanges) {
	d := t.D
	for _, m := range t.Prior.Location() {
		pr.Location.widen(m)
	}
	if fr, ok := t.Prior.(*FullRankGaussian); ok {
		for i := range d {
			pr.Scale.widen(1 / math.Sqrt(fr.Precision[i*d+i]))
		}
	}
	for _, f := range t.Factors {
		lr := liks[f.Family()]
		switch f := f.(type) {
		case *LinGaussian:
			lr.Response.widen(f.Y)
		case *LinStudentT:
			lr.Response.widen(f.Y)
		case *Gaussian:
			for _, y := range f.Y {
				lr.Response.widen(y)
			}
		}
	}
}

// covStats summarises a task's design rows (the factors with a covariate).
type covStats struct {
	columnRMS, absMax, rowNorm float64
	colRMS, colAbs             []float64 // per column
}

func covariateStats(t *Task) (covStats, bool) {
	var st covStats
	d := t.D
	sq := make([]float64, d)
	st.colAbs = make([]float64, d)
	rows := 0
	for _, f := range t.Factors {
		x := f.Covariate()
		if x == nil {
			continue
		}
		rows++
		var nrm float64
		for j, v := range x {
			sq[j] += v * v
			nrm += v * v
			st.colAbs[j] = math.Max(st.colAbs[j], math.Abs(v))
		}
		st.rowNorm = math.Max(st.rowNorm, math.Sqrt(nrm))
	}
	if rows == 0 {
		return st, false
	}
	st.colRMS = make([]float64, d)
	for j := range sq {
		st.colRMS[j] = math.Sqrt(sq[j] / float64(rows))
		st.columnRMS = math.Max(st.columnRMS, st.colRMS[j])
		st.absMax = math.Max(st.absMax, st.colAbs[j])
	}
	return st, true
}

// Prior returns the ranges of one prior family (nil if not trained on).
func (r *Ranges) Prior(family string) *PriorRanges {
	for i := range r.Priors {
		if r.Priors[i].Family == family {
			return &r.Priors[i]
		}
	}
	return nil
}

// Likelihood returns the ranges of one likelihood family (nil if not
// trained on).
func (r *Ranges) Likelihood(family string) *LikelihoodRanges {
	for i := range r.Likelihoods {
		if r.Likelihoods[i].Family == family {
			return &r.Likelihoods[i]
		}
	}
	return nil
}

// Covariate returns the covariate bounds at d (nil if d was not trained).
func (r *Ranges) Covariate(d int) *CovariateRanges {
	for i := range r.Covariates {
		if r.Covariates[i].D == d {
			return &r.Covariates[i]
		}
	}
	return nil
}

// violations collects, per quantity, the value furthest outside its range.
type violations struct {
	order []string
	worst map[string]violation
}

type violation struct {
	v      float64
	iv     Interval
	excess float64
}

func (vs *violations) check(what string, v float64, iv Interval) {
	if iv.Contains(v) {
		return
	}
	// How far outside, relative to the range's width (NaN: as far as can be).
	excess := math.Inf(1)
	if !math.IsNaN(v) {
		w := math.Max(iv.Max-iv.Min, 1e-12)
		excess = math.Max(iv.Min-v, v-iv.Max) / w
	}
	if vs.worst == nil {
		vs.worst = map[string]violation{}
	}
	old, seen := vs.worst[what]
	if !seen {
		vs.order = append(vs.order, what)
	}
	if !seen || excess > old.excess {
		vs.worst[what] = violation{v, iv, excess}
	}
}

func (vs *violations) String() string {
	parts := make([]string, len(vs.order))
	for i, what := range vs.order {
		w := vs.worst[what]
		parts[i] = fmt.Sprintf("%s %.4g outside the training range %s", what, w.v, w.iv)
	}
	return strings.Join(parts, "; ")
}

// Check returns why t lies outside the ranges ("" when inside): for each
// quantity outside, its name, the task's value furthest out and the
// trained range. Families or a d the ranges do not cover are named too.
func (r *Ranges) Check(t *Task) string {
	var vs violations
	var other []string
	if pr := r.Prior(t.Prior.Family()); pr == nil {
		other = append(other, fmt.Sprintf("prior %s has no training ranges", t.Prior.Family()))
	} else {
		name := t.Prior.Family() + " prior "
		for _, m := range t.Prior.Location() {
			vs.check(name+"location", m, pr.Location)
		}
		for _, s := range priorScales(t.Prior) {
			vs.check(name+"scale", s, pr.Scale)
		}
		if st, ok := t.Prior.(*DiagStudentT); ok && pr.DF != nil {
			vs.check(name+"df", st.DF, *pr.DF)
		}
	}
	for _, f := range t.Factors {
		lr := r.Likelihood(f.Family())
		if lr == nil {
			other = append(other, fmt.Sprintf("likelihood %s has no training ranges", f.Family()))
			continue
		}
		name := f.Family() + " "
		var sigma, df, trials float64
		var ys []float64
		switch f := f.(type) {
		case *LinGaussian:
			sigma, ys = f.Sigma, []float64{f.Y}
		case *LinStudentT:
			sigma, df, ys = f.Sigma, f.DF, []float64{f.Y}
		case *Gaussian:
			sigma, ys = f.Sigma, f.Y
		case *BinomialLogit:
			trials = float64(f.Trials)
		}
		if lr.Noise != nil {
			vs.check(name+"noise scale", sigma, *lr.Noise)
		}
		if lr.DF != nil {
			vs.check(name+"df", df, *lr.DF)
		}
		if lr.Trials != nil {
			vs.check(name+"trials", trials, *lr.Trials)
		}
		if lr.Response != nil {
			for _, y := range ys {
				vs.check(name+"response", y, *lr.Response)
			}
		}
	}
	if st, ok := covariateStats(t); ok {
		if cr := r.Covariate(t.D); cr == nil {
			other = append(other, fmt.Sprintf("covariates at d=%d have no training ranges", t.D))
		} else {
			at := fmt.Sprintf(" at d=%d", t.D)
			vs.check("covariate column rms"+at, st.columnRMS, Interval{0, cr.ColumnRMS})
			vs.check("covariate max |x|"+at, st.absMax, Interval{0, cr.AbsMax})
			vs.check("covariate row norm"+at, st.rowNorm, Interval{0, cr.RowNormMax})
		}
	}
	if s := vs.String(); s != "" {
		other = append(other, s)
	}
	return strings.Join(other, "; ")
}

// priorScales returns the per-coordinate scales of a prior as the ranges
// record them (nil for a prior type defined elsewhere).
func priorScales(p Prior) []float64 {
	switch p := p.(type) {
	case *DiagGaussian:
		return p.Scale
	case *DiagStudentT:
		return p.Scale
	case *DiagLaplace:
		return p.Scale
	case *FullRankGaussian:
		d := len(p.Loc)
		s := make([]float64, d)
		for i := range d {
			s[i] = 1 / math.Sqrt(p.Precision[i*d+i])
		}
		return s
	}
	return nil
}
