package factor

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/afin-bench/afin/posterior"
)

// ValidationError is one broken rule of a task, located by its JSON path
// (e.g. "factors[17].sigma"). Its message reads "path: rule, got value".
type ValidationError struct {
	Path string // JSON path of the offending value; "" for the whole task
	Rule string // what must hold, e.g. "must be > 0"
	Got  string // the offending value as written in JSON, or a description
}

// Error is the one-line message the CLI prints: "path: rule, got value".
func (e *ValidationError) Error() string {
	path := e.Path
	if path == "" {
		path = "task"
	}
	if e.Got == "" {
		return path + ": " + e.Rule
	}
	return path + ": " + e.Rule + ", got " + e.Got
}

func verr(path, rule, got string) error { return &ValidationError{Path: path, Rule: rule, Got: got} }

// fmtNum writes a number the way JSON would (NaN and ±Inf spelt out).
func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func idx(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func checkFinite(path string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return verr(path, "must be finite", fmtNum(v))
	}
	return nil
}

func checkPositive(path string, v float64) error {
	if err := checkFinite(path, v); err != nil {
		return err
	}
	if !(v > 0) {
		return verr(path, "must be > 0", fmtNum(v))
	}
	return nil
}

// checkVector requires d values within MaxAbs (locations, observations,
// design rows, true z).
func checkVector(path string, v []float64, d int) error {
	if err := checkLength(path, v, d); err != nil {
		return err
	}
	for i, x := range v {
		if err := checkValue(idx(path, i), x); err != nil {
			return err
		}
	}
	return nil
}

func checkLength(path string, v []float64, d int) error {
	if v == nil {
		return verr(path, "is required", "nothing")
	}
	if len(v) != d {
		return verr(path, "must have length d = "+strconv.Itoa(d), "length "+strconv.Itoa(len(v)))
	}
	return nil
}

// checkScales requires d scales in [MinScale, MaxScale].
func checkScales(path string, v []float64, d int) error {
	if err := checkLength(path, v, d); err != nil {
		return err
	}
	for i, x := range v {
		if err := checkScale(idx(path, i), x); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks every rule of DESIGN.md's task JSON and reports the first
// violation, in document order (d, prior, factors, true_z), as a
// *ValidationError. It is the one place the rules live (ParseTask reads
// the JSON's shape and then calls it), each limit quoted from its
// constant in limits.go. A task that passes has d in [1, MaxDim], every
// vector of the right length, every value within MaxAbs, every scale and
// df in [MinScale, MaxScale] and a positive definite precision within
// [MinPrecision, MaxPrecision], so no float64 computation on it
// overflows by its size alone.
func (t *Task) Validate() error {
	if t == nil {
		return verr("", "must not be null", "")
	}
	d := t.D
	if err := checkDim("d", d); err != nil {
		return err
	}
	if err := validatePrior(t.Prior, d); err != nil {
		return err
	}
	for i, f := range t.Factors {
		if err := validateFactor(idx("factors", i), f, d); err != nil {
			return err
		}
	}
	if t.TrueZ != nil {
		if err := checkVector("true_z", t.TrueZ, d); err != nil {
			return err
		}
	}
	return nil
}

func validatePrior(p Prior, d int) error {
	if isNilPtr(p) {
		return verr("prior", "is required", "nothing")
	}
	switch p := p.(type) {
	case nil:
		return verr("prior", "is required", "nothing")
	case *DiagGaussian:
		if err := checkVector("prior.loc", p.Loc, d); err != nil {
			return err
		}
		return checkScales("prior.scale", p.Scale, d)
	case *DiagLaplace:
		if err := checkVector("prior.loc", p.Loc, d); err != nil {
			return err
		}
		return checkScales("prior.scale", p.Scale, d)
	case *DiagStudentT:
		if err := checkVector("prior.loc", p.Loc, d); err != nil {
			return err
		}
		if err := checkScales("prior.scale", p.Scale, d); err != nil {
			return err
		}
		return checkScale("prior.df", p.DF)
	case *FullRankGaussian:
		if err := checkVector("prior.loc", p.Loc, d); err != nil {
			return err
		}
		if err := checkPrecisionEntries("prior.precision", p.Precision, d); err != nil {
			return err
		}
		// Positive definiteness is proven by the Cholesky factor every
		// constructor computes (factorPrecision): Validate does not
		// factorise again.
		if len(p.chol) != d*d {
			return verr("prior", "a fullrank_gaussian prior must be built with NewFullRankGaussian", "one without its Cholesky factor")
		}
		return nil
	default:
		return verr("prior.type", "must be one of "+strings.Join(PriorFamilies, ", "), fmt.Sprintf("%q", p.Family()))
	}
}

// checkPrecisionEntries requires a d×d matrix stored row-major with
// finite entries within MaxPrecision, a diagonal within [MinPrecision,
// MaxPrecision] and symmetry to 1e-9 relative: the O(d²) part of the
// precision rule.
func checkPrecisionEntries(path string, prec []float64, d int) error {
	if prec == nil {
		return verr(path, "is required", "nothing")
	}
	if len(prec) != d*d {
		return verr(path, "must be d×d = "+strconv.Itoa(d)+"×"+strconv.Itoa(d), strconv.Itoa(len(prec))+" entries")
	}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			p, v := idx(idx(path, i), j), prec[i*d+j]
			if err := checkFinite(p, v); err != nil {
				return err
			}
			if math.Abs(v) > MaxPrecision {
				return verr(p, precRule, fmtNum(v))
			}
			if i == j && v > 0 && v < MinPrecision {
				return verr(p, precDiag, fmtNum(v))
			}
		}
	}
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			a, b := prec[i*d+j], prec[j*d+i]
			if math.Abs(a-b) > 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) {
				return verr(idx(idx(path, i), j), "must be symmetric positive definite (equal to "+idx(idx(path, j), i)+" = "+fmtNum(b)+")", fmtNum(a))
			}
		}
	}
	return nil
}

