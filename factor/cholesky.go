package factor

import "gonum.org/v1/gonum/mat"

// choleskyLower returns the lower factor L (row-major, Λ = L Lᵀ) of the
// symmetric d×d matrix a, reading only its lower triangle, by gonum's
// LAPACK-style factorisation. ok is false when a is not numerically
// positive definite (or holds NaN/Inf).
func choleskyLower(a []float64, d int) (l []float64, ok bool) {
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			sym.SetSym(j, i, a[i*d+j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return nil, false
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	l = make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			l[i*d+j] = lt.At(i, j)
		}
	}
	return l, true
}

// firstNonPDBlock returns the order k of the smallest leading k×k block
// of the symmetric d×d matrix a that is not positive definite, or 0 when a
// is positive definite, so a validation message can say where a
// precision fails. Leading blocks of a positive definite block are
// positive definite, so the failing order is found by bisection.
func firstNonPDBlock(a []float64, d int) int {
	pd := func(k int) bool {
		sub := make([]float64, k*k)
		for i := 0; i < k; i++ {
			copy(sub[i*k:(i+1)*k], a[i*d:i*d+k])
		}
		_, ok := choleskyLower(sub, k)
		return ok
	}
	if pd(d) {
		return 0
	}
	lo, hi := 0, d // block lo is PD (0 trivially), block hi is not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if pd(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
