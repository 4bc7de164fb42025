package datasets

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/afin-bench/afin/internal/moments"
	"gonum.org/v1/gonum/mat"
)

// standardizeVec returns (v − mean)/sd.
func standardizeVec(v []float64) ([]float64, error) {
	mean, sd := moments.MeanSD(v, 0) // population sd: a standardised column has Σx²/n = 1, which the whitening relies on
	if !(sd > 0) {
		return nil, errors.New("constant column cannot be standardised")
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = (x - mean) / sd
	}
	return out, nil
}

// columns transposes a row-major table into its columns.
func columns(rows [][]float64) [][]float64 {
	if len(rows) == 0 {
		return nil
	}
	cols := make([][]float64, len(rows[0]))
	for j := range cols {
		cols[j] = make([]float64, len(rows))
		for i, r := range rows {
			cols[j][i] = r[j]
		}
	}
	return cols
}

// standardizeColumns standardises every column; names are used in errors.
func standardizeColumns(cols [][]float64, names []string) ([][]float64, error) {
	out := make([][]float64, len(cols))
	for j, c := range cols {
		s, err := standardizeVec(c)
		if err != nil {
			return nil, fmt.Errorf("covariate %s: %w", names[j], err)
		}
		out[j] = s
	}
	return out, nil
}

// correlation is Pearson's r between a standardised column and v.
func correlation(std, v []float64) float64 {
	mean, sd := moments.MeanSD(v, 0) // population sd: a standardised column has Σx²/n = 1, which the whitening relies on
	if sd == 0 {
		return 0
	}
	var s float64
	for i, x := range std {
		s += x * (v[i] - mean)
	}
	return s / (float64(len(v)) * sd)
}

// topKByCorrelation returns the indices (ascending) of the k standardised
// columns with the largest |r| against the label: univariate screening by
// point-biserial correlation, ties broken by file order.
func topKByCorrelation(std [][]float64, label []float64, k int) []int {
	idx := make([]int, len(std))
	score := make([]float64, len(std))
	for j := range std {
		idx[j] = j
		score[j] = math.Abs(correlation(std[j], label))
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return 0
	})
	keep := append([]int(nil), idx[:min(k, len(idx))]...)
	slices.Sort(keep)
	return keep
}

// whitenZCA returns the rows of S·C^{-1/2}·scale, where S holds the
// standardised columns and C = SᵀS/n is their correlation matrix. ZCA
// (Mahalanobis) whitening is the whitening transform that keeps each new
// column as close as possible to its original covariate (Kessy, Lewis &
// Strimmer 2018), so coordinate j of z still belongs to covariate j.
func whitenZCA(std [][]float64, scale float64) ([][]float64, error) {
	p := len(std)
	n := len(std[0])
	s := mat.NewDense(n, p, nil)
	for j, c := range std {
		for i, v := range c {
			s.Set(i, j, v)
		}
	}
	var c mat.SymDense
	c.SymOuterK(1/float64(n), s.T())
	var eig mat.EigenSym
	if !eig.Factorize(&c, true) {
		return nil, errors.New("whitening: eigendecomposition of the covariate correlation matrix failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	maxVal := slices.Max(vals)
	// A correlation matrix this close to singular means two covariates
	// carry the same information; whitening would blow up their noise.
	if minVal := slices.Min(vals); !(minVal > 1e-8*maxVal) {
		return nil, fmt.Errorf("whitening: covariates are collinear (correlation matrix eigenvalues %.3g..%.3g)", minVal, maxVal)
	}
	// W = V diag(λ^{-1/2}) Vᵀ · scale
	scaled := mat.DenseCopyOf(&vecs)
	for j, l := range vals {
		f := scale / math.Sqrt(l)
		for i := range p {
			scaled.Set(i, j, scaled.At(i, j)*f)
		}
	}
	var w, out mat.Dense
	w.Mul(scaled, vecs.T())
	out.Mul(s, &w)
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = mat.Row(nil, i, &out)
	}
	return rows, nil
}

// leastSquaresResiduals fits y ≈ Xβ by least squares (QR) and returns the
// residuals y − Xβ̂.
func leastSquaresResiduals(x [][]float64, y []float64) ([]float64, error) {
	n, p := len(x), len(x[0])
	if n <= p {
		return nil, fmt.Errorf("least squares needs more rows (%d) than columns (%d)", n, p)
	}
	a := mat.NewDense(n, p, nil)
	for i, r := range x {
		a.SetRow(i, r)
	}
	b := mat.NewVecDense(n, append([]float64(nil), y...))
	var beta mat.VecDense
	if err := beta.SolveVec(a, b); err != nil {
		return nil, fmt.Errorf("least squares: %w", err)
	}
	var fit mat.VecDense
	fit.MulVec(a, &beta)
	res := make([]float64, n)
	for i := range res {
		res[i] = y[i] - fit.AtVec(i)
	}
	return res, nil
}

// median of v (mean of the two middle values for even length).
func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
