package records

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
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

// A record's commit is the one stamped into the binary that wrote it,
// never the commit of the checkout it runs in; a binary without a stamp
// is named by its build (the SHA-256 of the executable), which differs
// between builds, so resuming one build's directory with another is
// refused as a commit mix is.
func TestProvenanceFromTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds three binaries")
	}
	tmp := t.TempDir()
	const pkg = "github.com/afin-bench/afin/internal/buildinfo"
	const stamped = "0123456789abcdef0123456789abcdef01234567"
	build := func(name, ldflags string) string {
		bin := filepath.Join(tmp, name)
		out, err := exec.Command("go", "build", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./testdata/provprobe").CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
		return bin
	}
	withCommit := build("with-commit", "-X "+pkg+".commit="+stamped)
	plainA := build("plain-a", "")
	plainB := build("plain-b", "-X main.variant=b")

	// Another checkout, with a commit of its own, as the working directory.
	repo := filepath.Join(tmp, "other-checkout")
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "unrelated")
	head := git("rev-parse", "HEAD")
	run := func(bin string) Provenance {
		cmd := exec.Command(bin)
		cmd.Dir = repo
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		var p Provenance
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatalf("%s printed %q: %v", bin, out, err)
		}
		return p
	}

	p := run(withCommit)
	if p.GitCommit != stamped || BinaryOf(p) != stamped[:12] {
		t.Errorf("stamped binary in another checkout (HEAD %s): commit %q, named %q; want its own %s", head[:12], p.GitCommit, BinaryOf(p), stamped[:12])
	}
	a1, a2, b := run(plainA), run(plainA), run(plainB)
	for _, q := range []Provenance{a1, b} {
		if q.GitCommit != "" || !strings.HasPrefix(q.Build, "sha256:") || !strings.HasPrefix(BinaryOf(q), "build ") {
			t.Errorf("unstamped binary in a checkout at %s: commit %q, build %q, named %q", head[:12], q.GitCommit, q.Build, BinaryOf(q))
		}
	}
	if a1.Build != a2.Build {
		t.Errorf("one binary, two builds: %q, %q", a1.Build, a2.Build)
	}
	if a1.Build == b.Build {
		t.Errorf("two builds share the name %q", a1.Build)
	}
	// Resuming build a's records with build b is refused, naming both;
	// with a again it is not.
	r := *rec("a", 0, 100, 0.1)
	r.Provenance = a1
	l := &Loaded{Records: []Record{r}}
	if err := CheckResume(l, "synthetic", a2); err != nil {
		t.Errorf("same build: %v", err)
	}
	err := CheckResume(l, "synthetic", b)
	if !errors.Is(err, ErrMixedCommits) || !strings.Contains(err.Error(), BinaryOf(a1)) || !strings.Contains(err.Error(), BinaryOf(b)) {
		t.Errorf("another build: %v", err)
	}
}
