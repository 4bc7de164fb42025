package main

import (
	"encoding/json"
	"fmt"
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

// --census lists the block programs of every (d, N) bucket of the run's
// support (each body block's forward and backward, the loss head's
// backward), at chunks no larger than the micro-batch, and totals them;
// the run's own flags (support, batch, precision, decoder) reach the
// programs listed.
func TestTrainCensus(t *testing.T) {
	base := []string{"--config", "small", "--d-max", "8", "--n-max", "64", "--batch", "4"}
	programs, tot := censusOf(t, base...)
	kinds := []string{"adapters forward", "adapters backward", "encoder_layer forward", "encoder_layer backward",
		"merge_block forward", "merge_block backward", "gaussian_loss backward"}
	want := map[string]bool{}
	for _, dn := range [][2]int{{4, 16}, {4, 64}, {8, 16}, {8, 64}} {
		for _, k := range kinds {
			want[fmt.Sprintf("%s d=%d N=%d", k, dn[0], dn[1])] = true
		}
	}
	var nodes, products int
	for _, p := range programs {
		key := fmt.Sprintf("%s d=%d N=%d", p.Program, p.D, p.N)
		if !want[key] || p.Tasks < 1 || p.Tasks > 4 || p.Nodes <= 0 || p.PeakBytes <= 0 || p.Runs < 1 {
			t.Errorf("unexpected program %+v", p)
		}
		delete(want, key)
		nodes += p.Nodes
		products += p.MatrixProducts
	}
	if len(want) != 0 {
		t.Errorf("programs not listed: %v", want)
	}
	if tot.Programs != len(programs) || tot.Nodes != nodes || tot.MatrixProducts != products {
		t.Errorf("totals %+v; the lines sum to %d programs, %d nodes, %d products", tot, len(programs), nodes, products)
	}
	for _, extra := range [][]string{{"--precision", "bf16"}} {
		_, other := censusOf(t, append(base, extra...)...)
		if other.Nodes <= tot.Nodes {
			t.Errorf("%v: %d nodes, not more than the plain run's %d", extra, other.Nodes, tot.Nodes)
		}
	}
	flow, _ := censusOf(t, "--config", "small", "--decoder", "flow", "--d-max", "3", "--n-max", "16", "--batch", "4")
	ds := map[int]bool{}
	for _, p := range flow {
		ds[p.D] = true
		if p.Program == "gaussian_loss backward" {
			t.Errorf("flow decoder lists %+v", p)
		}
	}
	if len(flow) != 3*7 || len(ds) != 3 {
		t.Errorf("flow decoder: %d programs over d %v; want 7 at each exact d ≤ 3", len(flow), ds)
	}
}
