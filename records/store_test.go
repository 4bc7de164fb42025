package records

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func rec(setting string, seed uint64, budget int, sw2 float64) *Record {
	return &Record{Suite: "synthetic", Setting: setting, Seed: seed, Method: "nuts", BudgetKind: "draws", Budget: budget, SW2: Num(sw2)}
}

func TestStoreTornTailAndDedup(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenStore(dir, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := st.Append(rec("a", 0, 10*(i+1), 0.5)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Append(rec("a", 0, 10, 0.9)); err != nil { // same key: skipped
		t.Fatal(err)
	}
	st.Close()
	path := filepath.Join(dir, "x.jsonl")
	// A crash mid-write leaves a line without its newline.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"suite":"synthetic","setting":"b","se`)
	f.Close()

	recs, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].SW2 != 0.5 {
		t.Fatalf("read %d records (first sw2 %v), want 3 with the first write kept", len(recs), recs[0].SW2)
	}
	st, err = OpenStore(dir, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Has(rec("a", 0, 20, 0).Key()) || st.Has(rec("b", 0, 10, 0).Key()) {
		t.Error("Has disagrees with the file")
	}
	if err := st.Append(rec("b", 0, 10, 0.1)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Fatalf("file has %d lines after resume, want 4:\n%s", n, data)
	}
	if _, err := ReadDir(dir); err != nil {
		t.Fatalf("file unreadable after resume: %v", err)
	}
	// Subdirectories are merged too (results/<suite>/...); hidden ones
	// (a reference cache) are not.
	sub := filepath.Join(dir, "snis")
	os.MkdirAll(sub, 0o755)
	os.MkdirAll(filepath.Join(dir, ".cache"), 0o755)
	os.WriteFile(filepath.Join(dir, ".cache", "junk.jsonl"), []byte("junk\n"), 0o644)
	st2, err := OpenStore(sub, "snis.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := rec("z", 0, 5, 0.2)
	r.Suite = "snis"
	st2.Append(r)
	st2.Close()
	if recs, err := ReadDir(dir); err != nil || len(recs) != 5 {
		t.Fatalf("merged %d records (%v), want 5", len(recs), err)
	}
	if recs, err := ReadDir(filepath.Join(dir, "absent")); err != nil || len(recs) != 0 {
		t.Errorf("absent directory: %v %v", recs, err)
	}
	// Garbage before the last line is not a torn write but a foreign file.
	os.WriteFile(filepath.Join(dir, "y.jsonl"), []byte("not json\n{}\n"), 0o644)
	if _, err := ReadDir(dir); err == nil {
		t.Error("malformed line accepted")
	}
}

// NaN, +Inf and −Inf are written as distinct tokens and read back as
// themselves; null (what records held before the tokens) reads as NaN.
func TestNumJSON(t *testing.T) {
	r := rec("a", 0, 1, 0)
	r.SW2 = Num(math.NaN())
	r.Diagnostics = map[string]Num{"pareto_k": Num(math.Inf(1)), "log_z": Num(math.Inf(-1)), "ess": 3.5}
	var buf bytes.Buffer
	if err := WriteRecords(&buf, []Record{*r}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"sw2":"NaN"`, `"pareto_k":"Inf"`, `"log_z":"-Inf"`, `"ess":3.5`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("record lacks %s: %s", want, buf.String())
		}
	}
	old := strings.Replace(buf.String(), `"sw2":"NaN"`, `"sw2":null`, 1)
	old = strings.Replace(old, `"pareto_k":"Inf"`, `"pareto_k":null`, 1)
	for name, text := range map[string]string{"tokens": buf.String(), "null": old} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "r.jsonl"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := ReadDir(dir)
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: %v %v", name, recs, err)
		}
		got := recs[0]
		k := float64(got.Diagnostics["pareto_k"])
		wantK := math.Inf(1)
		if name == "null" {
			wantK = math.NaN()
		}
		if !math.IsNaN(float64(got.SW2)) || !sameFloat(k, wantK) || !math.IsInf(float64(got.Diagnostics["log_z"]), -1) || got.Diagnostics["ess"] != 3.5 {
			t.Errorf("%s: read back sw2 %v, pareto_k %v (want %v), log_z %v, ess %v", name, got.SW2, k, wantK, got.Diagnostics["log_z"], got.Diagnostics["ess"])
		}
	}
	var n Num
	if err := json.Unmarshal([]byte(`"inf"`), &n); err == nil {
		t.Errorf(`"inf" read as %v, want an error`, n)
	}
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// Records written before the results package existed (a smoke run of the
// old bench package, copied verbatim) still load, with every field the
// report and the accuracy gate read.
func TestReadsRecordsOfTheFirstSchema(t *testing.T) {
	recs, err := ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 {
		t.Fatalf("read %d records, want 6", len(recs))
	}
	tests := []struct {
		i                   int
		method, stage, kind string
		budget              int
		weighted            bool
		ref                 string
	}{
		{0, "afin", "", "draws", 500, false, "nuts"},
		{1, "afin-snis", "proposal", "proposals", 1000, false, "nuts"},
		{2, "afin-snis", "", "proposals", 100, true, "nuts"},
		{3, "nuts", "", "draws", 100, false, "nuts"},
		{4, "frvi", "", "steps", 100, false, "nuts"},
		{5, "afin-snis", "proposal", "proposals", 1000, false, "exact"},
	}
	for _, tc := range tests {
		r := recs[tc.i]
		if r.Method != tc.method || r.Stage != tc.stage || r.BudgetKind != tc.kind || r.Budget != tc.budget || r.Reference.Kind != tc.ref {
			t.Errorf("record %d: %s/%s %s %d ref %s", tc.i, r.Method, r.Stage, r.BudgetKind, r.Budget, r.Reference.Kind)
		}
		for name, v := range map[string]Num{"m1": r.M1, "m2": r.M2, "sw2": r.SW2, "seconds": r.Seconds} {
			if !(v > 0) {
				t.Errorf("record %d: %s = %v", tc.i, name, v)
			}
		}
		if _, ok := r.Diagnostics["pareto_k"]; ok != tc.weighted {
			t.Errorf("record %d: pareto_k present %v, want %v", tc.i, ok, tc.weighted)
		}
		if r.Failed() {
			t.Errorf("record %d of the first schema reads as failed: %q", tc.i, r.Error)
		}
		if r.Provenance.GitCommit == "" || r.Provenance.Profile != "smoke" {
			t.Errorf("record %d: provenance %+v", tc.i, r.Provenance)
		}
	}
}

// A key stored twice with the same metrics and different timings (one
// unit run twice: seconds, *_seconds diagnostics, provenance time) is a
// duplicate, counted in a warning with the first read kept; different
// metrics stay a conflict.
func TestDuplicateDifferingOnlyInTiming(t *testing.T) {
	first := rec("a", 0, 10, 0.5)
	first.Seconds, first.Provenance.Time = 1.5, "2026-01-01T00:00:00Z"
	first.Diagnostics = map[string]Num{"fit_seconds": 1.2, "ess": 40}
	tests := []struct {
		name      string
		edit      func(r *Record)
		conflicts int
		warning   string
	}{
		{"seconds", func(r *Record) { r.Seconds = 2.5 }, 0, "1 duplicate record(s) with the same metrics and different timings"},
		{"all timings", func(r *Record) {
			r.Seconds, r.Provenance.Time = 3, "2026-02-01T00:00:00Z"
			r.Diagnostics = map[string]Num{"fit_seconds": 2.9, "ess": 40}
		}, 0, "1 duplicate record(s) with the same metrics and different timings"},
		{"identical", func(r *Record) {}, 0, "1 duplicate record(s) with identical results"},
		{"metric differs", func(r *Record) { r.SW2 = 0.6 }, 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			second := *first
			second.Diagnostics = maps.Clone(first.Diagnostics)
			tc.edit(&second)
			for name, r := range map[string]*Record{"a.jsonl": first, "b.jsonl": &second} {
				f, err := os.Create(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if err := WriteRecords(f, []Record{*r}); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			l, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if l.Conflicts != tc.conflicts {
				t.Fatalf("%d conflicts, want %d", l.Conflicts, tc.conflicts)
			}
			if tc.conflicts > 0 {
				return
			}
			if len(l.Records) != 1 || l.Records[0].Seconds != first.Seconds || l.Records[0].Provenance.Time != first.Provenance.Time {
				t.Errorf("kept %+v, want the first read (seconds %v)", l.Records, first.Seconds)
			}
			if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], tc.warning) {
				t.Errorf("warnings %q, want one with %q", l.Warnings, tc.warning)
			}
		})
	}
}
