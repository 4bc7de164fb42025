//go:build !amd64 || purego

package gemm

// useAsm is false: this build has no assembly kernels.
var useAsm = false

func (p *Packed) mulAsm(c []float32, ldc int, a []float32, lda, m int, op Op) {
	p.mulGeneric(c, ldc, a, lda, m, op)
}

func siluVec(x []float32)            { siluGeneric(x) }
func addSiLUVec(dst, a, b []float32) { addSiLUGeneric(dst, a, b) }

func expSumVec(x []float32, m float32) float32 { return expSumGeneric(x, m) }

func siluGradVec(dz, da, z []float32) { siluGradGeneric(dz, da, z) }
