package posterior

import "math"

// MomentGap is how far an answer's moments lie from the importance-
// weighted (self-normalised) moments of draws weighted towards the
// posterior, which estimate the posterior's own: per coordinate, the
// distance of the means in the weighted sds, and the log ratio of the
// answer's sd to the weighted sd. The extremes over coordinates are kept
// with their coordinates (0-based). An answer whose draws are too wide
// or too narrow can still give importance weights with a healthy Pareto
// k̂ (a wide proposal's weights are bounded), which the gap sees.
type MomentGap struct {
	// MeanShift is maxᵢ |m̂ᵢ − mᵢ|/ŝᵢ (m̂, ŝ the weighted mean and sd).
	MeanShift  float64
	ShiftCoord int
	// WideLog is maxᵢ log(sᵢ/ŝᵢ) (> 0: the answer is wider there);
	// NarrowLog is minᵢ log(sᵢ/ŝᵢ) (< 0: narrower).
	WideLog, NarrowLog     float64
	WideCoord, NarrowCoord int
}

// MomentGapOf compares the answer's mean and covariance (row-major d×d)
// with the moments of the weighted draws w. It returns false when the
// comparison is undefined: w is not weighted, sizes disagree, or some sd
// is 0 or a number is not finite.
func MomentGapOf(mean, cov []float64, w *Draws) (MomentGap, bool) {
	d := len(mean)
	if w == nil || !w.Weighted() || w.D != d || len(cov) != d*d || d == 0 {
		return MomentGap{}, false
	}
	mw, cw := w.Mean(), w.Cov()
	g := MomentGap{WideLog: math.Inf(-1), NarrowLog: math.Inf(1)}
	for i := 0; i < d; i++ {
		s, sw := math.Sqrt(cov[i*d+i]), math.Sqrt(cw[i*d+i])
		shift := math.Abs(mw[i]-mean[i]) / sw
		lr := math.Log(s / sw)
		if !(s > 0) || !(sw > 0) || math.IsNaN(shift) || math.IsInf(shift, 0) || math.IsNaN(lr) || math.IsInf(lr, 0) {
			return MomentGap{}, false
		}
		if shift > g.MeanShift || i == 0 {
			g.MeanShift, g.ShiftCoord = shift, i
		}
		if lr > g.WideLog {
			g.WideLog, g.WideCoord = lr, i
		}
		if lr < g.NarrowLog {
			g.NarrowLog, g.NarrowCoord = lr, i
		}
	}
	return g, true
}
