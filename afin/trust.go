package afin

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/afin/cpu"
	"github.com/afin-bench/afin/factor"
	"gonum.org/v1/gonum/mat"
)

// summaryNet is the native network that computes pooled summaries: the
// model's own when it runs natively, else one built from its weights.
func (m *Model) summaryNet() (*cpu.Net, error) {
	m.sumOnce.Do(func() {
		if m.sumNet == nil {
			m.sumNet, m.sumErr = cpu.NewNetFromData(m.Cfg, m.wdata)
		}
	})
	return m.sumNet, m.sumErr
}

// Summary is the task's pooled representation inside the network (see
// cpu.Net.Summary), the vector the OOD check measures.
func (m *Model) Summary(ctx context.Context, t *factor.Task) ([]float64, error) {
	net, err := m.summaryNet()
	if err != nil {
		return nil, err
	}
	b, err := NewBatch(ctx, []*factor.Task{t}, 0, nil)
	if err != nil {
		return nil, err
	}
	return net.Summary(ctx, b)
}

// Outside says why a task lies outside the checkpoint's training support
// ("" when inside): its size or families, each quantity outside the
// recorded ranges ("support unknown" when there are none), and a pooled
// summary beyond the OOD threshold. Results on such a task are
// extrapolation.
func (m *Model) Outside(t *factor.Task) string {
	why := m.Support.Outside(t)
	if m.Support.OutsideFamilies(t) != "" {
		return why
	}
	if o := m.outOfDistribution(t); o != "" {
		if why != "" {
			why += "; "
		}
		why += o
	}
	return why
}

// outOfDistribution is the OOD check on one task ("" when below the
// threshold or when the checkpoint has no statistics).
func (m *Model) outOfDistribution(t *factor.Task) string {
	if m.OOD == nil {
		return ""
	}
	v, err := m.Summary(context.Background(), t)
	if err == nil {
		var dist float64
		if dist, err = m.OOD.Distance(v); err == nil {
			if dist <= m.OOD.Threshold {
				return ""
			}
			return fmt.Sprintf("pooled summary at Mahalanobis distance %.4g from the training simulations, above their %g quantile %.4g",
				dist, m.OOD.Quantile, m.OOD.Threshold)
		}
	}
	return "pooled summary not computed: " + err.Error()
}

// Rescaled is a task outside the support brought inside by a change of
// variables θ = a + s⊙θ′: run the network on Task, map its answer back
// with Reparam.
type Rescaled struct {
	Reparam factor.Reparam
	Task    *factor.Task
	// Was is why the original task was outside.
	Was string
}

// Assess returns why t lies outside the support ("" when inside) and,
// for a task outside whose size and families were trained on, the
// rescaled task when a change of variables of the prior brings it inside
// the ranges and below the OOD threshold; otherwise why not.
func (m *Model) Assess(t *factor.Task) (outside string, r *Rescaled, whyNot string) {
	outside = m.Outside(t)
	if outside == "" || m.Support.Ranges == nil || m.Support.OutsideFamilies(t) != "" {
		return outside, nil, ""
	}
	rp, nt, err := m.Support.Ranges.Rescaling(t)
	if err != nil {
		return outside, nil, err.Error()
	}
	if o := m.outOfDistribution(nt); o != "" {
		return outside, nil, fmt.Sprintf("rescaled by %v, still outside: %s", rp, o)
	}
	return outside, &Rescaled{Reparam: rp, Task: nt, Was: outside}, ""
}

// OODOptions size the OOD statistics' simulations.
type OODOptions struct {
	Fit, Calibrate, Test int     // tasks for the mean and covariance, the threshold, the false-flag rate
	Quantile             float64 // of the calibration distances, the threshold
	Seed                 uint64
	Progress             func(done, total int) // optional
}

// Check reports sizes FitOOD cannot work with.
func (o OODOptions) Check() error {
	if o.Fit < 2 || o.Calibrate < 1 || o.Test < 0 || !(o.Quantile > 0 && o.Quantile < 1) {
		return fmt.Errorf("OOD sizes fit=%d calibrate=%d test=%d quantile=%g: want fit ≥ 2, calibrate ≥ 1, test ≥ 0, quantile in (0, 1)",
			o.Fit, o.Calibrate, o.Test, o.Quantile)
	}
	return nil
}

// DefaultOODOptions are the sizes the shipped statistics were computed with.
var DefaultOODOptions = OODOptions{Fit: 2000, Calibrate: 1000, Test: 1000, Quantile: 0.99, Seed: 1}

// oodRidge is added to the covariance's diagonal, relative to its mean
// variance, so a summary direction the training tasks never move in
// does not make the distance infinite.
const oodRidge = 1e-6

