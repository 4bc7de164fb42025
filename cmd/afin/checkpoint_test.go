package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin"
	"gonum.org/v1/gonum/mat"
)

// torchFixtures holds the authors' PyTorch network's runs and outputs on
// random weights, in the repository (its README says how they were made).
var torchFixtures = filepath.Join("..", "..", "testdata", "torch-afin")

type torchCase struct {
	Task   json.RawMessage `json:"task"`
	Expect struct {
		Mean      []float64   `json:"mean"`
		Precision [][]float64 `json:"precision"`
		Z         [][]float64 `json:"z"`
		LogQ      []float64   `json:"log_q"`
	} `json:"expect"`
}

func torchCases(t *testing.T, decoder string) []torchCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(torchFixtures, "cases-"+decoder+".json"))
	if err != nil {
		t.Fatalf("fixtures of the authors' network: %v", err)
	}
	var f struct{ Cases []torchCase }
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

func pointsCSV(t *testing.T, z [][]float64) string {
	var b strings.Builder
	for i := range z[0] {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "z%d", i+1)
	}
	b.WriteByte('\n')
	for _, row := range z {
		for i, v := range row {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%.17g", v)
		}
		b.WriteByte('\n')
	}
	return fdWrite(t, "z.csv", b.String())
}

// Imported through the CLI, the authors' runs give their numbers from
// `afin infer --json` (mean, covariance) and `afin density`.
func TestImportThenInferAndDensityMatchReference(t *testing.T) {
	for _, dec := range []string{"gaussian", "flow"} {
		cases := torchCases(t, dec)
		ck := filepath.Join(t.TempDir(), "ck")
		if code, _, errs := cliRun(t, "checkpoint", "import", filepath.Join(torchFixtures, "run-"+dec), "--out", ck); code != 0 {
			t.Fatalf("import %s: exit %d: %s", dec, code, errs)
		}
		for k, c := range cases[:6] {
			task := fdWrite(t, "task.json", string(c.Task))
			code, out, errs := cliRun(t, "density", "--task", task, "--at", pointsCSV(t, c.Expect.Z), "--checkpoint", ck, "--json")
			if code != 0 {
				t.Fatalf("%s case %d: density exit %d: %s", dec, k, code, errs)
			}
			var dens struct {
				LogQ []float64 `json:"log_q"`
			}
			if err := json.Unmarshal([]byte(out), &dens); err != nil {
				t.Fatal(err)
			}
			for s, want := range c.Expect.LogQ {
				if math.Abs(dens.LogQ[s]-want) > 1e-3 {
					t.Errorf("%s case %d point %d: log q %g, want %g", dec, k, s, dens.LogQ[s], want)
				}
			}
			if dec == "gaussian" {
				checkInferMoments(t, k, task, ck, c)
			}
		}
	}
}

