package posterior

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDrawsDFRoundTrip writes draws in the draws-data-frame format and
// reads them back with ReadAnyCSV: values bit for bit, chains, weights
// renormalised, and a dead SNIS draw (zero weight, NaN) left out.
func TestDrawsDFRoundTrip(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name      string
		d         *Draws
		chains    int
		wantRows  int
		wantChain []int
	}{
		{"two chains", &Draws{D: 2, Z: []float64{1, 2, 3, 4, 5, 6, 7, 8.5}}, 2, 4, []int{1, 1, 2, 2}},
		{"one chain weighted", &Draws{D: 1, Z: []float64{0.1, 1e-300, -3}, W: []float64{0.2, 0.3, 0.5}}, 1, 3, []int{1, 1, 1}},
		{"dead draw dropped", &Draws{D: 1, Z: []float64{nan, 2, 3}, W: []float64{0, 0.5, 0.5}}, 1, 2, []int{1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteDrawsDF(&buf, tc.d, tc.chains); err != nil {
				t.Fatal(err)
			}
			got, names, err := ReadAnyCSV(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if got.Len() != tc.wantRows || len(names) != tc.d.D || names[0] != "z[1]" {
				t.Fatalf("read %d rows, names %v; want %d rows", got.Len(), names, tc.wantRows)
			}
			if !slicesEqual(got.Chain, tc.wantChain) {
				t.Errorf("chains %v, want %v", got.Chain, tc.wantChain)
			}
			off := tc.d.Len() - tc.wantRows // dropped rows lead in these cases
			for k := range got.Len() {
				for i := range tc.d.D {
					if g, w := got.Z[k*tc.d.D+i], tc.d.Z[(k+off)*tc.d.D+i]; g != w {
						t.Errorf("draw %d z[%d] = %v, want %v", k, i+1, g, w)
					}
				}
				if tc.d.W != nil && math.Abs(got.W[k]-tc.d.W[k+off]/sumFrom(tc.d.W, off)) > 1e-15 {
					t.Errorf("weight %d = %v, want %v", k, got.W[k], tc.d.W[k+off])
				}
			}
		})
	}
	if err := WriteDrawsDF(&bytes.Buffer{}, &Draws{D: 1, Z: []float64{1, 2, 3}}, 2); err == nil {
		t.Error("3 draws in 2 chains: want an error")
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sumFrom(w []float64, off int) float64 {
	var s float64
	for _, v := range w[off:] {
		s += v
	}
	return s
}

// TestDrawsDFReadByPosterior checks the contract with R itself: posterior's
// as_draws_df(read.csv(FILE, check.names = FALSE)) sees the chains, the
// iterations, the variables z[1], z[2] with the same values, and weights()
// gives back the weights. Skipped when Rscript or posterior is missing.
func TestDrawsDFReadByPosterior(t *testing.T) {
	rscript, err := exec.LookPath("Rscript")
	if err != nil {
		t.Skip("Rscript not installed")
	}
	d := &Draws{D: 2, Z: []float64{0.5, -1, 1.25, 3, -0.125, 7, 2, 1e-3}, W: []float64{0.1, 0.2, 0.3, 0.4}}
	path := filepath.Join(t.TempDir(), "x.draws.csv")
	var buf bytes.Buffer
	if err := WriteDrawsDF(&buf, d, 2); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `suppressMessages(library(posterior))
x <- as_draws_df(read.csv(commandArgs(TRUE)[1], check.names = FALSE))
cat(nchains(x), niterations(x), paste(variables(x), collapse = " "), "\n")
cat(sprintf("%.17g", c(x[["z[1]"]], x[["z[2]"]], weights(x))), "\n")`
	out, err := exec.Command(rscript, "-e", script, path).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "there is no package called") {
			t.Skip("R package posterior not installed")
		}
		t.Fatalf("Rscript: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if got := strings.TrimSpace(lines[0]); got != "2 2 z[1] z[2]" {
		t.Errorf("posterior sees %q, want \"2 2 z[1] z[2]\" (chains, iterations, variables)", got)
	}
	want := []float64{0.5, 1.25, -0.125, 2, -1, 3, 7, 1e-3, 0.1, 0.2, 0.3, 0.4}
	fields := strings.Fields(lines[len(lines)-1])
	if len(fields) != len(want) {
		t.Fatalf("posterior returned %q", lines[len(lines)-1])
	}
	for i, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || math.Abs(v-want[i]) > 1e-15*math.Max(1, math.Abs(want[i])) {
			t.Errorf("value %d: posterior read %s, want %v", i, f, want[i])
		}
	}
}
