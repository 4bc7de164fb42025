package gemm

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestKernelNames: Kernel follows the path Mul takes (flipped as the
// other tests flip it), and CPUFeatures lists exactly the features
// x/sys/cpu reports, AVX-512F whenever the assembly runs.
func TestKernelNames(t *testing.T) {
	orig := useAsm
	defer func() { useAsm = orig }()
	for _, asm := range []bool{false, true} {
		if asm && !orig {
			continue // no AVX-512 here (or not amd64)
		}
		useAsm = asm
		want := map[bool]string{false: "generic", true: "avx512"}[asm]
		if got := Kernel(); got != want {
			t.Errorf("useAsm=%v: Kernel() = %q, want %q", asm, got, want)
		}
	}
	got := strings.Split(CPUFeatures(), ",")
	var want []string
	for _, f := range []struct {
		has  bool
		name string
	}{{cpu.X86.HasAVX512F, "avx512f"}, {cpu.X86.HasAVX2, "avx2"}, {cpu.X86.HasFMA, "fma"}, {cpu.ARM64.HasASIMD, "neon"}} {
		if f.has {
			want = append(want, f.name)
		}
	}
	if len(want) == 0 {
		want = []string{"none"}
	}
	if !slices.Equal(got, want) {
		t.Errorf("CPUFeatures() = %q, want %q", CPUFeatures(), strings.Join(want, ","))
	}
	if orig && !slices.Contains(got, "avx512f") {
		t.Errorf("the assembly kernel runs but CPUFeatures() = %q lacks avx512f", CPUFeatures())
	}
	if runtime.GOARCH == "arm64" && !slices.Contains(got, "neon") {
		t.Errorf("arm64 without neon: %q", CPUFeatures())
	}
	t.Logf("kernel %s, features %s", Kernel(), CPUFeatures())
}