func checkInferMoments(t *testing.T, k int, task, ck string, c torchCase) {
	t.Helper()
	code, out, errs := cliRun(t, "infer", "--method", "afin", "--task", task, "--checkpoint", ck, "--json")
	if code != 0 {
		t.Fatalf("case %d: infer exit %d: %s", k, code, errs)
	}
	var res struct {
		Mean []float64   `json:"mean"`
		Cov  [][]float64 `json:"cov"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	d := len(c.Expect.Mean)
	prec := mat.NewDense(d, d, nil)
	for i, row := range c.Expect.Precision {
		prec.SetRow(i, row)
	}
	var cov mat.Dense
	if err := cov.Inverse(prec); err != nil {
		t.Fatal(err)
	}
	var num, den, mn, md float64
	for i := range d {
		mn += (res.Mean[i] - c.Expect.Mean[i]) * (res.Mean[i] - c.Expect.Mean[i])
		md += c.Expect.Mean[i] * c.Expect.Mean[i]
		for j := range d {
			e := res.Cov[i][j] - cov.At(i, j)
			num += e * e
			den += cov.At(i, j) * cov.At(i, j)
		}
	}
	if math.Sqrt(mn/md) > 1e-4 || math.Sqrt(num/den) > 1e-4 {
		t.Errorf("case %d: mean rel. error %.3g, covariance rel. error %.3g (tol 1e-4)", k, math.Sqrt(mn/md), math.Sqrt(num/den))
	}
}

// Bad run directories exit 2 with one line naming the file, and leave
// nothing at --out.
func TestImportBadInput(t *testing.T) {
	run := filepath.Join(torchFixtures, "run-gaussian")
	pt, err := os.ReadFile(filepath.Join(run, "final.pt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(run, "config.json"))
	mk := func(files map[string][]byte) string {
		dir := t.TempDir()
		for name, data := range files {
			os.WriteFile(filepath.Join(dir, name), data, 0o644)
		}
		return dir
	}
	tests := []struct{ name, dir, file string }{
		{"no config.json", mk(map[string][]byte{"final.pt": pt}), "config.json"},
		{"truncated final.pt", mk(map[string][]byte{"config.json": cfg, "final.pt": pt[:len(pt)-5000]}), "final.pt"},
		{"not a zip", mk(map[string][]byte{"config.json": cfg, "final.pt": []byte("{}")}), "final.pt"},
		{"no final.pt", mk(map[string][]byte{"config.json": cfg}), "final.pt"},
		{"another model", mk(map[string][]byte{"config.json": []byte(strings.Replace(string(cfg), `"feat_dim": 12`, `"feat_dim": 16`, 1)), "final.pt": pt}), "final.pt"},
	}
	for _, tc := range tests {
		out := filepath.Join(t.TempDir(), "ck")
		code, _, errs := cliRun(t, "checkpoint", "import", tc.dir, "--out", out)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, filepath.Join(tc.dir, tc.file)) {
			t.Errorf("%s: exit %d, stderr %q: want 2 and one line naming %s", tc.name, code, errs, tc.file)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: --out was written", tc.name)
		}
		if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".ck*")); len(m) > 0 {
			t.Errorf("%s: temporary files left: %v", tc.name, m)
		}
	}
}

func TestCheckpointInfo(t *testing.T) {
	dir := filepath.Join("..", "..", "checkpoints", "small-gaussian")
	code, out, errs := cliRun(t, "checkpoint", "info", dir)
	if code != 0 || !strings.Contains(out, "86501 trainable parameters") || !strings.Contains(out, "d ∈ [1, 8], N ∈ [1, 64]") || !strings.Contains(out, "hash ") {
		t.Errorf("exit %d, %q %q", code, out, errs)
	}
	code, _, errs = cliRun(t, "checkpoint", "info", t.TempDir())
	if code != 2 || !strings.Contains(errs, "config.json") {
		t.Errorf("empty dir: exit %d, %q", code, errs)
	}
}

// `afin checkpoint fetch` against a local server holding the published
// folder layout (the fixture runs stand in for the paper's), and offline.
func TestCheckpointFetch(t *testing.T) {
	if _, err := os.Stat(filepath.Join(torchFixtures, "run-gaussian", "final.pt")); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for fam, folder := range afin.PaperRuns {
		mux.Handle("/"+folder+"/", http.StripPrefix("/"+folder+"/", http.FileServer(http.Dir(filepath.Join(torchFixtures, "run-"+fam)))))
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	out := t.TempDir()
	code, stdout, errs := cliRun(t, "checkpoint", "fetch", "--base", srv.URL, "--out", out)
	if code != 0 || strings.Count(stdout, "verified") != 2 {
		t.Fatalf("exit %d: %s %s", code, stdout, errs)
	}
	for _, fam := range []string{"gaussian", "flow"} {
		if code, info, _ := cliRun(t, "checkpoint", "info", filepath.Join(out, "paper-"+fam)); code != 0 || !strings.Contains(info, fam+" decoder") {
			t.Errorf("%s: info exit %d: %s", fam, code, info)
		}
	}
	srv.Close() // offline: one line saying what to download and where
	out2 := t.TempDir()
	code, _, errs = cliRun(t, "checkpoint", "fetch", "--base", srv.URL, "--out", out2, "--family", "flow", "--timeout", "2s")
	if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "final.pt") || !strings.Contains(errs, "afin checkpoint import") {
		t.Errorf("offline: exit %d, %q", code, errs)
	}
	if entries, _ := os.ReadDir(out2); len(entries) != 0 {
		t.Errorf("offline fetch left %v", entries)
	}
}

func TestDensityBadInput(t *testing.T) {
	task := fdWrite(t, "task.json", `{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[]}`)
	ck := filepath.Join("..", "..", "checkpoints", "small-gaussian")
	tests := []struct{ name, csv, want string }{
		{"wrong d", "z1,z2,z3\n1,2,3\n", "d=2"},
		{"bad header", "a,b\n1,2\n", "header"},
		{"not a number", "z1,z2\n1,x\n", "x"},
	}
	for _, tc := range tests {
		code, _, errs := cliRun(t, "density", "--task", task, "--at", fdWrite(t, "z.csv", tc.csv), "--checkpoint", ck)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, %q", tc.name, code, errs)
		}
	}
	code, out, errs := cliRun(t, "density", "--task", task, "--at", fdWrite(t, "z.csv", "z1,z2\n0,0\n1,-1\n"), "--checkpoint", ck)
	if code != 0 || len(strings.Fields(out)) != 2 {
		t.Errorf("exit %d, %q %q", code, out, errs)
	}
}
