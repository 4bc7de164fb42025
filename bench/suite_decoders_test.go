package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reports"
	"github.com/afin-bench/afin/suite"
)

// fixtureRuns holds the authors'-format run directories of issue 14 (a
// small configuration with random weights), in the repository.
var fixtureRuns = filepath.Join("..", "testdata", "torch-afin")

// importFixtures imports the Gaussian and flow fixture runs into
// checkpoints under a temporary directory.
func importFixtures(t *testing.T) DecoderCheckpoints {
	t.Helper()
	if _, err := os.Stat(fixtureRuns); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ck := DecoderCheckpoints{Gaussian: filepath.Join(dir, "gaussian"), Flow: filepath.Join(dir, "flow")}
	for dec, out := range map[string]string{"gaussian": ck.Gaussian, "flow": ck.Flow} {
		if _, err := afin.ImportRun(filepath.Join(fixtureRuns, "run-"+dec), out); err != nil {
			t.Fatalf("importing the %s fixture: %v", dec, err)
		}
	}
	return ck
}

// The decoders suite on the imported fixture checkpoints at the smoke
// profile (numbers meaningless, plumbing tested): both decoders run AFIN
// and AFIN+SNIS on the same tasks, their records carry the decoder as
// variant and their own checkpoint hash, and the report has Table 2.
func TestDecodersSuiteOnFixtures(t *testing.T) {
	ck := importFixtures(t)
	p, err := GetProfile("smoke")
	if err != nil {
		t.Fatal(err)
	}
	all, err := Settings(DecodersSuite)
	if err != nil {
		t.Fatal(err)
	}
	var settings []Setting
	for _, s := range all {
		if s.Prior == "diag_gaussian" && s.Likelihood == "lin_gaussian" && s.Group != "medium" {
			settings = append(settings, s) // conjugate: exact references, fast
		}
	}
	results := t.TempDir()
	cfg := Config{Suite: DecodersSuite, Profile: p, Results: results, Settings: settings, RefCacheDir: t.TempDir(), SuiteFlags: ck.SuiteFlags()}
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Per decoder and setting: AFIN 1 point, AFIN+SNIS 2 budgets + star.
	if want := 2 * len(settings) * (1 + len(p.SNISProposals) + 1); sum.Records != want || sum.Failed != 0 {
		t.Fatalf("summary %+v, want %d records", sum, want)
	}
	recs, err := records.ReadDir(results)
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{}
	for _, r := range recs {
		if r.Suite != DecodersSuite || (r.Variant != "gaussian" && r.Variant != "flow") {
			t.Fatalf("record %s/%s/%s", r.Suite, r.Method, r.Variant)
		}
		if h, ok := hashes[r.Variant]; ok && h != r.Provenance.Checkpoint {
			t.Errorf("%s records of two checkpoints", r.Variant)
		}
		hashes[r.Variant] = r.Provenance.Checkpoint
	}
	if hashes["gaussian"] == hashes["flow"] {
		t.Errorf("both decoders' records carry checkpoint %q", hashes["gaussian"])
	}
	rep, err := reports.Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	var table2 *reports.Table
	for _, tb := range rep.Tables() {
		if tb.Name == "table2_decoders" {
			table2 = tb
		}
	}
	// (2 tiers + overall) × 2 decoders × (AFIN, AFIN+SNIS), plus the
	// paper's overall AFIN row per decoder.
	if table2 == nil || len(table2.Rows) != 3*2*2+2 {
		t.Fatalf("table 2: %+v", table2)
	}
	paperRows := 0
	for _, r := range table2.Rows {
		if strings.HasPrefix(r[2].Text, "paper: ") {
			paperRows++
		}
	}
	if paperRows != 2 {
		t.Errorf("table 2 has %d paper rows, want one per decoder", paperRows)
	}
}

// The decoders suite refuses, before any work, a missing checkpoint and a
// checkpoint given for the other decoder.
func TestDecoderCheckpointsCheck(t *testing.T) {
	ck := importFixtures(t)
	tests := []struct {
		name string
		ck   DecoderCheckpoints
		ok   bool
	}{
		{"both right", ck, true},
		{"no flow checkpoint", DecoderCheckpoints{Gaussian: ck.Gaussian}, false},
		{"swapped", DecoderCheckpoints{Gaussian: ck.Flow, Flow: ck.Gaussian}, false},
		{"not a checkpoint", DecoderCheckpoints{Gaussian: t.TempDir(), Flow: ck.Flow}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.ck.Check()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrDecoderCheckpoint)) {
				t.Errorf("Check: %v", err)
			}
		})
	}
	// The suite's plans run each method once per decoder, the decoder
	// being the variant.
	p, _ := GetProfile("smoke")
	variants := map[string]int{}
	for _, pl := range p.Plans(DecodersSuite) {
		variants[pl.Variant]++
	}
	if len(variants) != 2 || variants["gaussian"] != 2 || variants["flow"] != 2 {
		t.Errorf("decoders plans by variant: %v", variants)
	}
}

// TestDecoderSNISLadder: under the paper profile the decoders suite's
// AFIN+SNIS stops at 10⁵ proposals, for its own plans and for a plugged-in
// method counting proposals, while the snis suite keeps the paper's 10⁷.
func TestDecoderSNISLadder(t *testing.T) {
	p, err := GetProfile("paper")
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range p.Plans(DecodersSuite) {
		if pl.Method == methods.AFINSNIS && slices.Max(pl.Ladder) != 100_000 {
			t.Errorf("decoders %s (%s) ladder %v, want it to stop at 1e5", pl.Method, pl.Variant, pl.Ladder)
		}
	}
	s, err := lookupSuite(DecodersSuite)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Ladder(p, methods.KindProposals); !slices.Equal(got, p.DecoderSNISProposals) {
		t.Errorf("decoders proposals ladder %v, want %v", got, p.DecoderSNISProposals)
	}
	if got := s.Ladder(p, methods.KindSteps); !slices.Equal(got, p.FRVISteps) {
		t.Errorf("decoders steps ladder %v, want %v", got, p.FRVISteps)
	}
	for _, pl := range p.Plans(suite.SNIS) {
		if slices.Max(pl.Ladder) != 10_000_000 {
			t.Errorf("snis %s ladder %v, want the paper's 1e7", pl.Method, pl.Ladder)
		}
	}
}
