package records

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/internal/gemm"
)

// Every record carries the matrix kernel and CPU features of the machine
// that wrote it; they survive the store, records of the first schema
// (without them) still load, and a suite mixing kernels is warned about
// (its timings compare unlike runs) while one mixing old and new records
// is not.
func TestProvenanceKernel(t *testing.T) {
	p := CurrentProvenance(context.Background(), "smoke", "native")
	if p.Kernel != gemm.Kernel() || p.CPUFeatures != gemm.CPUFeatures() || p.Kernel == "" || p.CPUFeatures == "" {
		t.Fatalf("provenance kernel %q features %q, want %q %q", p.Kernel, p.CPUFeatures, gemm.Kernel(), gemm.CPUFeatures())
	}
	dir := t.TempDir()
	st, err := OpenStore(dir, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i, kernel := range []string{"avx512", "generic", ""} {
		r := rec("a", uint64(i), 10, 0.5)
		r.Provenance = p
		r.Provenance.Kernel = kernel
		if err := st.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	data, err := os.ReadFile(filepath.Join(dir, "x.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"kernel":`); n != 2 {
		t.Errorf("%d records name a kernel, want 2 (none for the empty one):\n%s", n, data)
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{l.Records[0].Provenance.Kernel, l.Records[1].Provenance.Kernel, l.Records[2].Provenance.Kernel}
	slices.Sort(got)
	if !slices.Equal(got, []string{"", "avx512", "generic"}) || l.Records[0].Provenance.CPUFeatures != p.CPUFeatures {
		t.Errorf("kernels read back %q, features %q", got, l.Records[0].Provenance.CPUFeatures)
	}
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "mixes records of 2 kernels (avx512: 1, generic: 1)") {
		t.Errorf("warnings %q lack the mixed kernels", w)
	}
	old, err := ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range old {
		if r.Provenance.Kernel != "" {
			t.Errorf("first-schema record has kernel %q", r.Provenance.Kernel)
		}
	}
	if w := mixWarnings(append(old, Record{Suite: old[0].Suite, Provenance: Provenance{Profile: old[0].Provenance.Profile, GitCommit: old[0].Provenance.GitCommit, Checkpoint: old[0].Provenance.Checkpoint, Kernel: "avx512"}})); slices.ContainsFunc(w, func(s string) bool { return strings.Contains(s, "kernels") }) {
		t.Errorf("old records without a kernel beside a new one: warnings %q", w)
	}
}
