package posterior

import (
	"bufio"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The golden values in testdata come from R: loo::psis() (gen_loo.R) and
// posterior's rhat()/ess_*() (gen_posterior.R, gen_short_chains.R). The versions are recorded
// in the first line of each result file. R is only needed to regenerate
// them, never to run the tests.

// readCSVTable reads a CSV file, skipping lines that start with '#', and
// returns its header and rows.
func readCSVTable(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "#") {
			lines = append(lines, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(strings.Join(lines, "\n"))).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs[0], recs[1:]
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParetoKMatchesLoo(t *testing.T) {
	_, rows := readCSVTable(t, filepath.Join("testdata", "loo_psis_khat.csv"))
	if len(rows) < 3 {
		t.Fatalf("want at least 3 golden vectors, have %d", len(rows))
	}
	for _, r := range rows {
		name, wantK := r[0], parseF(t, r[2])
		t.Run(name, func(t *testing.T) {
			_, vec := readCSVTable(t, filepath.Join("testdata", "psis_"+name+".csv"))
			if s, _ := strconv.Atoi(r[1]); s != len(vec) {
				t.Fatalf("fixture has %d rows, result file says %d", len(vec), s)
			}
			logW := make([]float64, len(vec))
			wantLW := make([]float64, len(vec))
			for i, v := range vec {
				logW[i], wantLW[i] = parseF(t, v[0]), parseF(t, v[1])
			}
			// Both estimators run the same arithmetic; only summation
			// order (R's vectorised means) can differ, so agreement is
			// expected to ~1e-12.
			if k := ParetoK(logW); math.Abs(k-wantK) > 1e-9 {
				t.Errorf("ParetoK = %.15g, loo = %.15g", k, wantK)
			}
			lw, k, err := PSIS(logW)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(k-wantK) > 1e-9 {
				t.Errorf("PSIS k = %.15g, loo = %.15g", k, wantK)
			}
			var worst float64
			for i := range lw {
				worst = math.Max(worst, math.Abs(lw[i]-wantLW[i]))
			}
			if worst > 1e-9 {
				t.Errorf("smoothed log weights differ from loo by up to %g", worst)
			}
		})
	}
}

// TestMCMCDiagnosticsMatchPosterior compares R̂ and the ESSs with R
// posterior's on long chains (gen_posterior.R) and on chains of 4 to 12
// draws (gen_short_chains.R), where its small-sample rules decide the
// answer; posterior's NA is afin's NaN.
func TestMCMCDiagnosticsMatchPosterior(t *testing.T) {
	tests := []struct {
		chains, results string
		tol             float64 // relative
	}{
		{"mcmc_chains.csv", "mcmc_posterior.csv", 1e-12},
		{"short_chains.csv", "short_posterior.csv", 1e-12},
	}
	for _, tc := range tests {
		t.Run(tc.results, func(t *testing.T) {
			sets := readChainSets(t, filepath.Join("testdata", tc.chains))
			_, rows := readCSVTable(t, filepath.Join("testdata", tc.results))
			for _, r := range rows {
				chains := sets[r[0]]
				if chains == nil {
					t.Fatalf("no chains for set %s", r[0])
				}
				checkMCMCRow(t, r, chains, tc.tol)
			}
		})
	}
}

// readChainSets reads a set,chain,value CSV into chains per set.
func readChainSets(t *testing.T, path string) map[string][][]float64 {
	t.Helper()
	_, draws := readCSVTable(t, path)
	sets := map[string][][]float64{}
	for _, r := range draws {
		m, _ := strconv.Atoi(r[1])
		for len(sets[r[0]]) < m {
			sets[r[0]] = append(sets[r[0]], nil)
		}
		sets[r[0]][m-1] = append(sets[r[0]][m-1], parseF(t, r[2]))
	}
	return sets
}

func checkMCMCRow(t *testing.T, r []string, chains [][]float64, tol float64) {
	t.Helper()
	for i, c := range []struct {
		name string
		f    func([][]float64) float64
	}{{"rhat", SplitRhat}, {"ess_bulk", ESSBulk}, {"ess_tail", ESSTail}, {"ess_basic", ESS}} {
		got := c.f(chains)
		if r[1+i] == "NA" {
			if !math.IsNaN(got) {
				t.Errorf("%s %s = %.15g, posterior = NA", r[0], c.name, got)
			}
			continue
		}
		want := parseF(t, r[1+i])
		if !(math.Abs(got-want) <= tol*math.Abs(want)) {
			t.Errorf("%s %s = %.15g, posterior = %.15g", r[0], c.name, got, want)
		}
	}
}

// TestParetoKMLEMatchesScipy compares the authors' estimator with the
// golden values of gen_scipy_mle.py (scipy's genpareto.fit, a Nelder–Mead
// search with tolerance 1e-4, hence the tolerance). For a tail shape below
// −1 the GPD likelihood is unbounded and no maximum exists: scipy stops
// wherever its simplex does, ParetoKMLE falls back to the method of
// moments, so only the regime (k̂ < −1) is compared.
func TestParetoKMLEMatchesScipy(t *testing.T) {
	_, rows := readCSVTable(t, filepath.Join("testdata", "scipy_mle_khat.csv"))
	for _, r := range rows {
		name, want := r[0], parseF(t, r[3])
		_, vec := readCSVTable(t, filepath.Join("testdata", "psis_"+name+".csv"))
		logW := make([]float64, len(vec))
		for i, v := range vec {
			logW[i] = parseF(t, v[0])
		}
		got := ParetoKMLE(logW)
		t.Logf("%s: ParetoKMLE %.6f, scipy %.6f", name, got, want)
		if want < -1 {
			if !(got < -1) {
				t.Errorf("%s: k̂ = %v, scipy %v: want both below −1", name, got, want)
			}
			continue
		}
		if math.Abs(got-want) > 2e-4 {
			t.Errorf("%s: ParetoKMLE = %.6f, scipy %.6f", name, got, want)
		}
	}
}
