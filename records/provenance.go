package records

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/afin-bench/afin/internal/buildinfo"
	"github.com/afin-bench/afin/internal/gemm"
)

// Provenance says where a record came from: enough to tell two runs
// apart and to rerun one.
type Provenance struct {
	GitCommit  string `json:"git_commit"`
	GitDirty   bool   `json:"git_dirty,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"` // sha256 of the AFIN checkpoint used
	Backend    string `json:"backend"`              // the network's engine: "native" or "gomlx:<GOMLX_BACKEND>"
	// Kernel is the matrix kernel of the native engine on this machine
	// ("avx512" or "generic", internal/gemm), CPUFeatures the CPU features
	// it could use: timings from different kernels are not comparable.
	// Empty in records written before they were recorded.
	Kernel      string `json:"kernel,omitempty"`
	CPUFeatures string `json:"cpu_features,omitempty"`
	Profile     string `json:"profile"`
	GoVersion   string `json:"go_version"`
	Host        string `json:"host,omitempty"`
	Shard       string `json:"shard,omitempty"`
	Time        string `json:"time"` // RFC 3339, when the record was written
}

// CurrentProvenance collects what is known about this process: the git
// commit (from `git rev-parse` in the working directory, else the one
// built into the binary, internal/buildinfo) and the host, with backend the engine the
// caller runs the network on (afin.Engine).
func CurrentProvenance(ctx context.Context, profile, backend string) Provenance {
	p := Provenance{
		Backend:     backend,
		Profile:     profile,
		GoVersion:   runtime.Version(),
		Kernel:      gemm.Kernel(),
		CPUFeatures: gemm.CPUFeatures(),
	}
	p.Host, _ = os.Hostname()
	p.GitCommit, p.GitDirty = gitCommit(ctx)
	return p
}

func gitCommit(ctx context.Context) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output(); err == nil {
		commit := strings.TrimSpace(string(out))
		dirty := false
		if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
			dirty = len(strings.TrimSpace(string(st))) > 0
		}
		return commit, dirty
	}
	// Not in a checkout (a cluster node running a copied binary): use the
	// commit stamped into the binary, by the go command or at link time.
	if rev, dirty, ok := buildinfo.Commit(); ok {
		return rev, dirty
	}
	return "unknown", false
}
