package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// blTaskFile simulates a task and writes it as task JSON in a temp dir.
func blTaskFile(t *testing.T, seed uint64, prior, lik string, d, n int) (string, *factor.Task) {
	t.Helper()
	task, err := factor.Simulate(rand.New(rand.NewPCG(seed, 11)), factor.SimOptions{D: d, N: n, Prior: prior, Likelihoods: []string{lik}, Design: factor.DesignIID})
	if err != nil {
		t.Fatal(err)
	}
	data, err := factor.MarshalTask(task)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "task.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, task
}

// inferOut is `afin infer --json` as a script reads it.
type inferOut struct {
	Method      string         `json:"method"`
	D           int            `json:"d"`
	NDraws      int            `json:"n_draws"`
	Seconds     float64        `json:"seconds"`
	Mean        []float64      `json:"mean"`
	Cov         [][]float64    `json:"cov"`
	Weighted    bool           `json:"weighted"`
	Diagnostics map[string]any `json:"diagnostics"`
}

func blDecode(t *testing.T, s string) inferOut {
	t.Helper()
	var r inferOut
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return r
}

func TestInferNUTSJSON(t *testing.T) {
	path, task := blTaskFile(t, 1, factor.DiagGaussianFamily, factor.BernoulliLogitFamily, 3, 40)
	csv := filepath.Join(t.TempDir(), "draws.csv")
	code, out, errs := cliRun(t, "infer", "--method", "nuts", "--task", path, "--warmup", "300", "--draws", "400",
		"--chains", "2", "--seed", "7", "--json", "--draws-out", csv)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := blDecode(t, out)
	if r.Method != "nuts" || r.D != task.D || r.NDraws != 400 || r.Weighted || len(r.Cov) != task.D {
		t.Errorf("unexpected result header: %+v", r)
	}
	for _, k := range []string{"divergences", "accept_rate", "step_size", "ess_bulk", "rhat", "grad_evals"} {
		if _, ok := r.Diagnostics[k]; !ok {
			t.Errorf("diagnostics lack %q: %v", k, r.Diagnostics)
		}
	}
	if rh, _ := r.Diagnostics["rhat"].(float64); !(rh > 0.99 && rh < 1.05) {
		t.Errorf("rhat %v implausible", r.Diagnostics["rhat"])
	}
	if _, err := os.Stat(csv); err != nil {
		t.Errorf("draws CSV not written: %v", err)
	}
	// Same seed, same answer; the dense metric also runs.
	_, out2, _ := cliRun(t, "infer", "--method", "nuts", "--task", path, "--warmup", "300", "--draws", "400",
		"--chains", "2", "--seed", "7", "--json")
	if r2 := blDecode(t, out2); math.Abs(r2.Mean[0]-r.Mean[0]) != 0 {
		t.Errorf("same seed gave means %v and %v", r.Mean, r2.Mean)
	}
	if code, _, errs := cliRun(t, "infer", "--method", "nuts", "--task", path, "--warmup", "100", "--draws", "100", "--dense-mass", "--json"); code != 0 {
		t.Errorf("dense mass: exit %d: %s", code, errs)
	}
}

func TestInferNUTSBadFlags(t *testing.T) {
	path, _ := blTaskFile(t, 1, factor.DiagGaussianFamily, factor.LinGaussianFamily, 2, 5)
	for _, args := range [][]string{
		{"--chains", "0"},
		{"--draws", "2"},
		{"--warmup", "-1"},
		{"--max-depth", "0"},
	} {
		code, _, errs := cliRun(t, append([]string{"infer", "--method", "nuts", "--task", path}, args...)...)
		if code != 2 || !strings.Contains(errs, strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the flag", args, code, errs)
		}
	}
}
