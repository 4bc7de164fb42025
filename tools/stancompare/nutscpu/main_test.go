package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/factor"
)

func smallTask(t *testing.T) *factor.Task {
	t.Helper()
	task, err := factor.Simulate(rand.New(rand.NewPCG(3, 1)), factor.SimOptions{
		D: 2, N: 16, Prior: factor.DiagGaussianFamily,
		Likelihoods: []string{factor.BernoulliLogitFamily}, Design: factor.DesignIID,
	})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// The timed run must be the very run `afin infer` makes: keeping draws
// through OnDraw with Discard may not change the random streams.
func TestDiscardKeepsTheSameDraws(t *testing.T) {
	task := smallTask(t)
	cfg := nuts.Config{Warmup: 100, Draws: 50, Chains: 2, Seed: 7, Init: task.Prior.Location()}
	want, err := nuts.Sample(context.Background(), task, task.D, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]float64, cfg.Chains)
	cfg.Discard = true
	cfg.OnDraw = func(c int, z []float64) { got[c] = append(got[c], z...) }
	res, err := nuts.Sample(context.Background(), task, task.D, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for c := range got {
		if !slices.Equal(got[c], want.Chains[c]) {
			t.Fatalf("chain %d: draws differ with Discard+OnDraw", c)
		}
	}
	if res.GradEvals != want.GradEvals {
		t.Fatalf("grad evals %d, want %d", res.GradEvals, want.GradEvals)
	}
}

func TestRun(t *testing.T) {
	data, err := factor.MarshalTask(smallTask(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "task.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"ok", []string{"--task", path, "--warmup", "100", "--draws", "100", "--chains", "2"}, ""},
		{"no task", []string{"--draws", "100"}, "--task is required"},
		{"too few draws", []string{"--task", path, "--draws", "2"}, "--draws >= 4"},
		{"missing file", []string{"--task", path + ".nope"}, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(tc.args, &out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				CPUSeconds float64 `json:"cpu_seconds"`
				GradEvals  int64   `json:"grad_evals"`
				ESSBulk    float64 `json:"ess_bulk"`
				Rhat       float64 `json:"rhat"`
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("output %q: %v", out.String(), err)
			}
			// 2 chains × 200 transitions take at least one gradient each.
			if got.GradEvals < 400 || got.CPUSeconds < 0 || !(got.ESSBulk > 0) || !(got.Rhat > 0.9 && got.Rhat < 1.2) {
				t.Fatalf("implausible result %+v", got)
			}
		})
	}
}
