package records

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CheckResume refuses adding records of one commit to a suite whose
// records carry another, per suite, as mixWarnings (report, check) count
// them; the error names both commits.
func TestCheckResume(t *testing.T) {
	with := func(suite, commit string) Record {
		r := *rec("a", 0, 100, 0.1)
		r.Suite, r.Provenance.GitCommit = suite, commit
		return r
	}
	tests := []struct {
		name string
		recs []Record
		mine string
		want []string // nil: admitted
	}{
		{"empty directory", nil, "abc", nil},
		{"same commit", []Record{with("synthetic", "abc")}, "abc", nil},
		{"another suite's commit", []Record{with("snis", "def")}, "abc", nil},
		{"another commit", []Record{with("synthetic", "def"), with("synthetic", "def")}, "abc", []string{"2 of commit def", "commit abc"}},
		{"binary without a commit", []Record{with("synthetic", "0123456789abcdef")}, "", []string{"0123456789ab", "commit unknown"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckResume(&Loaded{Records: tc.recs}, "synthetic", Provenance{GitCommit: tc.mine})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrMixedCommits) {
				t.Fatalf("err %v, want ErrMixedCommits", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			// The rule is the one report and check apply.
			all := append([]Record{{Suite: "synthetic", Provenance: Provenance{GitCommit: tc.mine}}}, tc.recs...)
			if len(mixWarnings(all)) == 0 {
				t.Error("CheckResume refuses what mixWarnings accepts")
			}
		})
	}
}

// CheckResume refuses adding one profile's records to a suite whose
// records carry another (their shared points would count as done), per
// suite, naming both profiles and the --profile to resume with; a commit
// mix is named first.
func TestCheckResumeProfile(t *testing.T) {
	with := func(suite, profile string) Record {
		r := *rec("a", 0, 100, 0.1)
		r.Suite, r.Provenance.Profile, r.Provenance.GitCommit = suite, profile, "abc"
		return r
	}
	tests := []struct {
		name    string
		recs    []Record
		mine    string
		want    []string // nil: admitted
		commits bool     // refused for the commit first
	}{
		{"same profile", []Record{with("synthetic", "quick")}, "quick", nil, false},
		{"another suite's profile", []Record{with("uci", "smoke")}, "quick", nil, false},
		{"another profile", []Record{with("synthetic", "smoke"), with("synthetic", "smoke")}, "quick",
			[]string{"2 at profile smoke", "this run is profile quick", "--profile smoke", "--allow-mixed"}, false},
		{"records without a profile", []Record{with("synthetic", "")}, "quick",
			[]string{"1 at profile (none recorded)", "profile quick"}, false},
		{"another commit too", []Record{func() Record { r := with("synthetic", "smoke"); r.Provenance.GitCommit = "def"; return r }()}, "quick",
			[]string{"commit def"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckResume(&Loaded{Records: tc.recs}, "synthetic", Provenance{GitCommit: "abc", Profile: tc.mine})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := map[bool]error{true: ErrMixedCommits, false: ErrMixedProfiles}[tc.commits]; !errors.Is(err, want) {
				t.Fatalf("err %v, want %v", err, want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("%q is not one line", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

// Opening a store refuses a directory with conflicting duplicates,
// naming the key and both lines, and creates nothing.
func TestOpenStoreRefusesConflicts(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, rs ...*Record) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var recs []Record
		for _, r := range rs {
			recs = append(recs, *r)
		}
		if err := WriteRecords(f, recs); err != nil {
			t.Fatal(err)
		}
	}
	write("a.jsonl", rec("x", 0, 100, 0.1), rec("y", 0, 100, 0.2))
	write("b.jsonl", rec("y", 0, 100, 0.3))
	_, err := OpenStoreFor(dir, "c.jsonl", Writer{})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err %v, want ErrConflict", err)
	}
	for _, w := range []string{rec("y", 0, 100, 0).Key(), "a.jsonl:2", "b.jsonl:1"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "c.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused open created its results file (%v)", err)
	}
}
