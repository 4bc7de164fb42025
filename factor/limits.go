package factor

import (
	"fmt"
	"math"
	"strconv"
)

// The limits of a task, each stated once. Validate enforces the hard ones
// (a task beyond them is refused: no float64 computation carries it), the
// reader and the simulator quote them, and Warnings names values inside
// them but far outside the range every method was tested on.
const (
	// MaxDim bounds d so a d×d precision fits comfortably in memory; it is
	// far above any task afin runs.
	MaxDim = 1 << 16
	// MaxTrials bounds binomial trials so counts stay exact in float64 and
	// in an int on every platform.
	MaxTrials = 1 << 30

	// MaxAbs bounds the magnitude of every location, observation, design
	// entry and true z. The densities square differences of two such
	// values and multiply them ((y − xᵀz)², (z − loc)²): 1e150² = 1e300 is
	// finite in float64, (1e155)² overflows.
	MaxAbs = 1e150
	// MinScale and MaxScale bound every scale (a prior's scale, a
	// likelihood's sigma) and every degrees of freedom: the densities
	// divide by a scale's square, so 1/MinScale² = 1e300 must be finite (a
	// scale of 1e-160 gives +Inf), and MaxScale² too.
	MinScale = 1e-150
	MaxScale = 1e150
	// MaxPrecision bounds a full-rank prior's precision entries, and its
	// diagonal lies in [MinPrecision, MaxPrecision]: the precisions of
	// scales in [MinScale, MaxScale] (1/scale²).
	MaxPrecision = 1 / (MinScale * MinScale)
	MinPrecision = 1 / (MaxScale * MaxScale)

	// The tested range. The paper's simulator, the UCI tasks (standardised)
	// and every test keep to it with room to spare: |values| of order 1,
	// scales within e^±1, df 3–8. Far outside it the answer is computable
	// but no method was ever checked there, so Warnings names the value.
	TestedAbs      = 1e4
	TestedScaleMin = 1e-4
	TestedScaleMax = 1e4
	TestedDFMin    = 0.1
)

// The rules as error messages quote them.
var (
	dimRule    = "must be an integer in [1, " + strconv.Itoa(MaxDim) + "]"
	trialsRule = "must be an integer in [1, " + strconv.Itoa(MaxTrials) + "]"
	absRule    = fmt.Sprintf("must be finite with |value| ≤ %g (factor.MaxAbs: its square must fit in float64)", MaxAbs)
	scaleRule  = fmt.Sprintf("must be in [%g, %g] (factor.MinScale, MaxScale: its inverse square must fit in float64)", MinScale, MaxScale)
	precRule   = fmt.Sprintf("must be finite with |value| ≤ %g (factor.MaxPrecision, the precision of a scale of %g)", MaxPrecision, MinScale)
	precDiag   = fmt.Sprintf("must be in [%g, %g] (factor.MinPrecision, MaxPrecision: the precisions of scales in [%g, %g])", MinPrecision, MaxPrecision, MinScale, MaxScale)
)

// checkDim enforces 1 ≤ d ≤ MaxDim.
func checkDim(path string, d int) error {
	if d < 1 || d > MaxDim {
		return verr(path, dimRule, strconv.Itoa(d))
	}
	return nil
}

// checkValue enforces a finite value of magnitude ≤ MaxAbs.
func checkValue(path string, v float64) error {
	if err := checkFinite(path, v); err != nil {
		return err
	}
	if math.Abs(v) > MaxAbs {
		return verr(path, absRule, fmtNum(v))
	}
	return nil
}

// checkScale enforces a finite scale in [MinScale, MaxScale] (a zero or
// negative one reads "must be > 0", the rule a user breaks most).
func checkScale(path string, v float64) error {
	if err := checkPositive(path, v); err != nil {
		return err
	}
	if v < MinScale || v > MaxScale {
		return verr(path, scaleRule, fmtNum(v))
	}
	return nil
}

