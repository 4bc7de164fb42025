package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func line(t *testing.T, r *Record) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLoadRefusesWhatIsNotARecord: each corruption found by hand on a
// copy of a smoke results directory is refused with the file and line.
func TestLoadRefusesWhatIsNotARecord(t *testing.T) {
	good := rec("a", 0, 10, 0.5)
	good.M1, good.M2 = 0.1, 0.2
	cases := []struct {
		name, content, want string
	}{
		{"hello world", `{"hello":"world"}`, "missing field"},
		{"metric missing", strings.Replace(line(t, good), `"m1":0.1,`, "", 1), "missing field(s) m1"},
		{"negative metric", strings.Replace(line(t, good), `"m2":0.2`, `"m2":-0.2`, 1), "m2: must be finite and ≥ 0"},
		{"unknown method", strings.Replace(line(t, good), `"method":"nuts"`, `"method":"magic"`, 1), `unknown method "magic"`},
		{"unknown suite", strings.Replace(line(t, good), `"suite":"synthetic"`, `"suite":"mine"`, 1), `unknown suite "mine"`},
		{"unknown budget kind", strings.Replace(line(t, good), `"budget_kind":"draws"`, `"budget_kind":"hours"`, 1), "budget_kind"},
		{"foreign text", "not json", "not a valid results record"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "r.jsonl"), []byte(line(t, good)+"\n"+tc.content+"\n"), 0o644)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "r.jsonl:2") {
				t.Fatalf("Load error %v, want one naming r.jsonl:2 and %q", err, tc.want)
			}
		})
	}
}

// TestLoadWarnsWithCounts: repairs and mixes are read, each with a
// warning that carries its count.
func TestLoadWarnsWithCounts(t *testing.T) {
	a, b, c := rec("a", 0, 10, 0.5), rec("b", 0, 10, 0.5), rec("c", 0, 10, 0.5)
	a.Provenance.Profile, b.Provenance.Profile, c.Provenance.Profile = "smoke", "smoke", "quick"
	la, lb, lc := line(t, a), line(t, b), line(t, c)
	cases := []struct {
		name    string
		files   map[string]string
		records int
		want    string
	}{
		{"torn tail", map[string]string{"x.jsonl": la + "\n" + lb[:40]}, 1, "torn last line dropped"},
		{"no final newline", map[string]string{"x.jsonl": la + "\n" + lb}, 2, "lacks a final newline"},
		{"torn fragment mid-file", map[string]string{"x.jsonl": la + "\n" + lb[:30] + "\n" + lb + "\n"}, 2, "1 torn fragment(s)"},
		{"fragment glued to a record", map[string]string{"x.jsonl": lb[:50] + la + "\n"}, 1, "1 torn fragment(s)"},
		{"short fragment glued to a record", map[string]string{"x.jsonl": la + "\n" + lb[:4] + lc + "\n"}, 2, "1 torn fragment(s)"},
		{"fragment glued to a last record without newline", map[string]string{"x.jsonl": lb[:30] + la}, 1, "lacks a final newline"},
		{"identical duplicate", map[string]string{"x.jsonl": la + "\n", "y.jsonl": la + "\n"}, 1, "1 duplicate record(s)"},
		{"mixed profiles", map[string]string{"x.jsonl": la + "\n" + lb + "\n" + lc + "\n"}, 3, "2 profiles (quick: 1, smoke: 2)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for f, s := range tc.files {
				os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644)
			}
			l, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Records) != tc.records || !strings.Contains(strings.Join(l.Warnings, "\n"), tc.want) {
				t.Fatalf("%d records, warnings %q; want %d and %q", len(l.Records), l.Warnings, tc.records, tc.want)
			}
		})
	}
}

// TestConflictingDuplicatesAreAnError: a stray file's different result
// for a stored key does not win by path order.
func TestConflictingDuplicatesAreAnError(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(line(t, rec("a", 0, 10, 0.5))+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte(line(t, rec("a", 0, 10, 0.1))+"\n"), 0o644)
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Conflicts != 1 || l.ConflictError() == nil || !strings.Contains(l.ConflictError().Error(), "b.jsonl") {
		t.Fatalf("conflicts %d, error %v", l.Conflicts, l.ConflictError())
	}
}

