package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/records"
)

// dsDataDir finds the raw files as the datasets tests do: $AFIN_DATA_DIR
// when it holds them, else the repository's datasets/uci.
func dsDataDir(t *testing.T) string {
	t.Helper()
	if c := os.Getenv(datasets.EnvDataDir); c != "" {
		if _, err := os.Stat(filepath.Join(c, "mesquite", "mesquite.dat")); err == nil {
			return c
		}
	}
	return filepath.Join("..", "..", "datasets", "uci")
}

func TestDatasetsList(t *testing.T) {
	code, out, stderr := cliRun(t, "datasets", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var list []struct {
		Key, Name, Prior, Likelihood string
		D, N                         int
		Heterogeneous                bool
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{
		"concrete_slump": {7, 103}, "diabetes": {10, 442}, "yacht": {6, 308}, "machine_cpu": {6, 209},
		"auto_mpg": {7, 392}, "haberman": {3, 306}, "sonar": {8, 208}, "parkinsons": {8, 195},
		"heart": {13, 297}, "seeds": {7, 210}, "forest_fires": {8, 517}, "mesquite": {7, 46},
	}
	if len(list) != len(want) {
		t.Fatalf("%d tasks", len(list))
	}
	for _, in := range list {
		if w, ok := want[in.Key]; !ok || w != [2]int{in.D, in.N} || in.Prior == "" || in.Likelihood == "" {
			t.Errorf("%+v", in)
		}
	}
	code, out, _ = cliRun(t, "datasets", "list")
	if code != 0 || !strings.Contains(out, "forest_fires") || !strings.Contains(out, "heterogeneous (lin_student_t + bernoulli_logit)") {
		t.Errorf("table output (exit %d):\n%s", code, out)
	}
}

func TestDatasetsTask(t *testing.T) {
	dir := dsDataDir(t)
	for _, args := range [][]string{
		{"datasets", "task", "haberman", "--data-dir", dir},
		{"datasets", "task", "--data-dir", dir, "haberman"},
	} {
		code, out, stderr := cliRun(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		task, err := factor.ParseTask([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		if task.D != 3 || task.N() != 306 || task.Name != "haberman" {
			t.Errorf("d=%d N=%d name=%q", task.D, task.N(), task.Name)
		}
	}
	t.Setenv(datasets.EnvDataDir, dir)
	if code, out, stderr := cliRun(t, "datasets", "task", "mesquite"); code != 0 || !strings.Contains(out, `"lin_gaussian"`) {
		t.Errorf("via env: exit %d: %s", code, stderr)
	}
}

func TestDatasetsErrors(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"datasets"}, 2, "missing subcommand"},
		{[]string{"datasets", "nope"}, 2, "unknown subcommand"},
		{[]string{"datasets", "task"}, 2, "missing task KEY"},
		{[]string{"datasets", "task", "iris"}, 2, "unknown UCI task"},
		{[]string{"datasets", "task", "sonar", "extra"}, 2, "unexpected argument"},
		{[]string{"datasets", "list", "--bogus"}, 2, "bogus"},
		// A data directory without the raw file is bad input, as for bench.
		{[]string{"datasets", "task", "sonar", "--data-dir", empty}, 2, "afin datasets fetch"},
		{[]string{"datasets", "fetch", "--only", "iris"}, 2, "unknown UCI task"},
		{[]string{"datasets", "fetch", "--timeout", "0s"}, 2, "--timeout"},
		// Nothing listens on port 1: the fetch fails at once, writes nothing.
		{[]string{"datasets", "fetch", "--data-dir", empty, "--mirror", "http://127.0.0.1:1", "--timeout", "2s"}, 1, "could not connect"},
	}
	for _, c := range cases {
		code, _, stderr := cliRun(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.msg)
		}
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("failed fetch left %d entries", len(entries))
	}
	if code, _, _ := cliRun(t, "datasets", "--help"); code != 0 {
		t.Errorf("--help exit %d", code)
	}
}

func TestDatasetsFetchLocalMirror(t *testing.T) {
	src := dsDataDir(t)
	dst := t.TempDir()
	code, out, stderr := cliRun(t, "datasets", "fetch", "--data-dir", dst, "--mirror", src, "--only", "heart,seeds", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res []datasets.FetchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || !res[0].ChecksumMatch || !res[1].ChecksumMatch {
		t.Errorf("%+v", res)
	}
	if code, _, stderr := cliRun(t, "datasets", "task", "heart", "--data-dir", dst); code != 0 {
		t.Errorf("task from fetched dir: exit %d: %s", code, stderr)
	}
}

// With no data directory set, in a working directory with nothing in it
// and an empty user cache, as an installed binary runs outside the
// repository: the UCI tasks and the OpenML suite read the copy built into
// afin. A data directory that lacks the files is still refused naming it
// and the variable that chose it.
func TestDataBuiltIn(t *testing.T) {
	t.Setenv(datasets.EnvDataDir, "")
	t.Setenv(datasets.EnvOpenMLDir, "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("AFIN_CACHE_DIR", filepath.Join(home, "afin-cache"))
	t.Chdir(t.TempDir())

	code, out, errs := runCLI("datasets", "task", "haberman")
	if code != 0 {
		t.Fatalf("datasets task haberman: exit %d, stderr %q", code, errs)
	}
	task, err := factor.ParseTask([]byte(out))
	if err != nil || task.D != 3 || len(task.Factors) != 306 {
		t.Fatalf("datasets task haberman: %v, task %d×%d", err, len(task.Factors), task.D)
	}
	res := filepath.Join(home, "results")
	code, _, errs = runCLI("bench", "--suite", "openml", "--profile", "smoke", "--methods", "afin", "--results", res)
	if code != 0 {
		t.Fatalf("bench --suite openml: exit %d, stderr %q", code, errs)
	}
	recs, err := records.ReadDir(res)
	if err != nil || len(recs) == 0 {
		t.Fatalf("bench --suite openml wrote %d records (%v)", len(recs), err)
	}
	datasetsSeen := map[string]bool{}
	for _, r := range recs {
		datasetsSeen[r.Setting] = true
	}
	if len(datasetsSeen) != 3 {
		t.Errorf("records of %d settings, want the smoke profile's 3: %v", len(datasetsSeen), datasetsSeen)
	}

	missing := filepath.Join(home, "no-such-dir")
	t.Setenv(datasets.EnvDataDir, missing)
	code, _, errs = runCLI("datasets", "task", "haberman")
	if code != 2 || !strings.Contains(errs, missing) || !strings.Contains(errs, "$"+datasets.EnvDataDir) || strings.Count(errs, "\n") != 1 {
		t.Errorf("missing data directory: exit %d, stderr %q", code, errs)
	}
}
