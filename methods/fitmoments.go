package methods

import (
	"fmt"
	"math"
)

// The moment check of an AFIN answer (momentFlags), on the defensive
// importance weights of its fit check (FitDiagnostics): a gap must exceed
// both its tolerance and fitMomentZ of its Monte Carlo standard errors.
const (
	// FitWidthMax is the largest ratio, either way, between an answer's
	// sd and the importance-weighted sd of a coordinate that is not
	// flagged. Weighting an answer that is too narrow towards a wider
	// posterior undersamples the posterior's tails, which biases the
	// weighted sd towards the answer's: one coordinate 2× (2.5×) too
	// narrow is flagged on 84.5% (87.5%) of the tasks of
	// TestMomentCheckCalibration, every coordinate 2× too narrow on 99.5%
	// (2× too wide, or 1 sd off: 100%). A tighter narrow side (1.3)
	// flagged 7.5% of answers only 10% too narrow; a Student-t 1.5×
	// wider flagged 3.5% of answers 10% too wide at d = 16.
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
	if n := -float64(a.FitNarrowLog); n > widthTol && f.TooNarrow == "" {
		f.TooNarrow = fmt.Sprintf("the answer is too narrow: the sd of %s is %.3g× the importance-weighted sd of its own draws (tolerance 1/%.3g×, ESS %.3g)", coord(a.NarrowCoord), math.Exp(-n), math.Exp(widthTol), ess)
	}
	if s := float64(a.FitMeanShift); s > shiftTol && f.Shifted == "" {
		f.Shifted = fmt.Sprintf("the answer is shifted: the mean of %s is %.3g posterior sds from the importance-weighted mean of its own draws (tolerance %.3g, ESS %.3g)", coord(a.ShiftCoord), s, shiftTol, ess)
	}
}
