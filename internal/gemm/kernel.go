package gemm

import (
	"strings"

	"golang.org/x/sys/cpu"
)

// Kernel names the matrix kernel Mul runs on this machine: "avx512" for
// the assembly micro-kernels, "generic" for the portable Go loop (other
// CPUs, no AVX-512, or the purego build tag).
func Kernel() string {
	if useAsm {
		return "avx512"
	}
	return "generic"
}

// CPUFeatures lists, comma-separated, the CPU features the kernels can
// use that this machine has ("avx512f,avx2,fma", "neon"), or "none".
func CPUFeatures() string {
	var fs []string
	for _, f := range []struct {
		has  bool
		name string
	}{
		{cpu.X86.HasAVX512F, "avx512f"},
		{cpu.X86.HasAVX2, "avx2"},
		{cpu.X86.HasFMA, "fma"},
		{cpu.ARM64.HasASIMD, "neon"},
	} {
		if f.has {
			fs = append(fs, f.name)
		}
	}
	if len(fs) == 0 {
		return "none"
	}
	return strings.Join(fs, ",")
}
