package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/afin-bench/afin/checkpoints"
)

// The README's set-up section gives a `go build -o` line for the binary
// (a plain `go build ./cmd/afin` in the repository root fails: afin/ is a
// directory), and that line, run from the root as written with only its
// output moved to a temporary directory, builds a binary that runs.
func TestREADMEBuildLine(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary")
	}
	text, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	setup, _, _ := strings.Cut(string(text), "\n## Engines")
	line := regexp.MustCompile(`(?m)^go build -o (\S+) \./cmd/afin$`).FindStringSubmatch(setup)
	if line == nil {
		t.Fatal("README's set-up section has no `go build -o FILE ./cmd/afin` line")
	}
	if regexp.MustCompile(`(?m)^go build \./cmd/afin`).MatchString(string(text)) {
		t.Error("README gives a plain `go build ./cmd/afin` command, which fails in the repository root")
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(line[1]))
	args := strings.Fields(strings.Replace(line[0], line[1], bin, 1))
	build := exec.Command(args[0], args[1:]...)
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line[0], err, out)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "afin ") {
		t.Errorf("%s version: %v, %q", bin, err, out)
	}
}

// The README says where the embedded checkpoint is unpacked, naming the
// directory the binary really uses (checkpoints.Extract): under
// $AFIN_CACHE_DIR, else the user cache, as small-full-<hash>.
func TestREADMECheckpointDir(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	dir, err := checkpoints.Extract(cache)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(cache, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`$AFIN_CACHE_DIR/checkpoints`", "afin/checkpoints", filepath.ToSlash(rel)} {
		if !strings.Contains(string(text), want) {
			t.Errorf("README does not say where the checkpoint is unpacked: it lacks %q (the directory is %s)", want, rel)
		}
	}
}

// The bench tasks and CI read the raw data from the repository: neither
// the Taskfile nor the CI scripts point a data variable outside it (a
// user's clone has nothing beside it; .ci/bench-all runs bench:uci and
// bench:openml from a fresh clone to show it).
func TestTaskfileDataInRepository(t *testing.T) {
	for _, f := range []string{"Taskfile.yml", ".ci/run", ".ci/bench-all"} {
		text, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			code, _, _ := strings.Cut(line, "#")
			if strings.Contains(code, "shared/datasets") || regexp.MustCompile(`AFIN_(DATA|OPENML)_DIR[:=]`).MatchString(code) {
				t.Errorf("%s:%d sets a data directory: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