// Warnings names each value of a valid task that lies far outside the
// tested range (TestedAbs, TestedScaleMin/Max, TestedDFMin), one line per
// field and at most one per vector, in document order. The task is
// computable; the answer is untested there.
func (t *Task) Warnings() []string {
	var w warner
	w.prior(t.Prior)
	for i, f := range t.Factors {
		w.factor(idx("factors", i), f)
	}
	w.values("true_z", t.TrueZ)
	out := w.out
	// One line per far field; a task with hundreds of them names a few.
	const shown = 5
	if len(out) > shown {
		out = append(out[:shown], fmt.Sprintf("and %d more value(s) far outside the tested range", len(out)-shown))
	}
	return out
}

// warner collects Warnings' lines.
type warner struct{ out []string }

// absRange and scaleRange are the tested ranges as a warning quotes them.
func absRange() string { return fmt.Sprintf("|value| ≤ %g, factor.TestedAbs", float64(TestedAbs)) }

func scaleRange() string {
	return fmt.Sprintf("scales in [%g, %g], factor.TestedScaleMin/Max", TestedScaleMin, TestedScaleMax)
}

func (w *warner) far(path string, v float64, rng string) {
	w.out = append(w.out, fmt.Sprintf("%s = %s is far outside the range every method was tested on (%s): treat the answer with care", path, fmtNum(v), rng))
}

// values warns of the first entry of v beyond TestedAbs.
func (w *warner) values(path string, v []float64) {
	for i, x := range v {
		if math.Abs(x) > TestedAbs {
			w.far(idx(path, i), x, absRange())
			return
		}
	}
}

func (w *warner) value(path string, x float64) {
	if math.Abs(x) > TestedAbs {
		w.far(path, x, absRange())
	}
}

func (w *warner) scale(path string, s float64) {
	if s < TestedScaleMin || s > TestedScaleMax {
		w.far(path, s, scaleRange())
	}
}

// scales warns of the first entry of v outside the tested scales.
func (w *warner) scales(path string, v []float64) {
	for i, s := range v {
		if s < TestedScaleMin || s > TestedScaleMax {
			w.far(idx(path, i), s, scaleRange())
			return
		}
	}
}

func (w *warner) df(path string, v float64) {
	if v < TestedDFMin || v > TestedScaleMax {
		w.far(path, v, fmt.Sprintf("df in [%g, %g], factor.TestedDFMin, TestedScaleMax", TestedDFMin, TestedScaleMax))
	}
}

func (w *warner) prior(p Prior) {
	switch p := p.(type) {
	case *DiagGaussian:
		w.values("prior.loc", p.Loc)
		w.scales("prior.scale", p.Scale)
	case *DiagLaplace:
		w.values("prior.loc", p.Loc)
		w.scales("prior.scale", p.Scale)
	case *DiagStudentT:
		w.values("prior.loc", p.Loc)
		w.scales("prior.scale", p.Scale)
		w.df("prior.df", p.DF)
	case *FullRankGaussian:
		w.values("prior.loc", p.Loc)
		d := len(p.Loc)
		for i := 0; i < d; i++ {
			// A diagonal precision λ is a scale of at most 1/√λ.
			if l := p.Precision[i*d+i]; l > 0 {
				if s := 1 / math.Sqrt(l); s < TestedScaleMin || s > TestedScaleMax {
					w.out = append(w.out, fmt.Sprintf("%s = %s is far outside the range every method was tested on (precisions in [%g, %g], the inverse squares of factor.TestedScaleMax/Min): treat the answer with care",
						idx(idx("prior.precision", i), i), fmtNum(l), 1/(TestedScaleMax*TestedScaleMax), 1/(TestedScaleMin*TestedScaleMin)))
					break
				}
			}
		}
	}
}

func (w *warner) factor(path string, f Likelihood) {
	switch f := f.(type) {
	case *Gaussian:
		w.values(path+".y", f.Y)
		w.scale(path+".sigma", f.Sigma)
	case *LinGaussian:
		w.values(path+".x", f.X)
		w.value(path+".y", f.Y)
		w.scale(path+".sigma", f.Sigma)
	case *LinStudentT:
		w.values(path+".x", f.X)
		w.value(path+".y", f.Y)
		w.scale(path+".sigma", f.Sigma)
		w.df(path+".df", f.DF)
	case *BernoulliLogit:
		w.values(path+".x", f.X)
	case *BinomialLogit:
		w.values(path+".x", f.X)
	}
}
