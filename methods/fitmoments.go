package methods

import (
	"fmt"
	"math"
	"strings"

	"github.com/afin-bench/afin/factor"
)

// The moment check of an AFIN answer (momentFlags), on the defensive
// importance weights of its fit check (FitDiagnostics): a gap must exceed
// both its tolerance and fitMomentZ of its Monte Carlo standard errors.
const (
	// FitWidthMax is the largest ratio, either way, between an answer's
	// sd and the importance-weighted sd of a coordinate that is not
	// flagged, and between the conditional sd at its mean and its sd.
	// Weighting an answer that is too narrow towards a wider posterior
	// undersamples the posterior's tails, which biases the weighted sd
	// towards the answer's: by the weights alone, one coordinate 2× (2.5×)
	// too narrow is flagged on 84.5% (87.5%) of the tasks of
	// TestMomentCheckCalibration; with the curvature (curvatureNarrow),
	// on all of them, as is every other answer 2× off in sd or 1 sd in
	// mean. A tighter weighted narrow side (1.3) flagged 7.5% of answers
	// only 10% too narrow; a Student-t 1.5× wider flagged 3.5% of answers
	// 10% too wide at d = 16.
	FitWidthMax = 1.4
	// FitShiftMax is the largest distance, in posterior sds, between an
	// answer's mean and the importance-weighted mean of a coordinate that
	// is not flagged.
	FitShiftMax = 0.5
	// fitMomentZ is the number of Monte Carlo standard errors a gap must
	// also exceed: about 1/√ESS for a mean in sds, 1/√(2·ESS) for a log
	// sd, ESS the Kish ESS of the weights. An accurate answer's weights
	// have an ESS near their number (96 to 127 of 128 on the calibration
	// tasks), where the tolerances above are 4 to 5 standard errors and
	// decide; at a low ESS (an answer far off) the standard errors decide,
	// so a handful of heavy weights alone raise no flag. 2, not more: a
	// 2× too wide answer at d = 16 leaves an ESS near 2.
	fitMomentZ = 2
)

// momentFlags raises f.TooWide, f.TooNarrow and f.Shifted from a's moment
// gap. The rule, per coordinate i, with m̂ᵢ and ŝᵢ the self-normalised
// importance-weighted mean and sd of the fit check's weighted draws (an
// estimate of the posterior's), mᵢ and sᵢ the answer's:
//
//	too_wide    log(sᵢ/ŝᵢ)   > max(log FitWidthMax, fitMomentZ/√(2·ESS))
//	too_narrow  log(ŝᵢ/sᵢ)   > max(log FitWidthMax, fitMomentZ/√(2·ESS))
//	shifted     |mᵢ − m̂ᵢ|/ŝᵢ > max(FitShiftMax,    fitMomentZ/√ESS)
//
// and, without the weights, from the posterior's curvature at the
// answer's mean (FitCurvNarrowLog, curvatureNarrow):
//
//	too_narrow  log(cᵢ/sᵢ)   > log FitWidthMax,  cᵢ = 1/√(−∂²log p/∂zᵢ²)
//
// cᵢ is the sd of zᵢ given the others at the mean; a Gaussian posterior's
// marginal sd is never below it, so an accurate answer cannot raise it,
// and the curvature sees the narrowness the weights miss.
//
// Only the coordinate with the largest gap of each kind is named. Nothing
// is raised when the gap was not measured (NaN).
func momentFlags(a *FitDiagnostics, f *Flags) {
	ess := float64(a.FitESS)
	if !(ess > 0) {
		return
	}
	widthTol := math.Max(math.Log(FitWidthMax), fitMomentZ/math.Sqrt(2*ess))
	shiftTol := math.Max(FitShiftMax, fitMomentZ/math.Sqrt(ess))
	coord := func(i int) string {
		if i > 0 {
			return fmt.Sprintf("z%d", i)
		}
		return "a coordinate"
	}
	if w := float64(a.FitWideLog); w > widthTol && f.TooWide == "" {
		f.TooWide = fmt.Sprintf("the answer is too wide: the sd of %s is %.3g× the importance-weighted sd of its own draws (tolerance %.3g×, ESS %.3g)", coord(a.WideCoord), math.Exp(w), math.Exp(widthTol), ess)
	}
	// The curvature needs no weights: its own tolerance, whatever the ESS.
	if n := float64(a.FitCurvNarrowLog); n > math.Log(FitWidthMax) && f.TooNarrow == "" {
		f.TooNarrow = fmt.Sprintf("the answer is too narrow: the sd of %s is %.3g× the conditional sd 1/√(−∂²log p) at its mean, which a Gaussian posterior's sd cannot be below (tolerance 1/%.3g×)", coord(a.CurvCoord), math.Exp(-n), FitWidthMax)
	}
	if n := -float64(a.FitNarrowLog); n > widthTol && f.TooNarrow == "" {
		f.TooNarrow = fmt.Sprintf("the answer is too narrow: the sd of %s is %.3g× the importance-weighted sd of its own draws (tolerance 1/%.3g×, ESS %.3g)", coord(a.NarrowCoord), math.Exp(-n), math.Exp(widthTol), ess)
	}
	if s := float64(a.FitMeanShift); s > shiftTol && f.Shifted == "" {
		f.Shifted = fmt.Sprintf("the answer is shifted: the mean of %s is %.3g posterior sds from the importance-weighted mean of its own draws (tolerance %.3g, ESS %.3g)", coord(a.ShiftCoord), s, shiftTol, ess)
	}
}

