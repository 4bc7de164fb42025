package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
)

func TestReferenceCommandCache(t *testing.T) {
	path, task := blTaskFile(t, 3, factor.DiagStudentTFamily, factor.BernoulliLogitFamily, 2, 30)
	dir := t.TempDir()
	args := []string{"reference", "--task", path, "--draws", "4000", "--warmup", "300", "--chains", "2", "--subsample", "1000", "--cache-dir", dir}
	code, out, errs := cliRun(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "cache miss") {
		t.Errorf("first run should report a cache miss:\n%s", out)
	}
	code, out, errs = cliRun(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r referenceOutput
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !r.CacheHit || r.Kind != "nuts" || r.D != task.D || r.NDraws != 1000 {
		t.Errorf("second run: %+v, want a nuts cache hit with 1000 draws", r)
	}
	code, out, _ = cliRun(t, args...)
	if code != 0 || !strings.Contains(out, "cache hit") {
		t.Errorf("third run should say cache hit:\n%s", out)
	}
	// Without --cache-dir the CLI passes $AFIN_CACHE_DIR down.
	t.Setenv("AFIN_CACHE_DIR", dir)
	code, out, _ = cliRun(t, args[:len(args)-2]...)
	if code != 0 || !strings.Contains(out, "cache hit") {
		t.Errorf("$AFIN_CACHE_DIR run should say cache hit:\n%s", out)
	}
}

func TestReferenceCommandExactAndErrors(t *testing.T) {
	path, _ := blTaskFile(t, 4, factor.DiagGaussianFamily, factor.LinGaussianFamily, 3, 10)
	csv := filepath.Join(t.TempDir(), "ref.csv")
	code, out, errs := cliRun(t, "reference", "--task", path, "--subsample", "500", "--draws-out", csv, "--cache-dir", t.TempDir())
	if code != 0 || !strings.Contains(out, "exact") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errs)
	}
	if _, err := os.Stat(csv); err != nil {
		t.Error(err)
	}
	if code, _, errs := cliRun(t, "reference", "--task", path, "--profile", "huge"); code != 2 || !strings.Contains(errs, "profile") {
		t.Errorf("bad profile: exit %d, %q", code, errs)
	}
	if code, _, _ := cliRun(t, "reference"); code != 2 {
		t.Errorf("missing --task: exit %d, want 2", code)
	}
	// Too short to converge: refused with the numbers, exit 1.
	nc, _ := blTaskFile(t, 5, factor.DiagLaplaceFamily, factor.BinomialLogitFamily, 3, 20)
	code, _, errs = cliRun(t, "reference", "--task", nc, "--draws", "40", "--warmup", "10", "--chains", "2", "--subsample", "40", "--cache-dir", t.TempDir())
	if code != 1 || !strings.Contains(errs, "not converged") || !strings.Contains(errs, "ESS") {
		t.Errorf("unconverged: exit %d, stderr %q", code, errs)
	}
}
