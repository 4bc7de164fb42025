package methods

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/afin-bench/afin/posterior"
)

// Thresholds of the flags Settle raises.
const (
	// MaxParetoK is PSIS's reliability limit (Vehtari et al. 2024): above
	// it importance weights do not yield usable estimates.
	MaxParetoK = 0.7
	// MinESS is the fewest effective draws a weighted answer may rest on;
	// MinESSFraction the smallest fraction of its draws they may be. A
	// weighted answer below either is degenerate: its moments come from
	// a handful of draws (one draw gives sd 0).
	MinESS         = 10
	MinESSFraction = 0.01
	// MinSNISESS is the fewest effective draws an SNIS answer (AFIN+SNIS,
	// FRVI+SNIS, auto's SNIS stage) may rest on, beside k̂ ≤ MaxParetoK:
	// the floor MinBulkESS sets for an MCMC answer, since both are
	// estimates from draws whose metrics (a mean, a covariance) need as
	// many. A fraction of the proposals is no floor: 1% of auto's 4,000
	// let it answer a logistic regression from 42 effective draws, 0.5
	// posterior sds off with k̂ 0.53 (issue 40), and k̂ below 0.7 does not
	// prevent it (TestSNISFloorOnARealRegression: k̂ 0.55 to 0.69 at
	// 77 to 88).
	MinSNISESS = 100
	// The NUTS checks of an answer: split-R̂ below MaxRhat, bulk ESS at
	// least MinBulkESS, no divergent transition.
	MaxRhat    = 1.01
	MinBulkESS = 100
)

// NoLikelihoodWarning is Flags.NoLikelihood's text.
const NoLikelihoodWarning = "no likelihood: the posterior is the prior (the task has no factors)"

// Run runs m on job and settles every point before emit sees it, so each
// point carries the flags its numbers imply and every flag in words. The
// runners (bench, afin infer) call m through it, which makes it the one
// place the flags that depend on the task alone (NoLikelihood) are raised
// for every method.
func Run(ctx context.Context, m Method, job *Job, emit func(Point) error) error {
	noLik := job.Task != nil && len(job.Task.Factors) == 0
	return m.Run(ctx, job, func(p Point) error {
		if noLik {
			if p.Diagnostics.Flags == nil {
				p.Diagnostics.Flags = &Flags{}
			}
			p.Diagnostics.Flags.NoLikelihood = NoLikelihoodWarning
		}
		p.Settle()
		return emit(p)
	})
}

// Settle raises the flags that follow from the point's own numbers (its
// weights, its sds, its k̂, its sampler's checks) beside those the method
// raised (convergence, training support), and writes Warnings: every
// raised flag in words, in a fixed order. It may be called again.
func (p *Point) Settle() {
	f := p.Diagnostics.Flags
	if f == nil {
		f = &Flags{}
	}
	d := &p.Diagnostics
	if a := d.FitDiagnostics; a != nil && f.PoorFit == "" {
		if k := float64(a.FitParetoK); k > MaxParetoK || math.IsNaN(k) && a.FitDraws > 0 {
			f.PoorFit = fmt.Sprintf("the network's draws fit the posterior poorly: Pareto k̂ %.3g > %g of their importance weights against the task's posterior (defensive mixture, %d weights)", k, MaxParetoK, a.FitDraws)
		}
	}
	if a := d.FitDiagnostics; a != nil && f.PoorFit == "" {
		momentFlags(a, f)
	}
	if a := d.FitDiagnostics; a != nil && f.NearThreshold == "" {
		f.NearThreshold = nearThreshold(a)
	}
	if s := d.SNISDiagnostics; s != nil && f.PoorFit == "" {
		if k := float64(s.ParetoK); !(k <= MaxParetoK) {
			f.PoorFit = fmt.Sprintf("the importance weights are unreliable: Pareto k̂ %.3g > %g over %d proposals", k, MaxParetoK, s.Proposals)
		}
	}
	if f.Degenerate == "" {
		f.Degenerate = degenerate(p.Draws)
	}
	if d.SNISDiagnostics != nil && f.Degenerate == "" && p.Draws != nil && p.Draws.Weighted() {
		if ess := posterior.KishESS(p.Draws.W); !(ess >= MinSNISESS) {
			f.Degenerate = fmt.Sprintf("the importance-weighted answer rests on %.3g effective draws of %d proposals (floor %d: its means and covariances need as many; ask for more proposals)", ess, p.Draws.Len(), MinSNISESS)
		}
	}
	if f.Sampler == "" && d.AutoDiagnostics == nil {
		// auto's NUTS stage answers only after passing its own checks,
		// whose thresholds the user set (auto_reason says which).
		f.Sampler = samplerFailed(d)
	}
	f.Warnings = warnings(f)
	if len(f.Warnings) == 0 && d.Flags == nil {
		return
	}
	d.Flags = f
}