// TestResumeRepairsTornFragments: opening the store cuts a torn fragment
// out of the middle of its file (two writers interleaved) and adds a
// missing final newline, keeping every whole record.
func TestResumeRepairsTornFragments(t *testing.T) {
	la, lb, lc := line(t, rec("a", 0, 10, 0.5)), line(t, rec("b", 0, 10, 0.5)), line(t, rec("c", 0, 10, 0.5))
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl")
	os.WriteFile(path, []byte(la+"\n"+lb[:30]+lc+"\n"+lb), 0o644)
	st, err := OpenStore(dir, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if st.Repaired == "" {
		t.Error("no repair reported")
	}
	if err := st.Append(rec("d", 0, 10, 0.5)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Records) != 4 || len(l.Warnings) != 0 {
		t.Fatalf("after repair: %d records, warnings %q; want 4 and none", len(l.Records), l.Warnings)
	}
}

// TestResumeAddsMissingFinalNewline: a file whose only fault is a last
// record without its newline is repaired on open, so the next record is
// not glued to it (which would lose the earlier record as a torn write).
func TestResumeAddsMissingFinalNewline(t *testing.T) {
	la, lb := line(t, rec("a", 0, 10, 0.5)), line(t, rec("b", 0, 10, 0.5))
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(la+"\n"+lb), 0o644)
	st, err := OpenStore(dir, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Repaired, "lacks a final newline") {
		t.Errorf("repair reported %q, want the missing final newline", st.Repaired)
	}
	if err := st.Append(rec("c", 0, 10, 0.5)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Records) != 3 || len(l.Warnings) != 0 {
		t.Fatalf("after repair and append: %d records, warnings %q; want 3 and none", len(l.Records), l.Warnings)
	}
}

// TestWritersOfOneDirectory: a results directory has one writer, or the
// shards of one plan, each in its own file; anything else fails at once
// with ErrLocked, from the probe (CheckWriter) as from OpenStoreFor, and
// the locks go with Close.
func TestWritersOfOneDirectory(t *testing.T) {
	whole := func(suite, profile string) Writer { return Writer{Suite: suite, Profile: profile} }
	shard := func(suite, profile string, i, n int) Writer {
		return Writer{Suite: suite, Profile: profile, Shard: i, Shards: n}
	}
	file := func(w Writer) string {
		if w.Shards <= 1 {
			return w.Suite + ".jsonl"
		}
		return fmt.Sprintf("%s.shard-%03d-of-%03d.jsonl", w.Suite, w.Shard, w.Shards)
	}
	tests := []struct {
		name         string
		held, second Writer
		ok           bool
		want         string
	}{
		{"two unsharded", whole("synthetic", "quick"), whole("synthetic", "quick"), false, "being written by an unsharded run of suite synthetic, profile quick"},
		{"unsharded, then a shard", whole("synthetic", "quick"), shard("synthetic", "quick", 0, 2), false, "which a 2-way sharded run of suite synthetic, profile quick cannot join"},
		{"a shard, then unsharded", shard("synthetic", "quick", 0, 2), whole("synthetic", "quick"), false, "being written by a 2-way sharded run of suite synthetic, profile quick"},
		{"two shards of one plan", shard("synthetic", "quick", 0, 2), shard("synthetic", "quick", 1, 2), true, ""},
		{"one shard twice", shard("synthetic", "quick", 0, 2), shard("synthetic", "quick", 0, 2), false, "synthetic.shard-000-of-002.jsonl in"},
		{"another shard count", shard("synthetic", "quick", 0, 2), shard("synthetic", "quick", 1, 3), false, "a 3-way sharded run of suite synthetic, profile quick cannot join"},
		{"another profile", shard("synthetic", "quick", 0, 2), shard("synthetic", "paper", 1, 2), false, "a 2-way sharded run of suite synthetic, profile paper cannot join"},
		{"another suite", whole("synthetic", "quick"), whole("uci", "quick"), false, "an unsharded run of suite uci"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := OpenStoreFor(dir, file(tc.held), tc.held)
			if err != nil {
				t.Fatal(err)
			}
			probe := CheckWriter(dir, file(tc.second), tc.second)
			second, err := OpenStoreFor(dir, file(tc.second), tc.second)
			if tc.ok {
				if probe != nil || err != nil {
					t.Fatalf("probe %v, open %v; want both to succeed", probe, err)
				}
				second.Close()
			} else {
				for what, e := range map[string]error{"probe": probe, "open": err} {
					if !errors.Is(e, ErrLocked) || !strings.Contains(e.Error(), tc.want) {
						t.Errorf("%s: %v; want ErrLocked naming %q", what, e, tc.want)
					}
				}
				if err == nil {
					second.Close()
				}
			}
			st.Close()
			if err := CheckWriter(dir, file(tc.second), tc.second); err != nil {
				t.Fatalf("probe after Close: %v", err)
			}
			again, err := OpenStoreFor(dir, file(tc.second), tc.second)
			if err != nil {
				t.Fatalf("after Close: %v", err)
			}
			again.Close()
		})
	}
}

