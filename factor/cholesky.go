package factor

import "github.com/afin-bench/afin/posterior"

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
		_, ok := posterior.Cholesky(sub, k, 0)
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
