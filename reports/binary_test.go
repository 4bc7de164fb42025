package reports

import (
	"testing"

	"github.com/afin-bench/afin/records"
)

// The report's provenance line names the binary as resume and check do:
// two unstamped builds must not both read "commit unknown".
func TestBinaryLabel(t *testing.T) {
	const c = "0123456789abcdef0123"
	const b = "sha256:fedcba9876543210fedc"
	for _, tc := range []struct {
		name string
		p    records.Provenance
		want string
	}{
		{"stamped", records.Provenance{GitCommit: c, Build: b}, "commit 0123456789ab"},
		{"unstamped", records.Provenance{GitCommit: "unknown", Build: b}, "build fedcba987654"},
		{"modified", records.Provenance{GitCommit: c, GitDirty: true, Build: b}, "commit 0123456789ab (modified; build fedcba987654)"},
		{"old dirty record", records.Provenance{GitCommit: c, GitDirty: true}, "commit 0123456789ab (dirty)"},
		{"nothing", records.Provenance{}, "commit unknown"},
	} {
		if got := binaryLabel(tc.p); got != tc.want {
			t.Errorf("%s: binaryLabel = %q, want %q", tc.name, got, tc.want)
		}
	}
}
