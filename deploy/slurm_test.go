package deploy

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	// The records name methods; the catalogue knows the ones linked.
	_ "github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
)

// TestSlurmArrayMatchesUnsharded submits slurm-bench.sh as a 3-task job
// array to a one-node Slurm cluster started on this machine
// (slurm-local.sh), merges the shards and compares them with an
// unsharded run of the same suite, unit by unit. It needs root and
// Debian's slurm-wlm and munge, so it runs only when AFIN_SLURM_TEST=1
// (`go tool task test:slurm`, and CI).
func TestSlurmArrayMatchesUnsharded(t *testing.T) {
	if os.Getenv("AFIN_SLURM_TEST") != "1" {
		t.Skip("set AFIN_SLURM_TEST=1 to start a local Slurm cluster (go tool task test:slurm)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "afin")
	run(t, "go", "build", "-o", bin, "../cmd/afin")
	// One reference cache for both runs: references are deterministic, and
	// computing each once keeps the test short.
	t.Setenv("AFIN_CACHE_DIR", filepath.Join(dir, "cache"))
	t.Setenv("GOMLX_BACKEND", "go")

	whole := filepath.Join(dir, "unsharded")
	run(t, bin, "bench", "--suite", "synthetic", "--profile", "smoke", "--results", whole)
	sharded := filepath.Join(dir, "sharded")
	out := run(t, "./slurm-local.sh", bin, sharded, "3", "synthetic", "smoke")
	t.Logf("Slurm log:\n%s", out)

	files, _ := filepath.Glob(filepath.Join(sharded, "synthetic.shard-*-of-003.jsonl"))
	if len(files) != 3 {
		t.Fatalf("want 3 shard files, got %v", files)
	}
	if diffs := compareRuns(t, whole, sharded); len(diffs) > 0 {
		for _, d := range diffs[:min(len(diffs), 20)] {
			t.Error(d)
		}
		t.Fatalf("%d difference(s) between the sharded and the unsharded run", len(diffs))
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// compareRuns lists how the records of two results directories differ,
// unit by unit: the same record keys, and per record the same metrics and
// diagnostics. Seconds (the record's and the diagnostics' timing parts),
// times and the shard label legitimately differ.
func compareRuns(t *testing.T, a, b string) []string {
	t.Helper()
	ra, err := records.ReadDir(a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := records.ReadDir(b)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]records.Record{}
	for _, r := range rb {
		byKey[r.Key()] = r
	}
	var diffs []string
	units := map[string]bool{}
	for _, x := range ra {
		units[x.UnitKey()] = true
		y, ok := byKey[x.Key()]
		if !ok {
			diffs = append(diffs, "missing from the sharded run: "+x.Key())
			continue
		}
		delete(byKey, x.Key())
		diffs = append(diffs, compareRecord(x, y)...)
	}
	for k := range byKey {
		diffs = append(diffs, "only in the sharded run: "+k)
	}
	sort.Strings(diffs)
	t.Logf("compared %d records of %d units", len(ra), len(units))
	if len(ra) == 0 {
		diffs = append(diffs, "the unsharded run wrote no records")
	}
	return diffs
}

func compareRecord(x, y records.Record) []string {
	var out []string
	check := func(what string, p, q records.Num) {
		// Both runs are the same deterministic computation; the tolerance
		// only absorbs the last bit of float formatting.
		if !(p == q || math.Abs(float64(p-q)) <= 1e-12*math.Max(1, math.Abs(float64(p)))) &&
			!(math.IsNaN(float64(p)) && math.IsNaN(float64(q))) {
			out = append(out, fmt.Sprintf("%s: %s %v vs %v", x.Key(), what, p, q))
		}
	}
	check("m1", x.M1, y.M1)
	check("m2", x.M2, y.M2)
	check("sw2", x.SW2, y.SW2)
	for k, v := range x.Diagnostics {
		if strings.HasSuffix(k, "seconds") {
			continue // wall-clock parts of the cost
		}
		check("diagnostics."+k, v, y.Diagnostics[k])
	}
	if len(x.Diagnostics) != len(y.Diagnostics) {
		out = append(out, fmt.Sprintf("%s: diagnostics %v vs %v", x.Key(), x.Diagnostics, y.Diagnostics))
	}
	if x.Reference.Hash != y.Reference.Hash || x.Reference.Kind != y.Reference.Kind {
		out = append(out, fmt.Sprintf("%s: reference %+v vs %+v", x.Key(), x.Reference, y.Reference))
	}
	return out
}
