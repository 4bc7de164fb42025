package records

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/afin-bench/afin/internal/buildinfo"
	"github.com/afin-bench/afin/internal/gemm"
)

// Provenance says where a record came from: enough to tell two runs
// apart and to rerun one.
type Provenance struct {
	// GitCommit is the commit stamped into the binary that wrote the
	// record, "" when it carries none (records of older binaries say
	// "unknown"); GitDirty that its tree had uncommitted changes.
	GitCommit string `json:"git_commit"`
	GitDirty  bool   `json:"git_dirty,omitempty"`
	// Build is "sha256:<hex>" of the executable that wrote the record:
	// what names a binary without a commit, or one built from a modified
	// tree. Empty in records written before it was recorded.
	Build      string `json:"build,omitempty"`
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

// CurrentProvenance collects what is known about this process: the
// binary's own commit, as the go command's VCS stamp or the project's
// link-time stamp recorded it (internal/buildinfo), and the SHA-256 of the
// executable, which tells two builds apart when no commit was stamped or
// the tree was modified; with backend the engine the caller runs the
// network on (afin.Engine). The working directory's checkout is never
// asked: a binary run inside another checkout (or a copy of an older
// build run inside this one) would take that checkout's commit.
func CurrentProvenance(_ context.Context, profile, backend string) Provenance {
	p := Provenance{
		Backend:     backend,
		Profile:     profile,
		GoVersion:   runtime.Version(),
		Kernel:      gemm.Kernel(),
		CPUFeatures: gemm.CPUFeatures(),
	}
	p.Host, _ = os.Hostname()
	if rev, dirty, ok := buildinfo.Commit(); ok {
		p.GitCommit, p.GitDirty = rev, dirty
	}
	p.Build = buildinfo.Executable()
	return p
}

// BinaryOf names the build that wrote a record, the one key report, check
// and a resume compare (mixWarnings, CheckResume): the commit (12 hex
// digits) of a binary stamped from a clean tree; the commit with the
// build's hash when the tree was modified (two builds of one modified
// commit differ); "build <hash>" for a binary with no commit; "unknown"
// for a record that carries neither (written before builds were hashed,
// by a binary without a commit).
func BinaryOf(p Provenance) string {
	commit := p.GitCommit
	if commit == "unknown" {
		commit = "" // what binaries without a stamp used to write
	}
	build := strings.TrimPrefix(p.Build, "sha256:")
	switch {
	case commit != "" && p.GitDirty && build != "":
		return shortHash(commit) + " (modified; build " + shortHash(build) + ")"
	case commit != "":
		return shortHash(commit)
	case build != "":
		return "build " + shortHash(build)
	}
	return "unknown"
}

// commitLabel is BinaryOf's name with its kind, for sentences.
func commitLabel(b string) string {
	if strings.HasPrefix(b, "build ") {
		return b
	}
	return "commit " + b
}

// ErrMixedProfiles: a run would add records of one profile to a suite
// whose records in the directory were written at another.
var ErrMixedProfiles = errors.New("results of another profile")

// checkResumeProfile refuses to add records of suite at profile p.Profile
// to l when l's records of that suite carry another profile: the points a
// profile shares with another (a setting, seed, method and budget) would
// count as done, so its curves would hold the other profile's points.
func checkResumeProfile(l *Loaded, suite string, p Provenance) error {
	counts := map[string]int{}
	for i := range l.Records {
		if r := &l.Records[i]; r.Suite == suite && r.Provenance.Profile != p.Profile {
			counts[r.Provenance.Profile]++
		}
	}
	if len(counts) == 0 {
		return nil
	}
	var parts []string
	for _, prof := range sortedKeys(counts) {
		name := prof
		if name == "" {
			name = "(none recorded)"
		}
		parts = append(parts, fmt.Sprintf("%d at profile %s", counts[prof], name))
	}
	resume := "the directory's --profile"
	if others := sortedKeys(counts); len(others) == 1 && others[0] != "" {
		resume = "--profile " + others[0]
	}
	return fmt.Errorf("%w: the directory holds records of suite %s at another profile (%s) and this run is profile %s; "+
		"their shared points would count as done, so resume with %s, use a fresh --results directory, or pass --allow-mixed if the mix is intended",
		ErrMixedProfiles, suite, strings.Join(parts, ", "), p.Profile, resume)
}