// factorPrecision applies the whole precision rule (checkPrecisionEntries,
// then positive definiteness) and returns the lower Cholesky factor of the
// symmetrised matrix: the one O(d³) factorisation a full-rank prior needs,
// by whichever path it is built. Only a failure pays for more, to say which
// leading block fails.
func factorPrecision(path string, prec []float64, d int) ([]float64, error) {
	if err := checkPrecisionEntries(path, prec, d); err != nil {
		return nil, err
	}
	// Factorise the symmetrised lower triangle, so asymmetry within the
	// tolerance cannot tilt the factor towards one triangle.
	sym := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			sym[i*d+j] = 0.5 * (prec[i*d+j] + prec[j*d+i])
		}
	}
	if chol, ok := posterior.Cholesky(sym, d, 0); ok {
		return chol, nil
	}
	k := firstNonPDBlock(sym, d)
	return nil, verr(path, "must be symmetric positive definite", "a matrix whose leading "+strconv.Itoa(max(k, 1))+"×"+strconv.Itoa(max(k, 1))+" block is not positive definite")
}

func validateFactor(path string, f Likelihood, d int) error {
	if isNilPtr(f) {
		return verr(path, "must be a factor object", "null")
	}
	switch f := f.(type) {
	case nil:
		return verr(path, "must be a factor object", "null")
	case *Gaussian:
		if err := checkVector(path+".y", f.Y, d); err != nil {
			return err
		}
		return checkScale(path+".sigma", f.Sigma)
	case *LinGaussian:
		if err := checkVector(path+".x", f.X, d); err != nil {
			return err
		}
		if err := checkValue(path+".y", f.Y); err != nil {
			return err
		}
		return checkScale(path+".sigma", f.Sigma)
	case *LinStudentT:
		if err := checkVector(path+".x", f.X, d); err != nil {
			return err
		}
		if err := checkValue(path+".y", f.Y); err != nil {
			return err
		}
		if err := checkScale(path+".sigma", f.Sigma); err != nil {
			return err
		}
		return checkScale(path+".df", f.DF)
	case *BernoulliLogit:
		if err := checkVector(path+".x", f.X, d); err != nil {
			return err
		}
		if f.Y != 0 && f.Y != 1 {
			return verr(path+".y", "must be 0 or 1", fmtNum(f.Y))
		}
		return nil
	case *BinomialLogit:
		if err := checkVector(path+".x", f.X, d); err != nil {
			return err
		}
		if f.Trials < 1 || f.Trials > MaxTrials {
			return verr(path+".trials", trialsRule, strconv.Itoa(f.Trials))
		}
		if err := checkFinite(path+".y", f.Y); err != nil {
			return err
		}
		if f.Y != math.Trunc(f.Y) {
			return verr(path+".y", "must be an integer count", fmtNum(f.Y))
		}
		if f.Y < 0 || f.Y > float64(f.Trials) {
			return verr(path+".y", "must be in [0, trials] = [0, "+strconv.Itoa(f.Trials)+"]", fmtNum(f.Y))
		}
		return nil
	default:
		return verr(path+".type", "must be one of "+strings.Join(LikelihoodFamilies, ", "), fmt.Sprintf("%q", f.Family()))
	}
}

// isNilPtr reports a typed nil pointer inside an interface, which the
// type switches below would otherwise dereference.
func isNilPtr(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}
