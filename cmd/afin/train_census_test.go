package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin"
)

// censusOf runs `afin train --census` with args and returns its program
// lines and its totals line.
func censusOf(t *testing.T, args ...string) ([]afin.ProgramCensus, censusTotals) {
	t.Helper()
	code, out, errs := cliRun(t, append([]string{"train", "--census"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var programs []afin.ProgramCensus
	for _, l := range lines[:len(lines)-1] {
		var p afin.ProgramCensus
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("%v: line %q: %v", args, l, err)
		}
		programs = append(programs, p)
	}
	var tot struct {
		Total censusTotals `json:"total"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &tot); err != nil {
		t.Fatalf("%v: totals %q: %v", args, lines[len(lines)-1], err)
	}
	return programs, tot.Total
}

// --census lists one program per (d, N) bucket of the run's support, at
// chunks no larger than the micro-batch, and totals them; the run's own
// flags (support, batch, remat, precision) reach the programs listed.
func TestTrainCensus(t *testing.T) {
	base := []string{"--config", "small", "--d-max", "8", "--n-max", "64", "--batch", "4"}
	programs, tot := censusOf(t, base...)
	want := map[[2]int]bool{{4, 16}: true, {4, 64}: true, {8, 16}: true, {8, 64}: true}
	var nodes, products int
	for _, p := range programs {
		if !want[[2]int{p.D, p.N}] || p.Program != "gaussian_loss" || p.Tasks < 1 || p.Tasks > 4 || p.Nodes <= 0 || p.MatrixProducts <= 0 || p.PeakBytes <= 0 {
			t.Errorf("unexpected program %+v", p)
		}
		delete(want, [2]int{p.D, p.N})
		nodes += p.Nodes
		products += p.MatrixProducts
	}
	if len(want) != 0 {
		t.Errorf("buckets not listed: %v", want)
	}
	if tot.Programs != len(programs) || tot.Nodes != nodes || tot.MatrixProducts != products {
		t.Errorf("totals %+v; the lines sum to %d programs, %d nodes, %d products", tot, len(programs), nodes, products)
	}
	for _, extra := range [][]string{{"--remat"}, {"--precision", "bf16"}} {
		_, other := censusOf(t, append(base, extra...)...)
		if other.Nodes <= tot.Nodes {
			t.Errorf("%v: %d nodes, not more than the plain run's %d", extra, other.Nodes, tot.Nodes)
		}
	}
	code, _, errs := cliRun(t, "train", "--census", "--config", "small", "--decoder", "flow")
	if code != 2 || !strings.Contains(errs, "unpadded") {
		t.Errorf("flow decoder: exit %d, stderr %q; want exit 2 saying its programs are unpadded", code, errs)
	}
}
