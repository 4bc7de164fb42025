package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/factor"
)

// dsDataDir finds the raw files as the datasets tests do: $AFIN_DATA_DIR
// when it holds them, else the repository's testdata/uci.
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
