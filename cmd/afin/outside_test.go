package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/bench"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reports"
)

// storeFromBaseline writes, for every entry of the built-in smoke
// baseline, as many records as it counts runs with its mean metrics: a
// results directory the gate passes.
func storeFromBaseline(t *testing.T, dir, ckHash string) {
	t.Helper()
	base, err := reports.ParseBaseline(bench.SmokeBaseline(), "smoke")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{"afin-snis": "proposals", "frvi-snis": "proposals", "frvi": "steps", "iaf": "steps", "maf": "steps", "nsf": "steps"}
	var recs []records.Record
	for _, e := range base.Entries {
		kind := kinds[e.Method]
		if kind == "" {
			kind = "draws"
		}
		for i := range e.Runs {
			recs = append(recs, records.Record{Suite: e.Suite, Setting: "s/" + string(rune('a'+i)) + "/easy", Group: "easy",
				Method: e.Method, Variant: e.Variant, Stage: e.Stage, BudgetKind: kind, Budget: e.Budget,
				M1: records.Num(e.Metrics["m1"]), M2: records.Num(e.Metrics["m2"]), SW2: records.Num(e.Metrics["sw2"]), Seconds: 1,
				Provenance: records.Provenance{GitCommit: "c0ffee", Profile: "smoke"}})
			if strings.HasPrefix(e.Method, "afin") || e.Method == "auto" {
				recs[len(recs)-1].Provenance.Checkpoint = ckHash
			}
		}
	}
	os.MkdirAll(dir, 0o755)
	f, err := os.Create(filepath.Join(dir, "synthetic.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := records.WriteRecords(f, recs); err != nil {
		t.Fatal(err)
	}
}

// check and report behave the same inside the repository and in any
// other directory: the gate's default baseline and the shipped
// checkpoint's training log are built into the binary (check used to
// fail outside with "reading baseline", and the report said "training
// compute: not recorded").
func TestCheckAndReportOutsideTheRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(t.TempDir(), "res")
	ckHash, err := checkpoint.Hash(filepath.Join(root, "checkpoints", afin.DefaultCheckpointName))
	if err != nil {
		t.Fatal(err)
	}
	storeFromBaseline(t, res, ckHash)
	t.Setenv("AFIN_CHECKPOINT", "")
	t.Setenv("AFIN_CACHE_DIR", t.TempDir())
	compute := regexp.MustCompile(`Training compute: [^<]*`)
	type outcome struct {
		check          int
		stdout, stderr string
		report         int
		compute        string
	}
	runIn := func(dir string) outcome {
		t.Chdir(dir)
		var o outcome
		o.check, o.stdout, o.stderr = runCLI("check", "--results", res)
		out := filepath.Join(t.TempDir(), "report")
		var rerr string
		o.report, _, rerr = runCLI("report", "--results", res, "--out", out, "--quiet")
		if o.report != 0 {
			t.Fatalf("report in %s: exit %d: %s", dir, o.report, rerr)
		}
		page, err := os.ReadFile(filepath.Join(out, "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		o.compute = compute.FindString(string(page))
		return o
	}
	inside := runIn(root)
	if inside.check != 0 || !strings.Contains(inside.stdout, "accuracy gate passed") {
		t.Fatalf("check in the repository: exit %d\n%s%s", inside.check, inside.stdout, inside.stderr)
	}
	if !strings.Contains(inside.compute, "steps in") {
		t.Fatalf("report in the repository: %q, want the training steps and hours", inside.compute)
	}
	t.Logf("inside: %s", inside.compute)
	outside := runIn(t.TempDir())
	if outside.check != inside.check || outside.stdout != inside.stdout {
		t.Errorf("check outside the repository: exit %d, want %d\n%s%s", outside.check, inside.check, outside.stdout, outside.stderr)
	}
	if outside.compute != inside.compute {
		t.Errorf("report outside the repository says %q, inside %q", outside.compute, inside.compute)
	}
}