// warnings are f's raised flags in words, in a fixed order.
func warnings(f *Flags) []string {
	var out []string
	if f.OutsideSupport != "" {
		out = append(out, fmt.Sprintf("the task is outside the checkpoint's training support (%s): the answer is an extrapolation", f.OutsideSupport))
	}
	if f.Converged != nil && !*f.Converged {
		why := f.ConvergenceReason
		if why == "" {
			why = "no reason recorded"
		}
		out = append(out, "the fit did not converge: "+why)
	}
	for _, w := range []string{f.NoLikelihood, f.PoorFit, f.TooWide, f.TooNarrow, f.Shifted, f.NearThreshold, f.Degenerate, f.Sampler} {
		if w != "" {
			out = append(out, w)
		}
	}
	for _, w := range f.TaskWarnings {
		out = append(out, "task: "+w)
	}
	return out
}

// degenerate says why draws are degenerate ("" when they are not): a
// weighted set whose Kish ESS is below MinESS or MinESSFraction of its
// draws, or a coordinate with sd exactly 0 among two or more draws.
// constantCoordinate reports whether every draw with weight has the same
// coordinate i (and there is one); it stops at the first that differs,
// which at 10⁷ SNIS draws is almost always the second.
func constantCoordinate(dr *posterior.Draws, i int) bool {
	first, seen := 0.0, false
	for s := range dr.Len() {
		if dr.W != nil && dr.W[s] == 0 {
			continue
		}
		v := dr.Z[s*dr.D+i]
		switch {
		case !seen:
			first, seen = v, true
		case v != first:
			return false
		}
	}
	return seen && !math.IsNaN(first)
}

func degenerate(dr *posterior.Draws) string {
	if dr == nil || dr.Len() < 2 {
		return ""
	}
	n := dr.Len()
	var why []string
	if dr.Weighted() {
		ess := posterior.KishESS(dr.W)
		if floor := math.Max(MinESS, MinESSFraction*float64(n)); !(ess >= floor) {
			why = append(why, fmt.Sprintf("the weighted answer rests on %.3g effective draws of %d (floor %g: %d, or %g%% of the draws)", ess, n, floor, MinESS, 100*MinESSFraction))
		}
	}
	var zero []string
	for i := range dr.D {
		if constantCoordinate(dr, i) {
			zero = append(zero, fmt.Sprintf("z%d", i+1))
		}
	}
	if len(zero) > 0 {
		why = append(why, fmt.Sprintf("sd is exactly 0 for %s (every draw with weight has the same value)", strings.Join(zero, ", ")))
	}
	return strings.Join(why, "; ")
}

// samplerFailed says which of an MCMC answer's checks failed ("" none).
func samplerFailed(d *Diagnostics) string {
	var why []string
	if nd := d.NUTSDiagnostics; nd != nil {
		if rh := float64(nd.Rhat); math.IsNaN(rh) {
			why = append(why, "max R̂ cannot be computed (too few or constant draws per chain)")
		} else if !(rh < MaxRhat) {
			why = append(why, fmt.Sprintf("max R̂ %.4g ≥ %g", rh, MaxRhat))
		}
		if ess := float64(nd.ESSBulk); math.IsNaN(ess) {
			why = append(why, "min bulk ESS cannot be computed (too few or constant draws per chain)")
		} else if !(ess >= MinBulkESS) {
			why = append(why, fmt.Sprintf("min bulk ESS %.0f < %d", ess, MinBulkESS))
		}
		if nd.Divergences > 0 {
			why = append(why, fmt.Sprintf("%d divergent transitions", nd.Divergences))
		}
		if len(why) > 0 {
			why[len(why)-1] += "; the draws may not represent the posterior (try more --warmup/--draws or --dense-mass)"
		}
	}
	if im := d.IMHDiagnostics; im != nil && im.Proposals < posterior.MinParetoKDraws {
		why = append(why, fmt.Sprintf("imh_pareto_k cannot be computed (too few proposals: %d, a Pareto fit needs ≥ %d; ask for more --draws)", im.Proposals, posterior.MinParetoKDraws))
	}
	return strings.Join(why, ", ")
}
