package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchEstimate: --estimate prints a suite's units and CPU-hours by
// method and references and the largest of N shards, runs nothing, and
// refuses more shards than units naming the useful number.
func TestBenchEstimate(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"paper snis on 64 shards", []string{"--suite", "snis", "--profile", "paper", "--shards", "64"}, 0,
			[]string{"suite snis: 576 units on 144 tasks", "afin-snis", "frvi-snis (10k)", "references (NUTS)", "64 shards: largest", "--time="}},
		{"every suite", []string{"--suite", "all", "--profile", "quick"}, 0,
			[]string{"suite synthetic:", "suite calibration:", "all suites:"}},
		{"a time limit picks the shard count", []string{"--suite", "synthetic", "--profile", "paper", "--time-limit", "1h"}, 0,
			[]string{"shards: largest"}},
		{"too many shards", []string{"--suite", "snis", "--profile", "quick", "--shards", "1000"}, 2,
			[]string{"more shards than units", "at most 192"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runCLI(append([]string{"bench", "--estimate", "--results", "/nonexistent/never-written"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, out, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+stderr, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, stderr)
				}
			}
		})
	}
}

// TestBenchEstimateJSON: the JSON a script reads (deploy/slurm-submit.sh)
// has the largest shard and a Slurm time limit covering it.
func TestBenchEstimateJSON(t *testing.T) {
	code, out, stderr := runCLI("bench", "--estimate", "--estimate-json", "--suite", "synthetic", "--profile", "paper", "--shards", "16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var e struct {
		Units     int     `json:"units"`
		Shards    int     `json:"shards"`
		Largest   float64 `json:"largest_shard_cpu_hours"`
		Mean      float64 `json:"mean_shard_cpu_hours"`
		Total     float64 `json:"cpu_hours"`
		SlurmTime string  `json:"slurm_time"`
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if e.Units != 576 || e.Shards != 16 || !(e.Largest >= e.Mean) || !(e.Mean > 0) || e.SlurmTime == "" {
		t.Errorf("estimate %+v", e)
	}
}

func TestSlurmTime(t *testing.T) {
	tests := []struct {
		seconds float64
		want    string
	}{
		{0, "0-00:01:00"}, {59, "0-00:01:00"}, {61, "0-00:02:00"}, {3600, "0-01:00:00"}, {90000, "1-01:00:00"},
	}
	for _, tc := range tests {
		if got := slurmTime(tc.seconds); got != tc.want {
			t.Errorf("slurmTime(%g) = %s, want %s", tc.seconds, got, tc.want)
		}
	}
}

// TestBenchRefusesMoreShardsThanUnits: a run with more shards than units
// is refused before any work, naming the most that is useful.
func TestBenchRefusesMoreShardsThanUnits(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI("bench", "--suite", "snis", "--profile", "quick", "--shard", "5/1000", "--results", dir)
	if code != 2 || !strings.Contains(stderr, "more shards than units") || !strings.Contains(stderr, "at most 192") {
		t.Fatalf("exit %d, stderr %q; want exit 2 naming 192", code, stderr)
	}
}
