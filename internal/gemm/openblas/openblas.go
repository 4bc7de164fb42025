//go:build openblas && cgo

// Package openblas wraps OpenBLAS's cblas_sgemm on one thread. It exists
// only so benchmarks can put afin's kernels beside the machine's
// attainable single-core rate in one run; nothing in the product links
// it. Build with -tags openblas (needs libopenblas-dev and cgo).
package openblas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import "unsafe"

func init() {
	// One thread: the comparison is per core, like afin's kernels.
	C.openblas_set_num_threads(1)
}

// CoreName is the kernel set OpenBLAS chose for this CPU (or was told
// to use by OPENBLAS_CORETYPE), e.g. "Haswell" or "SkylakeX".
func CoreName() string { return C.GoString(C.openblas_get_corename()) }

// Available reports whether OpenBLAS is linked into this build.
const Available = true

// Sgemm computes C[m×n] = A[m×k]·B[k×n] (+C when accumulate), row-major
// with strides lda, ldb, ldc in elements.
func Sgemm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	beta := C.float(0)
	if accumulate {
		beta = 1
	}
	C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, C.CblasNoTrans, C.blasint(m), C.blasint(n), C.blasint(k),
		1, (*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda), (*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb),
		beta, (*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}
