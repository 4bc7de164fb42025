package buildinfo

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name              string
		stampRev          string
		stampDirty        bool
		linkRev, linkMod  string
		wantRev           string
		wantDirty, wantOK bool
	}{
		{"stamp wins", "aaa", true, "bbb", "", "aaa", true, true},
		{"link when no stamp", "", false, "bbb", "true", "bbb", true, true},
		{"link clean", "", false, "bbb", "", "bbb", false, true},
		{"neither", "", false, "", "true", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rev, dirty, ok := choose(tc.stampRev, tc.stampDirty, tc.linkRev, tc.linkMod)
			if rev != tc.wantRev || dirty != tc.wantDirty || ok != tc.wantOK {
				t.Errorf("choose = %q %v %v, want %q %v %v", rev, dirty, ok, tc.wantRev, tc.wantDirty, tc.wantOK)
			}
		})
	}
}

func TestStamped(t *testing.T) {
	rev, dirty := stamped([]debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}})
	if rev != "abc" || !dirty {
		t.Errorf("stamped = %q %v, want abc true", rev, dirty)
	}
}

// A binary linked with -buildvcs=false and the -X flags Taskfile.yml
// passes knows its commit; one without them does not.
func TestLinkTimeCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	dir := t.TempDir()
	const pkg = "github.com/afin-bench/afin/internal/buildinfo"
	for _, tc := range []struct {
		name, ldflags, want string
	}{
		{"with -X", "-X " + pkg + ".commit=0123abcd -X " + pkg + ".modified=true", "0123abcd true true"},
		{"without", "", " false false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(dir, "probe")
			build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", tc.ldflags, "-o", bin, "./testdata/probe")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			out, err := exec.Command(bin).Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(out)); got != strings.TrimSpace(tc.want) {
				t.Errorf("probe printed %q, want %q", got, tc.want)
			}
		})
	}
}

// The Taskfile's afin builds pass the commit of the checkout at link
// time, into this package's variables (a renamed variable or package
// would silently leave binaries at "unknown" under -buildvcs=false).
func TestTaskfilePassesCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go tool task")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	cmd := exec.Command("go", "tool", "task", "--dry", "build", "bench:synthetic")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool task --dry: %v\n%s", err, out)
	}
	want := "-X github.com/afin-bench/afin/internal/buildinfo.commit=" + strings.TrimSpace(string(head)) + " "
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(line, "./cmd/afin") && !strings.Contains(line, want) {
			t.Errorf("a Taskfile command builds afin without %q:\n%s", want, line)
		}
	}
	if !strings.Contains(string(out), "buildinfo.modified=") {
		t.Errorf("no -X of buildinfo.modified in:\n%s", out)
	}
}
