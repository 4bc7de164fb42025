package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/posterior"
)

func mtRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cliRun(t, append([]string{"metrics"}, args...)...)
}

func mtFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMetricsCommand(t *testing.T) {
	dir := t.TempDir()
	// q: atoms (0,0) and (2,2) with weights ¼, ¾ → mean (1.5, 1.5),
	// weighted covariance 0.75·[[1,1],[1,1]].
	q := mtFile(t, dir, "q.csv", "z1,z2,w\n0,0,1\n2,2,3\n")
	// ref: (1,1), (1,−1), (−1,1), (−1,−1) → mean 0, covariance (4/3)·I.
	ref := mtFile(t, dir, "ref.csv", "z1,z2\n1,1\n1,-1\n-1,1\n-1,-1\n")
	// Task with log p̃(z) = −‖z‖² + const: N(0, I) prior, one Gaussian
	// factor at y = 0 with σ = 1.
	task := mtFile(t, dir, "task.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},
		"factors":[{"type":"gaussian","y":[0,0],"sigma":1}]}`)

	wantM1 := math.Sqrt(2 * 1.5 * 1.5)
	wantM2 := math.Sqrt(2*math.Pow(0.75-4.0/3, 2) + 2*0.75*0.75)
	// E_q‖z‖² = ¾·8 = 6, E_ref‖z‖² = 2.
	wantGap := 6.0 - 2.0

	// SW2 has no closed form over its random directions: the command must
	// give what posterior.SW2 (checked against closed forms in its own
	// package) gives on these draws, weights honoured, at the seed given.
	qd := &posterior.Draws{D: 2, Z: []float64{0, 0, 2, 2}, W: []float64{0.25, 0.75}}
	refd := &posterior.Draws{D: 2, Z: []float64{1, 1, 1, -1, -1, 1, -1, -1}}
	unweighted := &posterior.Draws{D: 2, Z: qd.Z}
	for _, seed := range []uint64{0, 3} {
		if w, u := posterior.SW2(qd, refd, seed), posterior.SW2(unweighted, refd, seed); math.Abs(w-u) < 0.1 {
			t.Fatalf("seed %d: weighted SW2 %v and unweighted %v too close for the test to tell them apart", seed, w, u)
		}
	}

	cases := []struct {
		name    string
		args    []string
		wantGap bool
		seed    uint64
	}{
		{"plain", []string{"--draws", q, "--ref", ref, "--json"}, false, 0},
		{"with task", []string{"--draws", q, "--ref", ref, "--task", task, "--seed", "3", "--json"}, true, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := mtRun(t, c.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var got map[string]float64
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			if math.Abs(got["m1"]-wantM1) > 1e-12 || math.Abs(got["m2"]-wantM2) > 1e-12 {
				t.Errorf("m1 %v m2 %v, want %v %v", got["m1"], got["m2"], wantM1, wantM2)
			}
			if want := posterior.SW2(qd, refd, c.seed); math.Abs(got["sw2"]-want) > 1e-12*want {
				t.Errorf("sw2 = %v, want %v (weighted, seed %d)", got["sw2"], want, c.seed)
			}
			gap, has := got["energy_gap"]
			if has != c.wantGap {
				t.Fatalf("energy_gap present = %v, want %v (%s)", has, c.wantGap, out)
			}
			if has && math.Abs(gap-wantGap) > 1e-12 {
				t.Errorf("energy_gap = %v, want %v", gap, wantGap)
			}
			wantKeys := 3
			if c.wantGap {
				wantKeys = 4
			}
			if len(got) != wantKeys {
				t.Errorf("keys %v", got)
			}
		})
	}

	// Same file twice: every metric is zero.
	code, out, _ := mtRun(t, "--draws", ref, "--ref", ref, "--task", task, "--json")
	if code != 0 || out != `{"m1":0,"m2":0,"sw2":0,"energy_gap":0}`+"\n" {
		t.Errorf("self comparison: exit %d, %s", code, out)
	}
	code, out, _ = mtRun(t, "--draws", q, "--ref", ref)
	if code != 0 || !strings.Contains(out, "m1 ") || !strings.Contains(out, "sw2 ") {
		t.Errorf("text output: exit %d, %q", code, out)
	}
}

func TestMetricsCommandBadInput(t *testing.T) {
	dir := t.TempDir()
	good := mtFile(t, dir, "good.csv", "z1,z2\n0,1\n1,0\n")
	d3 := mtFile(t, dir, "d3.csv", "z1,z2,z3\n0,1,2\n2,1,0\n")
	one := mtFile(t, dir, "one.csv", "z1,z2\n0,1\n")
	huge := mtFile(t, dir, "huge.csv", "z1,z2\n1e300,1e300\n-1e300,-1e300\n")
	blank := mtFile(t, dir, "blank.csv", "")
	nanF := mtFile(t, dir, "nan.csv", "z1,z2\n0,NaN\n")
	header := mtFile(t, dir, "header.csv", "a,b\n0,1\n")
	empty := mtFile(t, dir, "empty.csv", "z1,z2\n")
	negW := mtFile(t, dir, "negw.csv", "z1,z2,w\n0,1,-1\n")
	task3 := mtFile(t, dir, "task3.json", `{"d":3,"prior":{"type":"diag_gaussian","loc":[0,0,0],"scale":[1,1,1]},"factors":[]}`)
	badTask := mtFile(t, dir, "bad.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,-1]},"factors":[]}`)
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"no ref", []string{"--draws", good}, "required"},
		{"missing file", []string{"--draws", filepath.Join(dir, "nope.csv"), "--ref", good}, "nope.csv"},
		{"NaN value", []string{"--draws", nanF, "--ref", good}, "not finite"},
		{"bad header", []string{"--draws", good, "--ref", header}, "header"},
		{"no rows", []string{"--draws", empty, "--ref", good}, "no rows"},
		{"negative weight", []string{"--draws", negW, "--ref", good}, "negative weight"},
		{"dimension mismatch", []string{"--draws", good, "--ref", d3}, "d=2"},
		{"task dimension", []string{"--draws", good, "--ref", good, "--task", task3}, "--task has d=3"},
		{"invalid task", []string{"--draws", good, "--ref", good, "--task", badTask}, "prior.scale"},
		{"one draw", []string{"--draws", one, "--ref", good}, "need at least 2"},
		{"overflow", []string{"--draws", huge, "--ref", good}, "too large in magnitude"},
		{"overflow text output", []string{"--draws", huge, "--ref", good, "--json=false"}, "too large in magnitude"},
		{"empty file", []string{"--draws", blank, "--ref", good}, "is empty"},
		{"unknown flag", []string{"--draws", good, "--ref", good, "--bogus"}, "bogus"},
		{"stray argument", []string{"--draws", good, "--ref", good, "extra"}, "extra"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := mtRun(t, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errs)
			}
			if !strings.Contains(errs, c.msg) {
				t.Errorf("stderr %q does not mention %q", errs, c.msg)
			}
			if n := strings.Count(errs, "\n"); n != 1 {
				t.Errorf("stderr has %d lines, want one: %q", n, errs)
			}
		})
	}
	if code, _, _ := mtRun(t, "--help"); code != 0 {
		t.Errorf("--help exit %d", code)
	}
}
