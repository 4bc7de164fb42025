package records

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// failedRec is the failed record of rec's key, written at time at.
func failedRec(setting string, budget int, reason, at string) *Record {
	r := rec(setting, 0, budget, 0)
	r.Provenance.Time = at
	r.MarkFailed(reason)
	return r
}

// TestFailedRecordSchema: a failed record is written without metrics and
// read back with NaN ones; the schema accepts it, still refuses a scored
// record missing a metric and refuses a failed one that carries metrics.
func TestFailedRecordSchema(t *testing.T) {
	failed := line(t, failedRec("a", 10, "exec:crash: exit status 3", "2026-01-01T00:00:00Z"))
	if strings.Contains(failed, `"m1"`) || strings.Contains(failed, `"sw2"`) || !strings.Contains(failed, `"error":"exec:crash: exit status 3"`) {
		t.Fatalf("failed record on disk: %s", failed)
	}
	if !strings.HasPrefix(failed, string(recordPrefix)) {
		t.Fatalf("failed record does not start as a record (a torn write would not be recognised): %s", failed)
	}
	scored := line(t, rec("a", 0, 10, 0.5))
	cases := []struct {
		name, content, wantErr string
	}{
		{"failed without metrics", failed, ""},
		{"scored", scored, ""},
		{"scored missing m1", strings.Replace(scored, `"m1":0,`, "", 1), "missing field(s) m1"},
		{"failed with metrics", strings.Replace(failed, `"seconds":`, `"m1":0.1,"seconds":`, 1), "carries no metrics, got m1"},
		{"failed missing seconds", strings.Replace(failed, `"seconds":0,`, "", 1), "missing field(s) seconds"},
		{"empty error is a scored record", strings.Replace(failed, `"error":"exec:crash: exit status 3"`, `"error":""`, 1), "missing field(s) m1, m2, sw2"},
		{"error not a string", strings.Replace(failed, `"error":"exec:crash: exit status 3"`, `"error":3`, 1), "error: must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := decodeRecord([]byte(tc.content))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("decode error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Failed() != strings.Contains(tc.content, `"error"`) || (r.Failed() && !math.IsNaN(float64(r.M1))) {
				t.Errorf("decoded failed=%v m1=%v", r.Failed(), r.M1)
			}
		})
	}
}

// TestReaderPrefersSuccess: whatever the file order, a success of a key
// supersedes its failures and the newest of two failures is kept; none
// of these is a conflict.
func TestReaderPrefersSuccess(t *testing.T) {
	ok := rec("a", 0, 10, 0.5)
	ok.Provenance.Time = "2026-01-01T00:00:00Z"
	old := failedRec("a", 10, "old reason", "2026-01-01T00:00:00Z")
	newer := failedRec("a", 10, "new reason", "2026-01-02T00:00:00Z")
	cases := []struct {
		name      string
		files     [][]*Record // one file each, read in order
		wantError string      // "" for the success
	}{
		{"retry appended after the failure", [][]*Record{{old, ok}}, ""},
		{"success in an earlier file", [][]*Record{{ok}, {old}}, ""},
		{"success in a later file", [][]*Record{{old}, {ok}}, ""},
		{"newest failure, read last", [][]*Record{{old, newer}}, "new reason"},
		{"newest failure, read first", [][]*Record{{newer}, {old}}, "new reason"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, recs := range tc.files {
				var b strings.Builder
				for _, r := range recs {
					b.WriteString(line(t, r) + "\n")
				}
				os.WriteFile(filepath.Join(dir, string(rune('a'+i))+".jsonl"), []byte(b.String()), 0o644)
			}
			l, err := Load(dir)
			if err != nil || l.ConflictError() != nil || len(l.Records) != 1 || l.Superseded != 1 {
				t.Fatalf("Load: %v, conflict %v, %d records, %d superseded", err, l.ConflictError(), len(l.Records), l.Superseded)
			}
			if got := l.Records[0].Error; got != tc.wantError {
				t.Errorf("kept record has error %q, want %q", got, tc.wantError)
			}
			if tc.wantError == "" && len(l.Failures()) != 0 {
				t.Errorf("Failures() = %v after a success", l.Failures())
			}
		})
	}
}

// TestStoreAppendAfterFailure: a store holding a failure takes the
// rerun's record; one holding a success skips a later failure.
func TestStoreAppendAfterFailure(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenStore(dir, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	f := failedRec("a", 10, "boom", "2026-01-01T00:00:00Z")
	for _, r := range []*Record{f, rec("a", 0, 10, 0.5), failedRec("a", 10, "later boom", "2026-01-02T00:00:00Z")} {
		if err := st.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	st, err = OpenStore(dir, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !st.Has(f.Key()) || !st.Succeeded(f.Key()) {
		t.Errorf("reopened store: has %v, succeeded %v; want the success", st.Has(f.Key()), st.Succeeded(f.Key()))
	}
	data, _ := os.ReadFile(filepath.Join(dir, "x.jsonl"))
	if n := strings.Count(string(data), "\n"); n != 2 {
		t.Errorf("file holds %d lines, want the failure and the success:\n%s", n, data)
	}
}

func TestTruncateError(t *testing.T) {
	long := strings.Repeat("é", 3000) + "the last line"
	cases := []struct {
		name, in string
		max      int
		keepTail string
	}{
		{"short", "exit status 3", 100, "exit status 3"},
		{"long keeps head and tail", "exec:crash at draws 10: " + long, 400, "the last line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := TruncateError(tc.in, tc.max)
			if len(got) > tc.max || !utf8.ValidString(got) || !strings.HasSuffix(got, tc.keepTail) {
				t.Errorf("TruncateError: %d bytes, valid %v, %q", len(got), utf8.ValidString(got), got)
			}
			if len(tc.in) > tc.max && !strings.HasPrefix(got, "exec:crash") {
				t.Errorf("head lost: %q", got[:40])
			}
		})
	}
}
