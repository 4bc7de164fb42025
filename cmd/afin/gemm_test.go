package main

import (
	"strings"
	"testing"

	"github.com/afin-bench/afin/internal/gemm"
)

// TestUseGemmKernel: AFIN_GEMM selects any kernel this CPU runs, and
// refuses unknown names and kernels the CPU lacks with a message naming
// the variable and the kernels that are available.
func TestUseGemmKernel(t *testing.T) {
	def := gemm.Kernel()
	defer func() {
		if err := gemm.Use(def); err != nil {
			t.Fatal(err)
		}
	}()
	if err := useGemmKernel(""); err != nil || gemm.Kernel() != def {
		t.Fatalf("unset: %v, kernel %s, want %s", err, gemm.Kernel(), def)
	}
	for _, k := range gemm.Kernels() {
		if err := useGemmKernel(k); err != nil || gemm.Kernel() != k {
			t.Errorf("%s: %v, kernel %s", k, err, gemm.Kernel())
		}
	}
	bad := []string{"sse", "AVX2", "avx 2"}
	for _, k := range []string{"avx512", "avx2", "neon"} {
		if !strings.Contains(strings.Join(gemm.Kernels(), " "), k) {
			bad = append(bad, k) // not on this CPU
		}
	}
	for _, k := range bad {
		err := useGemmKernel(k)
		if err == nil {
			t.Errorf("%s accepted (kernel now %s)", k, gemm.Kernel())
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "AFIN_GEMM="+k) || !strings.Contains(msg, "generic") {
			t.Errorf("%s: error %q should name the variable and the available kernels", k, msg)
		}
	}
}
