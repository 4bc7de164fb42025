//go:build (amd64 || arm64) && !purego

package gemm

// panelFunc is an assembly panel kernel: C[mr×16] = A[mr×k]·B[k×16]
// (+bias when bias is not nil) (+C when acc ≠ 0), for a full 16-column
// panel B whose rows are bstride elements apart. Strides are in elements.
type panelFunc func(a *float32, lda int, b *float32, bstride int, k int, c *float32, ldc int, bias *float32, acc int)

// asmPanel adapts a table of assembly panel kernels (indexed by mr).
func asmPanel(ks *[panelMR + 1]panelFunc) panelKernel {
	return func(mr int, a []float32, lda int, b []float32, bstride, k int, c []float32, ldc int, bias []float32, acc bool) {
		var bp *float32
		if bias != nil {
			bp = &bias[0]
		}
		ai := 0
		if acc {
			ai = 1
		}
		ks[mr](&a[0], lda, &b[0], bstride, k, &c[0], ldc, bp, ai)
	}
}