// The plan outlives its first writer: while any shard of it writes, an
// unsharded writer is refused.
func TestShardPlanOutlivesItsFirstWriter(t *testing.T) {
	dir := t.TempDir()
	w0 := Writer{Suite: "synthetic", Profile: "quick", Shard: 0, Shards: 2}
	w1 := w0
	w1.Shard = 1
	s0, err := OpenStoreFor(dir, "s0.jsonl", w0)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := OpenStoreFor(dir, "s1.jsonl", w1)
	if err != nil {
		t.Fatal(err)
	}
	s0.Close()
	if _, err := OpenStoreFor(dir, "whole.jsonl", Writer{Suite: "synthetic", Profile: "quick"}); !errors.Is(err, ErrLocked) {
		t.Fatalf("unsharded writer beside shard 1: %v, want ErrLocked", err)
	}
	s1.Close()
	st, err := OpenStoreFor(dir, "whole.jsonl", Writer{Suite: "synthetic", Profile: "quick"})
	if err != nil {
		t.Fatalf("after the last shard closed: %v", err)
	}
	st.Close()
}

// A store opened on records of another profile says how many there are.
func TestStoreCountsOtherProfiles(t *testing.T) {
	dir := t.TempDir()
	a, b := rec("a", 0, 10, 0.5), rec("b", 0, 10, 0.5)
	a.Provenance.Profile, b.Provenance.Profile = "smoke", "quick"
	os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(line(t, a)+"\n"+line(t, b)+"\n"), 0o644)
	st, err := OpenStore(dir, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := st.OtherProfiles("smoke"); got != 1 {
		t.Errorf("OtherProfiles(smoke) = %d, want 1", got)
	}
}

// TestOpenStoreRefusesWhatIsNotARecord: a directory holding a line that
// is not a record is refused with ErrInvalidRecord naming file and line,
// and the refused open leaves neither the results file nor its lock.
func TestOpenStoreRefusesWhatIsNotARecord(t *testing.T) {
	cases := []struct{ name, content string }{
		{"garbage", "garbage\n"},
		{"wrong schema", `{"hello":"world"}` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(tc.content), 0o644)
			s, err := OpenStore(dir, "synthetic.jsonl")
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, ErrInvalidRecord) || !strings.Contains(err.Error(), "x.jsonl:1") {
				t.Fatalf("OpenStore error %v, want ErrInvalidRecord naming x.jsonl:1", err)
			}
			for _, f := range []string{"synthetic.jsonl", LockFile("synthetic.jsonl")} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("the refused open left %s", f)
				}
			}
		})
	}
}

// TestCheckUnlocked: the probe sees another writer's lock and creates
// nothing when there is none.
func TestCheckUnlocked(t *testing.T) {
	dir := t.TempDir()
	if err := CheckUnlocked(dir, "a.jsonl"); err != nil {
		t.Fatalf("no lock: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the probe created %v", entries)
	}
	s, err := OpenStore(dir, "a.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckUnlocked(dir, "a.jsonl"); !errors.Is(err, ErrLocked) {
		t.Errorf("held lock: %v, want ErrLocked", err)
	}
	s.Close()
	if err := CheckUnlocked(dir, "a.jsonl"); err != nil {
		t.Errorf("released lock: %v", err)
	}
}
