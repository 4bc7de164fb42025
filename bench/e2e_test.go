package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/afin-bench/afin/records"
)

// These tests drive the real afin binary as separate processes: a full
// smoke run, a run killed with SIGKILL half-way and resumed, and three
// shard processes sharing one results directory.

// buildAfin compiles cmd/afin into a temporary directory.
func buildAfin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "afin")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/afin-bench/afin/cmd/afin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building afin: %v\n%s", err, out)
	}
	return bin
}

func afinCmd(bin, cache string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "AFIN_CACHE_DIR="+cache, "GOMLX_BACKEND=go")
	// Run from the module root so the shipped checkpoint resolves.
	cmd.Dir = ".."
	return cmd
}

func runAfin(t *testing.T, bin, cache string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := afinCmd(bin, cache, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("afin %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func countLines(path string) int {
	data, _ := os.ReadFile(path)
	return bytes.Count(data, []byte("\n"))
}

// TestEndToEndSmokeKillResumeShards runs the smoke suite through the
// binary: uninterrupted, then killed half-way with a torn line and
// resumed, then as three concurrent shards; the last two must reproduce
// the first's records exactly.
func TestEndToEndSmokeKillResumeShards(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary and runs the smoke suite several times")
	}
	bin := buildAfin(t)
	cache := t.TempDir()
	base := []string{"bench", "--suite", "synthetic", "--profile", "smoke"}
	full := e2eFullRun(t, bin, cache, base)

	// The kill and shard runs use the two cheapest methods to keep the
	// test short; their records must equal those of the full run.
	base = append(base, "--methods", "nuts,frvi")
	want := map[string][3]float64{}
	for k, v := range metricsByKey(t, full) {
		if strings.Contains(k, "|nuts|") || strings.Contains(k, "|frvi|") {
			want[k] = v
		}
	}
	e2eKillResume(t, bin, cache, base, want)
	e2eShards(t, bin, cache, base, want)
}

// e2eFullRun is the uninterrupted smoke run: it covers all 48 settings
// for every method it could run. It returns the results directory.
func e2eFullRun(t *testing.T, bin, cache string, base []string) string {
	t.Helper()
	full := t.TempDir()
	start := time.Now()
	out := runAfin(t, bin, cache, append(base, "--results", full, "--json")...)
	t.Logf("uninterrupted smoke run (references computed): %v", time.Since(start))
	var sum struct{ Units, Failed, Records int }
	if err := json.Unmarshal([]byte(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, out)
	}
	recs, err := records.ReadDir(full)
	if err != nil {
		t.Fatal(err)
	}
	settingsPer := map[string]map[string]bool{}
	for _, r := range recs {
		m := r.Method + "/" + r.Variant
		if settingsPer[m] == nil {
			settingsPer[m] = map[string]bool{}
		}
		settingsPer[m][r.Setting] = true
	}
	if len(settingsPer) < 2 {
		t.Fatalf("only %d methods ran: %v", len(settingsPer), out)
	}
	for m, s := range settingsPer {
		if len(s) != 48 {
			t.Errorf("method %s covered %d of 48 settings", m, len(s))
		}
	}
	t.Logf("methods: %d, records: %d", len(settingsPer), len(recs))
	return full
}

// e2eKillResume kills a run half-way (SIGKILL), leaves a torn line behind
// and resumes: the records must be want's, each once.
func e2eKillResume(t *testing.T, bin, cache string, base []string, want map[string][3]float64) {
	t.Helper()
	killed := t.TempDir()
	file := filepath.Join(killed, "synthetic.jsonl")
	cmd := afinCmd(bin, cache, append(base, "--results", killed)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for half the records however long that takes on this machine,
	// or for the run's end (then the check below fails: not half-way).
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	for countLines(file) < len(want)/2 && !closed(exited) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL; an error means the run had ended
	<-exited
	before := countLines(file)
	if before == 0 || before >= len(want) {
		t.Fatalf("killed run had written %d of %d records: not half-way", before, len(want))
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"suite":"synthetic","setting":"diag_gaussian/lin_gau`)
	f.Close()
	runAfin(t, bin, cache, append(base, "--results", killed)...)
	if got := metricsByKey(t, killed); !reflect.DeepEqual(got, want) {
		t.Errorf("killed+resumed run: %d records, uninterrupted: %d; or values differ", len(got), len(want))
	}
	if n := countLines(file); n != len(want) {
		t.Errorf("resumed file has %d lines for %d records (duplicates or torn lines)", n, len(want))
	}
}

// e2eShards runs three shard processes at once into one directory: the
// merged records must be want's.
func e2eShards(t *testing.T, bin, cache string, base []string, want map[string][3]float64) {
	t.Helper()
	sharded := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	outs := make([][]byte, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := afinCmd(bin, cache, append(base, "--results", sharded, "--shard", []string{"0/3", "1/3", "2/3"}[i])...)
			outs[i], errs[i] = c.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, outs[i])
		}
	}
	if got := metricsByKey(t, sharded); !reflect.DeepEqual(got, want) {
		t.Errorf("merged shards: %d records, unsharded: %d; or values differ", len(got), len(want))
	}
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