// FitOOD computes the OOD statistics of the model's weights: summaries
// of o.Fit tasks simulated from the checkpoint's training configuration
// (Support.SimOptions) give the mean and covariance, the o.Quantile
// quantile of o.Calibrate other tasks' distances the threshold, and
// o.Test fresh tasks the false-flag rate.
func (m *Model) FitOOD(ctx context.Context, o OODOptions) (*checkpoint.OOD, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("afin: %w", err)
	}
	man, err := checkpoint.ReadManifest(m.Dir)
	if err != nil {
		return nil, err
	}
	sim := m.Support.SimOptions()
	total, done := o.Fit+o.Calibrate+o.Test, 0
	summaries := func(n int, stream uint64) ([][]float64, error) {
		rng := rand.New(rand.NewPCG(o.Seed, stream))
		out := make([][]float64, n)
		for i := range out {
			t, err := factor.Simulate(rng, sim)
			if err != nil {
				return nil, err
			}
			if out[i], err = m.Summary(ctx, t); err != nil {
				return nil, err
			}
			if done++; o.Progress != nil {
				o.Progress(done, total)
			}
		}
		return out, nil
	}
	fit, err := summaries(o.Fit, 1)
	if err != nil {
		return nil, fmt.Errorf("afin: OOD fit: %w", err)
	}
	dim := len(fit[0])
	st := &checkpoint.OOD{WeightsSHA256: man.WeightsSHA256, Dim: dim, Mean: make([]float64, dim), Quantile: o.Quantile,
		FitTasks: o.Fit, CalibrationTasks: o.Calibrate, TestTasks: o.Test, Seed: o.Seed,
		Summary: "cpu.Net.Summary: coordinate means of the pooled node tokens, pooled pair diagonal and pooled pair tokens after the merge blocks",
		Source:  fmt.Sprintf("afin.FitOOD over tasks simulated with d∈[%d,%d], N∈[%d,%d], the training families", m.Support.DMin, m.Support.DMax, m.Support.NMin, m.Support.NMax)}
	if err := fitMeanPrecision(st, fit); err != nil {
		return nil, err
	}
	cal, err := summaries(o.Calibrate, 2)
	if err != nil {
		return nil, fmt.Errorf("afin: OOD calibration: %w", err)
	}
	cd, err := oodDistances(st, cal)
	if err != nil {
		return nil, err
	}
	slices.Sort(cd)
	// The smallest distance with at least a Quantile fraction at or below it.
	st.Threshold = cd[max(int(math.Ceil(o.Quantile*float64(len(cd))))-1, 0)]
	test, err := summaries(o.Test, 3)
	if err != nil {
		return nil, fmt.Errorf("afin: OOD test: %w", err)
	}
	td, err := oodDistances(st, test)
	if err != nil {
		return nil, err
	}
	flagged := 0
	for _, d := range td {
		if d > st.Threshold {
			flagged++
		}
	}
	if len(td) > 0 {
		st.FalseFlagRate = float64(flagged) / float64(len(td))
	}
	return st, nil
}

// fitMeanPrecision sets st's Mean, Ridge and Precision from the fit
// summaries: their mean, and the inverse of their covariance with a ridge
// of oodRidge times the mean variance on its diagonal.
func fitMeanPrecision(st *checkpoint.OOD, fit [][]float64) error {
	dim := st.Dim
	for _, v := range fit {
		for i, x := range v {
			st.Mean[i] += x / float64(len(fit))
		}
	}
	cov := mat.NewSymDense(dim, nil)
	for _, v := range fit {
		for i := range dim {
			for j := i; j < dim; j++ {
				cov.SetSym(i, j, cov.At(i, j)+(v[i]-st.Mean[i])*(v[j]-st.Mean[j])/float64(len(fit)-1))
			}
		}
	}
	var tr float64
	for i := range dim {
		tr += cov.At(i, i)
	}
	st.Ridge = oodRidge * math.Max(tr/float64(dim), 1e-300)
	for i := range dim {
		cov.SetSym(i, i, cov.At(i, i)+st.Ridge)
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return fmt.Errorf("afin: OOD: the summaries' covariance is not positive definite")
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return fmt.Errorf("afin: OOD: %w", err)
	}
	st.Precision = make([]float64, dim*dim)
	for i := range dim {
		for j := range dim {
			st.Precision[i*dim+j] = inv.At(i, j)
		}
	}
	return nil
}

// oodDistances are st.Distance of each summary in vs.
func oodDistances(st *checkpoint.OOD, vs [][]float64) ([]float64, error) {
	out := make([]float64, len(vs))
	for i, v := range vs {
		var err error
		if out[i], err = st.Distance(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DescribeRanges formats a support's ranges for a person, one quantity a
// line.
func DescribeRanges(r *factor.Ranges) string {
	if r == nil {
		return checkpoint.SupportUnknown + ": no training ranges recorded\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ranges (%s)\n", r.Derivation)
	for _, p := range r.Priors {
		fmt.Fprintf(&b, "  prior %-17s location %s  scale %s", p.Family, p.Location, p.Scale)
		if p.DF != nil {
			fmt.Fprintf(&b, "  df %s", *p.DF)
		}
		b.WriteByte('\n')
	}
	for _, l := range r.Likelihoods {
		fmt.Fprintf(&b, "  likelihood %-15s", l.Family)
		for _, q := range []struct {
			name string
			iv   *factor.Interval
		}{{"noise scale", l.Noise}, {"df", l.DF}, {"trials", l.Trials}, {"response", l.Response}} {
			if q.iv != nil {
				fmt.Fprintf(&b, "  %s %s", q.name, *q.iv)
			}
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "  covariates (upper bounds)  d  column rms  max |x|  row norm  (typical column rms)\n")
	for _, c := range r.Covariates {
		fmt.Fprintf(&b, "  %28d  %10.4g  %7.4g  %8.4g  (%.4g)\n", c.D, c.ColumnRMS, c.AbsMax, c.RowNormMax, c.ColumnRMSTypical)
	}
	return b.String()
}
