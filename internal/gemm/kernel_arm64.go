//go:build arm64 && !purego

package gemm

import (
	"strings"

	"golang.org/x/sys/cpu"
)

// rowBlock rows of C are finished (product, bias, activation) before the
// next rows start, so the activation pass finds them in L1; a multiple of
// panelMR.
const rowBlock = 48

var neonImpl = &impl{
	name: "neon",
	mul: func(p *Packed, c []float32, ldc int, a []float32, lda, m int, op Op) {
		p.mulPanels(neonPanel, siluGeneric, c, ldc, a, lda, m, op)
	},
	silu:     siluGeneric,
	addSiLU:  addSiLUGeneric,
	expSum:   expSumGeneric,
	siluGrad: siluGradGeneric,
}

var neonPanel = asmPanel(&neonKernels)

// archImpls: Advanced SIMD (NEON) is part of every arm64 CPU Go supports.
func archImpls() []*impl { return []*impl{neonImpl} }

func cpuFeatures() string {
	f := []string{"arm64: asimd"}
	if cpu.ARM64.HasFPHP {
		f = append(f, "fphp")
	}
	if cpu.ARM64.HasSVE {
		f = append(f, "sve")
	}
	return strings.Join(f, " ")
}
