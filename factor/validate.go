package factor

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// maxTrials bounds binomial trials so counts stay exact in float64 and in
// an int on every platform.
const maxTrials = 1 << 30

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

func checkVector(path string, v []float64, d int) error {
	if v == nil {
		return verr(path, "is required", "nothing")
	}
	if len(v) != d {
		return verr(path, "must have length d = "+strconv.Itoa(d), "length "+strconv.Itoa(len(v)))
	}
	for i, x := range v {
		if err := checkFinite(idx(path, i), x); err != nil {
			return err
		}
	}
	return nil
}

func checkPositiveVector(path string, v []float64, d int) error {
	if err := checkVector(path, v, d); err != nil {
		return err
	}
	for i, x := range v {
		if err := checkPositive(idx(path, i), x); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks every rule of DESIGN.md's task JSON and reports the first
// violation, in document order (d, prior, factors, true_z), as a
// *ValidationError. A task that passes has every vector of the right
// length, every number finite, every scale positive and a factorisable
// precision, so the density code can run on it without panicking.
func (t *Task) Validate() error {
	if t == nil {
		return verr("", "must not be null", "")
	}
	d := t.D
	if d < 1 {
		return verr("d", "must be an integer ≥ 1", strconv.Itoa(d))
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
		return checkPositiveVector("prior.scale", p.Scale, d)
	case *DiagLaplace:
		if err := checkVector("prior.loc", p.Loc, d); err != nil {
			return err
		}
		return checkPositiveVector("prior.scale", p.Scale, d)
	case *DiagStudentT:
		if err := checkVector("prior.loc", p.Loc, d); err != nil {
			return err
		}
		if err := checkPositiveVector("prior.scale", p.Scale, d); err != nil {
			return err
		}
		return checkPositive("prior.df", p.DF)
	case *FullRankGaussian:
		if err := checkVector("prior.loc", p.Loc, d); err != nil {
			return err
		}
		if err := checkPrecision("prior.precision", p.Precision, d); err != nil {
			return err
		}
		if len(p.chol) != d*d {
			return verr("prior", "a fullrank_gaussian prior must be built with NewFullRankGaussian", "one without its Cholesky factor")
		}
		return nil
	default:
		return verr("prior.type", "must be one of "+strings.Join(PriorFamilies, ", "), fmt.Sprintf("%q", p.Family()))
	}
}

// checkPrecision requires a finite, symmetric (to 1e-9 relative), positive
// definite d×d matrix stored row-major.
func checkPrecision(path string, prec []float64, d int) error {
	if prec == nil {
		return verr(path, "is required", "nothing")
	}
	if len(prec) != d*d {
		return verr(path, "must be d×d = "+strconv.Itoa(d)+"×"+strconv.Itoa(d), strconv.Itoa(len(prec))+" entries")
	}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if err := checkFinite(idx(idx(path, i), j), prec[i*d+j]); err != nil {
				return err
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
	if k := firstNonPDBlock(prec, d); k > 0 {
		return verr(path, "must be symmetric positive definite", "a matrix whose leading "+strconv.Itoa(k)+"×"+strconv.Itoa(k)+" block is not positive definite")
	}
	return nil
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
		return checkPositive(path+".sigma", f.Sigma)
	case *LinGaussian:
		if err := checkVector(path+".x", f.X, d); err != nil {
			return err
		}
		if err := checkFinite(path+".y", f.Y); err != nil {
			return err
		}
		return checkPositive(path+".sigma", f.Sigma)
	case *LinStudentT:
		if err := checkVector(path+".x", f.X, d); err != nil {
			return err
		}
		if err := checkFinite(path+".y", f.Y); err != nil {
			return err
		}
		if err := checkPositive(path+".sigma", f.Sigma); err != nil {
			return err
		}
		return checkPositive(path+".df", f.DF)
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
		if f.Trials < 1 || f.Trials > maxTrials {
			return verr(path+".trials", "must be an integer in [1, "+strconv.Itoa(maxTrials)+"]", strconv.Itoa(f.Trials))
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
