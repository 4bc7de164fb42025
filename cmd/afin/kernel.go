package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/afin-bench/afin/internal/buildinfo"
	"github.com/afin-bench/afin/internal/gemm"
)

// genericKernelNote is the line a run of the native engine on the
// portable matrix kernel prints on stderr ("" for any other run): its
// timings are several times those of the AVX-512 kernel.
func genericKernelNote(engine, kernel, features string) string {
	if engine != "native" || kernel != "generic" {
		return ""
	}
	return fmt.Sprintf("the native engine runs on the generic (portable Go) matrix kernel: this CPU or build has no AVX-512 kernel (CPU features: %s); "+
		"expect the network several times slower, and timings not comparable with avx512 runs", features)
}

// noteKernel prints genericKernelNote once per invocation.
func (env *cliEnv) noteKernel() {
	if env.kernelNoted {
		return
	}
	env.kernelNoted = true
	if n := genericKernelNote(engineChoice().String(), gemm.Kernel(), gemm.CPUFeatures()); n != "" {
		fmt.Fprintln(env.stderr, "afin: note:", n)
	}
}

// versionInfo is what `afin version --json` prints.
type versionInfo struct {
	Version     string `json:"version"` // the module version, "(devel)" for a checkout build
	Commit      string `json:"commit,omitempty"`
	Modified    bool   `json:"modified,omitempty"`
	Build       string `json:"build,omitempty"` // sha256 of this executable, as records carry it
	Go          string `json:"go"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Engine      string `json:"engine"`
	Kernel      string `json:"kernel"`
	CPUFeatures string `json:"cpu_features"`
}

func currentVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		Engine: engineChoice().String(), Kernel: gemm.Kernel(), CPUFeatures: gemm.CPUFeatures()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
	}
	v.Commit, v.Modified, _ = buildinfo.Commit()
	v.Build = buildinfo.Executable()
	return v
}

// runVersion prints the build and what the network runs on here.
func runVersion(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "version", "[--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v := currentVersion()
	if *asJSON {
		return writeJSON(env.stdout, v)
	}
	commit := v.Commit
	if commit == "" {
		commit = "unknown commit"
	}
	if v.Modified {
		commit += " (modified)"
	}
	if v.Commit == "" || v.Modified {
		// What names this binary in its records (records.BinaryOf).
		commit += ", build " + v.Build
	}
	fmt.Fprintf(env.stdout, "afin %s, %s\n%s %s/%s\nengine %s\nkernel %s (CPU features: %s)\n",
		v.Version, commit, v.Go, v.OS, v.Arch, v.Engine, v.Kernel, v.CPUFeatures)
	return nil
}
