package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin"
)

func TestTrainDryRunCounts(t *testing.T) {
	tests := []struct {
		config, decoder string
		want            int
	}{
		{"paper", "gaussian", 4550011},
		{"paper", "flow", 5051458},
	}
	for _, tc := range tests {
		code, out, errs := cliRun(t, "train", "--config", tc.config, "--decoder", tc.decoder, "--dry-run", "--json")
		if code != 0 {
			t.Fatalf("%s/%s: exit %d: %s", tc.config, tc.decoder, code, errs)
		}
		var got struct {
			Params  int            `json:"trainable_params"`
			Modules map[string]int `json:"modules"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, v := range got.Modules {
			sum += v
		}
		if got.Params != tc.want || sum != tc.want {
			t.Errorf("%s/%s: %d params (modules sum %d), want %d", tc.config, tc.decoder, got.Params, sum, tc.want)
		}
	}
}

func TestTrainFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"train", "--config", "huge", "--dry-run"}, `config "huge"`},
		{[]string{"train", "--decoder", "spline", "--dry-run"}, `decoder "spline"`},
		{[]string{"train", "--steps", "3"}, "--out is required"},
	}
	for _, tc := range tests {
		code, _, errs := cliRun(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, errs, tc.msg)
		}
	}
}

// Train two steps of the small network (each decoder), then run both AFIN
// methods on the resulting checkpoint through the CLI.
func TestTrainThenInferAFIN(t *testing.T) {
	for _, dec := range []string{"gaussian", "flow"} {
		t.Run(dec, func(t *testing.T) { trainThenInfer(t, dec) })
	}
}

func trainThenInfer(t *testing.T, decoder string) {
	dir := filepath.Join(t.TempDir(), "ck")
	code, _, errs := cliRun(t, "train", "--config", "small", "--decoder", decoder, "--steps", "2", "--batch", "2", "--micro-batches", "2",
		"--d-max", "3", "--n-max", "4", "--warmup", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	path, task := fdSimulated(t, "--prior", "diag_gaussian", "--likelihood", "lin_gaussian", "--d", "3", "--n", "10", "--seed", "2")
	for _, tc := range []struct {
		method   string
		extra    []string
		weighted bool
		n        int
	}{
		{"afin", []string{"--draws", "300"}, false, 300},
		{"afin-snis", []string{"--proposals", "400"}, true, 400},
	} {
		csv := filepath.Join(t.TempDir(), "draws.csv")
		args := append([]string{"infer", "--method", tc.method, "--task", path, "--checkpoint", dir, "--json", "--draws-out", csv}, tc.extra...)
		code, out, errs := cliRun(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.method, code, errs)
		}
		var res inferOut
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res.D != task.D || len(res.Mean) != task.D || len(res.Cov) != task.D || res.NDraws != tc.n || res.Weighted != tc.weighted {
			t.Fatalf("%s: unexpected result %s", tc.method, out)
		}
		fwd, _ := res.Diagnostics["forward_seconds"].(float64)
		samp, _ := res.Diagnostics["sampling_seconds"].(float64)
		if !(fwd > 0) || samp < 0 || res.Seconds < fwd+samp || res.Diagnostics["decoder"] != decoder {
			t.Errorf("%s: seconds %g, forward %g, sampling %g", tc.method, res.Seconds, fwd, samp)
		}
		if tc.weighted {
			for _, k := range []string{"pareto_k", "max_weight", "entropy_ratio", "ess"} {
				if _, ok := res.Diagnostics[k]; !ok {
					t.Errorf("%s: diagnostics lack %s", tc.method, k)
				}
			}
		}
	}
	code, _, errs = cliRun(t, "infer", "--method", "afin-snis", "--task", path, "--checkpoint", dir, "--proposals", "1")
	if code != 2 || !strings.Contains(errs, "--proposals") {
		t.Errorf("--proposals 1: exit %d, %q", code, errs)
	}
	code, _, errs = cliRun(t, "infer", "--method", "afin", "--task", path, "--checkpoint", filepath.Join(dir, "missing"))
	if code != 2 || !strings.Contains(errs, filepath.Join(dir, "missing", "config.json")) {
		t.Errorf("missing checkpoint: exit %d, %q; want bad input naming its config.json", code, errs)
	}
}

// A resumed run keeps the stored settings; only flags given again change.
func TestTrainResumeKeepsSettings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	code, _, errs := cliRun(t, "train", "--config", "small", "--steps", "2", "--batch", "2", "--micro-batches", "1",
		"--lr", "5e-4", "--d-max", "2", "--n-max", "3", "--warmup", "1", "--workers", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	code, _, errs = cliRun(t, "train", "--resume", "--steps", "3", "--out", dir)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	if _, opts, _, err := afin.CheckpointInfo(dir); err != nil || opts.Workers != 2 {
		t.Fatalf("a resume without --workers changed the stored count: %+v, %v", opts, err)
	}
	// A run moved to a bigger machine takes the workers it is given.
	code, _, errs = cliRun(t, "train", "--resume", "--steps", "3", "--workers", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	cfg, opts, step, err := afin.CheckpointInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if step != 3 || opts.Steps != 3 || opts.BatchTasks != 2 || opts.MicroBatch != 1 || opts.LR != 5e-4 || opts.DMax != 2 || opts.Workers != 1 || cfg.Name != "small" {
		t.Errorf("after resume: step %d, options %+v, config %s", step, opts, cfg.Name)
	}
}
