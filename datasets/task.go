package datasets

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/afin-bench/afin/factor"
)

// Load reads task key's raw file under dir and returns its factor task,
// preprocessed as the package doc describes. The same file always gives
// the same task: nothing here is random.
func Load(dir, key string) (*factor.Task, error) {
	t, err := ReadTable(dir, key)
	if err != nil {
		return nil, err
	}
	s, err := lookupSpec(key)
	if err != nil {
		return nil, err
	}
	task, err := build(s, t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return task, nil
}

// build turns a cleaned table into the task of Table 6.
func build(s *spec, t *Table) (*factor.Task, error) {
	in := s.info
	if len(t.Y) != in.N {
		return nil, fmt.Errorf("%d complete records, want %d (Table 6): is this the UCI file?", len(t.Y), in.N)
	}
	x, err := design(s, t)
	if err != nil {
		return nil, err
	}
	d := len(x[0])
	task := &factor.Task{Name: in.Key, D: d, Prior: prior(in.Prior, d)}
	switch s.kind {
	case classificationTask:
		for i, row := range x {
			task.Factors = append(task.Factors, &factor.BernoulliLogit{X: row, Y: t.Y[i]})
		}
	case regressionTask:
		all := make([]int, len(x))
		for i := range all {
			all[i] = i
		}
		fs, err := continuousFactors(s, x, t.Y, all)
		if err != nil {
			return nil, err
		}
		task.Factors = fs
	case heterogeneousTask:
		fs, err := heterogeneousFactors(s, x, t.Y)
		if err != nil {
			return nil, err
		}
		task.Factors = fs
	}
	return task, nil
}

// design returns the task's design rows: the covariates standardised,
// the top-K by correlation kept where the spec says so, ZCA-whitened to
// row covariance (designScale²/d)·I, and the intercept column appended.
func design(s *spec, t *Table) ([][]float64, error) {
	std, err := standardizeColumns(columns(t.X), t.Covariates)
	if err != nil {
		return nil, err
	}
	if s.topK > 0 {
		keep := topKByCorrelation(std, t.Y, s.topK)
		sel := make([][]float64, len(keep))
		for i, j := range keep {
			sel[i] = std[j]
		}
		std = sel
	}
	d := len(std)
	if s.intercept {
		d++
	}
	if d != s.info.D {
		return nil, fmt.Errorf("design has %d columns, want d = %d", d, s.info.D)
	}
	scale := designScale / math.Sqrt(float64(d))
	x, err := whitenZCA(std, scale)
	if err != nil {
		return nil, err
	}
	if s.intercept {
		// Centred whitened columns are orthogonal to a constant one, so the
		// whole design keeps row covariance (scale²)·I.
		for i := range x {
			x[i] = append(x[i], scale)
		}
	}
	return x, nil
}

// heterogeneousFactors gives alternate rows continuous observations and
// the others the response thresholded at its median (App. D.5).
func heterogeneousFactors(s *spec, x [][]float64, yRaw []float64) ([]factor.Likelihood, error) {
	// Alternate rows rather than halves of the file: the order of the
	// records (by date, plot, group) must not decide which observations
	// are coarsened.
	var cont []int
	for i := 0; i < len(x); i += 2 {
		cont = append(cont, i)
	}
	fs, err := continuousFactors(s, x, yRaw, cont)
	if err != nil {
		return nil, err
	}
	// The threshold is the median of the whole response column, "the
	// dataset median" of App. D.5; labels use the raw scale, which the
	// monotone transform would not change anyway.
	med := median(yRaw)
	out := make([]factor.Likelihood, len(x))
	for k, i := range cont {
		out[i] = fs[k]
	}
	for i := 1; i < len(x); i += 2 {
		y := 0.0
		if yRaw[i] > med {
			y = 1
		}
		out[i] = &factor.BernoulliLogit{X: x[i], Y: y}
	}
	return out, nil
}

// continuousFactors builds the real-valued observations of rows idx: the
// response transformed, standardised over those rows, with a noise scale
// fixed from a least-squares fit on the same rows.
func continuousFactors(s *spec, x [][]float64, yRaw []float64, idx []int) ([]factor.Likelihood, error) {
	y := make([]float64, len(idx))
	xs := make([][]float64, len(idx))
	for k, i := range idx {
		v := yRaw[i]
		if s.transform != nil {
			v = s.transform(v)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("response %s: transform of %g is not finite", s.response.name, yRaw[i])
		}
		y[k] = v
		xs[k] = x[i]
	}
	y, err := standardizeVec(y)
	if err != nil {
		return nil, fmt.Errorf("response %s: %w", s.response.name, err)
	}
	res, err := leastSquaresResiduals(xs, y)
	if err != nil {
		return nil, err
	}
	out := make([]factor.Likelihood, len(idx))
	switch s.continuous {
	case factor.LinGaussianFamily:
		sigma := residualSD(res, len(xs[0]))
		for k := range idx {
			out[k] = &factor.LinGaussian{X: xs[k], Y: y[k], Sigma: sigma}
		}
	case factor.LinStudentTFamily:
		sigma := studentTScale(res, studentTDF)
		for k := range idx {
			out[k] = &factor.LinStudentT{X: xs[k], Y: y[k], Sigma: sigma, DF: studentTDF}
		}
	default:
		return nil, fmt.Errorf("no continuous likelihood %q", s.continuous)
	}
	return out, nil
}

// residualSD is the usual unbiased noise estimate √(RSS/(n−p)).
func residualSD(res []float64, p int) float64 {
	var rss float64
	for _, r := range res {
		rss += r * r
	}
	return math.Sqrt(rss / float64(len(res)-p))
}

// studentTScale estimates the scale σ of Student-t(ν) noise robustly from
// residuals: the median absolute deviation divided by the t_ν 75 %
// quantile, which is the MAD of a unit-scale t_ν. The residual SD would
// let the few huge residuals that motivate a Student-t likelihood inflate
// the scale of every observation.
func studentTScale(res []float64, df float64) float64 {
	m := median(res)
	dev := make([]float64, len(res))
	for i, r := range res {
		dev[i] = math.Abs(r - m)
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.75)
	return median(dev) / q
}

// prior returns the task's prior: location 0 and unit variance per
// coordinate in every family, so the families differ only in their tails.
func prior(family string, d int) factor.Prior {
	loc := make([]float64, d)
	scale := make([]float64, d)
	switch family {
	case factor.DiagLaplaceFamily:
		// Var = 2b².
		for i := range scale {
			scale[i] = 1 / math.Sqrt2
		}
		return &factor.DiagLaplace{Loc: loc, Scale: scale}
	case factor.DiagStudentTFamily:
		// Var = s²·ν/(ν−2).
		s := math.Sqrt((studentTDF - 2) / studentTDF)
		for i := range scale {
			scale[i] = s
		}
		return &factor.DiagStudentT{Loc: loc, Scale: scale, DF: studentTDF}
	default:
		for i := range scale {
			scale[i] = 1
		}
		return &factor.DiagGaussian{Loc: loc, Scale: scale}
	}
}