// fitCurvatureMaxD is the largest d whose curvature is measured: 2d
// gradient evaluations, under the fit check's 2·fitDraws at d ≤ 64.
const fitCurvatureMaxD = 64

// curvatureNarrow returns max over coordinates of log(cᵢ/sᵢ), cᵢ the
// conditional sd 1/√(−∂²log p/∂zᵢ²) at mean (central differences of the
// gradient, step 10⁻³ sᵢ) and sᵢ the answer's sd, and that coordinate;
// ok is false above fitCurvatureMaxD or when no curvature is positive.
// A Laplace prior has no curvature off its kink; smoothed stands in for
// it.
func curvatureNarrow(task *factor.Task, mean, cov []float64) (float64, int, bool) {
	d := task.D
	if d > fitCurvatureMaxD || len(mean) != d || len(cov) != d*d {
		return 0, 0, false
	}
	pk := smoothed(task).Packed()
	z := append([]float64(nil), mean...)
	gp, gm := make([]float64, d), make([]float64, d)
	best, at, ok := math.Inf(-1), 0, false
	for i := range d {
		s := math.Sqrt(cov[i*d+i])
		if !(s > 0) || math.IsInf(s, 0) {
			continue
		}
		h := 1e-3 * s
		z[i] = mean[i] + h
		pk.LogDensityGrad(z, gp)
		z[i] = mean[i] - h
		pk.LogDensityGrad(z, gm)
		z[i] = mean[i]
		curv := -(gp[i] - gm[i]) / (2 * h)
		if !(curv > 0) || math.IsInf(curv, 0) {
			continue
		}
		if l := -0.5*math.Log(curv) - math.Log(s); l > best {
			best, at, ok = l, i, true
		}
	}
	return best, at, ok
}

// smoothed is task with a Laplace prior replaced by the Gaussian of the
// same location and Fisher information (scale b: both 1/b²). The Laplace
// log density is flat in curvature but for its kink, so its curvature at
// a mean says nothing of how it narrows the posterior; its information
// does (measured: with the Laplace curvature, 6 of 80 accurate NUTS
// answers of Laplace-prior tasks read as too narrow, up to 3.6×).
func smoothed(task *factor.Task) *factor.Task {
	l, ok := task.Prior.(*factor.DiagLaplace)
	if !ok {
		return task
	}
	t := *task
	t.Prior = &factor.DiagGaussian{Loc: l.Loc, Scale: l.Scale}
	return &t
}

// fitKMargin is how close to MaxParetoK, either side, the fit check's k̂
// is near its threshold: the standard deviation of k̂ over 40 draws of
// the fit check of one answer, measured on simulated conjugate tasks
// (d 2 to 16, N 8 to 128; answers 0.3 sd off in mean and 1.2× in sd):
// 0.18 to 0.20 where k̂ was highest (0.32 to 0.43), 0.14 to 0.17 where
// it was near 0.1. k̂ from 128 weights is that noisy.
const fitKMargin = 0.2

// nearThreshold says which of a's fit statistics lie within one Monte
// Carlo standard error of their thresholds ("" none) when that could
// change the verdict: the answer passes, or every statistic that flags it
// is that close. There another set of the check's draws could give the
// other verdict, and the answer says so. The errors are those of
// momentFlags (1/√ESS for the mean shift, 1/√(2·ESS) for a log sd ratio;
// they match the spread measured with fitKMargin: 0.08 to 0.13 and 0.04
// to 0.09) and fitKMargin for k̂. The curvature needs no draws and has no
// such error: a curvature flag is firm.
func nearThreshold(a *FitDiagnostics) string {
	ess := float64(a.FitESS)
	if a.FitDraws == 0 || !(ess > 0) || float64(a.FitCurvNarrowLog) > math.Log(FitWidthMax) {
		return ""
	}
	widthTol := math.Max(math.Log(FitWidthMax), fitMomentZ/math.Sqrt(2*ess))
	shiftTol := math.Max(FitShiftMax, fitMomentZ/math.Sqrt(ess))
	num := func(v float64) string { return fmt.Sprintf("%.3g", v) }
	ratio := func(v float64) string { return fmt.Sprintf("%.3g×", math.Exp(v)) }
	var near []string
	for _, s := range []struct {
		name           string
		v, tol, margin float64
		words          func(float64) string
	}{
		{"Pareto k̂", float64(a.FitParetoK), MaxParetoK, fitKMargin, num},
		{"mean shift (posterior sds)", float64(a.FitMeanShift), shiftTol, 1 / math.Sqrt(ess), num},
		{"sd too wide by", float64(a.FitWideLog), widthTol, 1 / math.Sqrt(2*ess), ratio},
		{"sd too narrow by", -float64(a.FitNarrowLog), widthTol, 1 / math.Sqrt(2*ess), ratio},
	} {
		switch {
		case math.IsNaN(s.v):
		case s.v-s.tol >= s.margin:
			return "" // flagged beyond doubt: no draws would clear it
		case math.Abs(s.v-s.tol) < s.margin:
			verdict := "passed"
			if s.v > s.tol {
				verdict = "flagged"
			}
			near = append(near, fmt.Sprintf("%s %s, within %.2g of its threshold %s (%s)", s.name, s.words(s.v), s.margin, s.words(s.tol), verdict))
		}
	}
	if len(near) == 0 {
		return ""
	}
	return fmt.Sprintf("the fit check is near a threshold, so its verdict rests on its own %d draws and could go either way: %s",
		a.FitDraws, strings.Join(near, "; "))
}
