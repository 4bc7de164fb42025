//go:build !openblas || !cgo

// Package openblas wraps OpenBLAS's cblas_sgemm on one thread for
// side-by-side benchmarks; this build (no openblas tag or no cgo) has no
// OpenBLAS, and Sgemm panics.
package openblas

// Available reports whether OpenBLAS is linked into this build.
const Available = false

// CoreName is empty in this build.
func CoreName() string { return "" }

// Sgemm is unavailable in this build.
func Sgemm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	panic("openblas: built without -tags openblas")
}
