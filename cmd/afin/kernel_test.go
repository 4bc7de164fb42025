package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/gemm"
)

func TestGenericKernelNote(t *testing.T) {
	for _, c := range []struct {
		engine, kernel string
		want           bool
	}{
		{"native", "generic", true},
		{"native", "avx512", false},
		{"gomlx:go", "generic", false},
		{"gomlx:/opt/xla_cuda_plugin.so", "avx512", false},
	} {
		note := genericKernelNote(c.engine, c.kernel, "avx2,fma")
		if got := note != ""; got != c.want {
			t.Errorf("%s on %s: note %q, want one: %v", c.engine, c.kernel, note, c.want)
		}
		if c.want && (!strings.Contains(note, "generic (portable Go) matrix kernel") || !strings.Contains(note, "CPU features: avx2,fma")) {
			t.Errorf("note %q does not name the kernel and the features", note)
		}
	}
}

// `afin version` names the engine, the kernel and the CPU features this
// process runs the network with, in text and JSON.
func TestVersion(t *testing.T) {
	code, out, errs := runCLI("version")
	if code != 0 || !strings.Contains(out, "kernel "+gemm.Kernel()+" (CPU features: "+gemm.CPUFeatures()+")") ||
		!strings.Contains(out, "engine "+engineChoice().String()) || !strings.HasPrefix(out, "afin ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runCLI("version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %q %q", code, err, out, errs)
	}
	if v.Kernel != gemm.Kernel() || v.CPUFeatures != gemm.CPUFeatures() || v.Engine != engineChoice().String() || v.Go == "" || v.Arch == "" {
		t.Errorf("version %+v", v)
	}
	if code, _, errs := runCLI("version", "extra"); code != 2 || strings.Count(errs, "\n") != 1 {
		t.Errorf("stray argument: exit %d, stderr %q", code, errs)
	}
}

// `afin infer --json` with an AFIN method names the engine, kernel and CPU
// features among its diagnostics; the generic-kernel note appears on
// stderr exactly when the native engine ran on the generic kernel.
func TestInferJSONKernel(t *testing.T) {
	path, _ := blTaskFile(t, 1, factor.DiagGaussianFamily, factor.LinGaussianFamily, 3, 20)
	for _, method := range []string{"afin", "afin-snis"} {
		code, out, errs := runCLI("infer", "--method", method, "--task", path, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", method, code, errs)
		}
		dg := blDecode(t, out).Diagnostics
		if dg["kernel"] != gemm.Kernel() || dg["cpu_features"] != gemm.CPUFeatures() || dg["engine"] != engineChoice().String() {
			t.Errorf("%s: diagnostics kernel %v, cpu_features %v, engine %v", method, dg["kernel"], dg["cpu_features"], dg["engine"])
		}
		want := 0
		if genericKernelNote(engineChoice().String(), gemm.Kernel(), gemm.CPUFeatures()) != "" {
			want = 1
		}
		if n := strings.Count(errs, "matrix kernel"); n != want {
			t.Errorf("%s: the kernel note appears %d times on stderr, want %d: %q", method, n, want, errs)
		}
	}
}

// The portable build (-tags purego, what a CPU without AVX-512 runs) says
// so: version and the diagnostics name the generic kernel, and an AFIN run
// prints the note once.
func TestGenericKernelBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "afin")
	if out, err := exec.Command("go", "build", "-tags", "purego", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	var v versionInfo
	if err != nil || json.Unmarshal(out, &v) != nil || v.Kernel != "generic" || v.CPUFeatures == "" {
		t.Fatalf("version --json: %v %q", err, out)
	}
	path, _ := blTaskFile(t, 1, factor.DiagGaussianFamily, factor.LinGaussianFamily, 3, 20)
	cmd := exec.Command(bin, "infer", "--method", "afin-snis", "--task", path, "--json")
	cmd.Env = append(cmd.Environ(), "AFIN_ENGINE=native")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("infer: %v, stderr %q", err, stderr.String())
	}
	if dg := blDecode(t, string(out)).Diagnostics; dg["kernel"] != "generic" || dg["engine"] != "native" {
		t.Errorf("diagnostics kernel %v engine %v, want generic native", dg["kernel"], dg["engine"])
	}
	if n := strings.Count(stderr.String(), "generic (portable Go) matrix kernel"); n != 1 {
		t.Errorf("the note appears %d times, want once: %q", n, stderr.String())
	}
}
