package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// TestExternalMethodsInASuite runs three external methods through a
// benchmark on the conjugate synthetic settings: one that draws from the
// exact posterior (methods/testdata/extexact, with exact's random stream)
// is scored exactly as the built-in exact method would be; one that
// crashes and one that hangs fail their units, leave failed records with
// the reason, and the suite finishes. A resume does not rerun the failed
// units; --retry-failed does, and the rerun's success supersedes them.
func TestExternalMethodsInASuite(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "extexact")
	if out, err := exec.Command("go", "build", "-o", bin, "../methods/testdata/extexact").CombinedOutput(); err != nil {
		t.Fatalf("building extexact: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "methods.json")
	writeMethodsFile(t, file, map[string]methods.ExecSpec{
		"exactly": {Command: []string{bin}},
		"crash":   {Command: []string{bin, "-mode", "crash"}},
		"hang":    {Command: []string{bin, "-mode", "hang"}, Timeout: "2s"},
	})
	all, err := Settings("synthetic")
	if err != nil {
		t.Fatal(err)
	}
	var conj []Setting
	for _, s := range all {
		if s.Likelihood == factor.LinGaussianFamily && (s.Prior == factor.DiagGaussianFamily || s.Prior == factor.FullRankGaussianFamily) && s.Group != "hard" {
			conj = append(conj, s)
		}
	}
	prof, _ := GetProfile("smoke")
	var log bytes.Buffer
	cfg := Config{Suite: "synthetic", Profile: prof, Results: filepath.Join(dir, "results"), Settings: conj,
		Methods: []string{"exec:exactly", "exec:crash", "exec:hang"}, Env: &methods.Env{MethodsFile: file},
		RefCacheDir: filepath.Join(dir, "cache"), Log: &log}
	sum, err := Run(context.Background(), cfg)
	if sum == nil || sum.Ran != len(conj) || sum.Failed != 2*len(conj) {
		t.Fatalf("summary %+v, error %v; want %d units run and %d failed\n%s", sum, err, len(conj), 2*len(conj), log.String())
	}
	if err == nil || !strings.Contains(err.Error(), "unit(s) failed") {
		t.Errorf("error %v, want the failed units reported", err)
	}
	for _, want := range []string{"sampler diverged at iteration 17", "timed out after 2s"} {
		if strings.Count(log.String(), want) != len(conj) {
			t.Errorf("log lacks %q per setting:\n%s", want, log.String())
		}
	}
	slots := len(prof.NUTSDraws)
	checkFailedRecords(t, cfg.Results, map[string]string{
		"exec:crash": "sampler diverged at iteration 17",
		"exec:hang":  "timed out after 2s",
	}, len(conj)*slots)
	recs, err := records.ReadDir(cfg.Results)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Method == "exec:exactly" {
			checkScoredLikeExact(t, &cfg, r)
		}
	}

	// Resume: the failed units finished (with a failure); nothing reruns.
	sum, err = Run(context.Background(), cfg)
	if err != nil || sum.Ran != 0 || sum.Failed != 0 || sum.PrevFailed != 2*len(conj) || sum.Skipped != sum.Units {
		t.Fatalf("resume: summary %+v, error %v; want every unit skipped, %d of them failed earlier", sum, err, 2*len(conj))
	}

	// The crashing method is fixed; --retry-failed reruns its units.
	writeMethodsFile(t, file, map[string]methods.ExecSpec{"crash": {Command: []string{bin}}})
	cfg.Methods, cfg.RetryFailed = []string{"exec:crash"}, true
	sum, err = Run(context.Background(), cfg)
	if err != nil || sum.Ran != len(conj) || sum.Failed != 0 {
		t.Fatalf("retry: summary %+v, error %v; want %d units rerun", sum, err, len(conj))
	}
	l, err := records.Load(cfg.Results)
	if err != nil || l.ConflictError() != nil || l.Superseded != len(conj)*slots {
		t.Fatalf("after retry: %v, %v, %d superseded; want the failures superseded, no conflict", err, l.ConflictError(), l.Superseded)
	}
	for _, r := range l.Records {
		if r.Method == "exec:crash" && (r.Failed() || !(r.M1 >= 0)) {
			t.Errorf("after retry %s: error %q, m1 %v; want the rerun's success", r.Key(), r.Error, r.M1)
		}
	}
}

func writeMethodsFile(t *testing.T, path string, specs map[string]methods.ExecSpec) {
	t.Helper()
	data, err := json.Marshal(methods.MethodsFile{Methods: specs})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkFailedRecords checks that each failing method left want failed
// records naming the reason, with NaN metrics in memory and none on disk.
func checkFailedRecords(t *testing.T, dir string, reasons map[string]string, want int) {
	t.Helper()
	l, err := records.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range l.Failures() {
		reason, ok := reasons[r.Method]
		if !ok || !strings.Contains(r.Error, reason) || !math.IsNaN(float64(r.SW2)) || records.BinaryOf(r.Provenance) == "unknown" {
			t.Errorf("failed record %s: error %q, sw2 %v, binary %q", r.Key(), r.Error, r.SW2, records.BinaryOf(r.Provenance))
		}
		count[r.Method]++
	}
	for m := range reasons {
		if count[m] != want {
			t.Errorf("%s: %d failed records, want %d (one per slot)", m, count[m], want)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "synthetic.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.Contains(line, `"error":`) && strings.Contains(line, `"m1":`) {
			t.Errorf("failed record carries metrics on disk: %s", line)
		}
	}
}

// checkScoredLikeExact recomputes a record with the built-in exact method
// at the unit's seed and compares the scores.
func checkScoredLikeExact(t *testing.T, cfg *Config, r records.Record) {
	t.Helper()
	var s Setting
	for _, c := range cfg.Settings {
		if c.Key == r.Setting {
			s = c
		}
	}
	task, err := BaseSuite{}.Task(cfg, s, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := CachedReference(cfg.RefCacheDir)(context.Background(), task, cfg.Profile)
	if err != nil {
		t.Fatal(err)
	}
	exact, _ := methods.New("exact", nil)
	job := &methods.Job{Task: task, Seed: UnitSeed(r.Setting, r.Seed, r.Method, ""), Ladder: []int{r.Budget}}
	var d *posterior.Draws
	if err := exact.Run(context.Background(), job, func(p methods.Point) error { d = p.Draws; return nil }); err != nil {
		t.Fatal(err)
	}
	mean, cov := d.MeanCov()
	m1, m2 := momentErrors(d, mean, cov, ref)
	sw2 := posterior.SW2(d, ref.Draws, hashString("sw2", r.Setting, "0"))
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"m1", float64(r.M1), m1}, {"m2", float64(r.M2), m2}, {"sw2", float64(r.SW2), sw2}} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s budget %d: %s = %v, exact gives %v", r.Setting, r.Budget, c.name, c.got, c.want)
		}
	}
	if r.Method != "exec:exactly" || r.Reference.Kind != "exact" || r.Diagnostics["ext_draws"] != records.Num(r.Budget) {
		t.Errorf("record %s: reference %s, diagnostics %v", r.Key(), r.Reference.Kind, r.Diagnostics)
	}
}

// ladderOfKind is the named suite's ladder for a budget kind under p
// (nil for a suite not registered).
func (p *Profile) ladderOfKind(name, kind string) []int {
	s, err := lookupSuite(name)
	if err != nil {
		return nil
	}
	return s.Ladder(p, kind)
}
