package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reference"
	"github.com/afin-bench/afin/reports"
)

// TestExternalModels checks what the suite promises of its models: at
// least 12, every likelihood family and several priors, (d, N) inside
// the shipped checkpoint's support, wide priors, raw covariate scales,
// 20–100 binomial trials, and data that depend only on (model, seed).
func TestExternalModels(t *testing.T) {
	settings, err := Settings(ExternalSuite)
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) < 12 {
		t.Fatalf("%d external models, want ≥ 12", len(settings))
	}
	liks, priors := map[string]bool{}, map[string]bool{}
	maxX, conjugate := 0.0, 0
	for _, s := range settings {
		task, err := ExternalTask(s, 0)
		if err != nil {
			t.Fatalf("%s: %v", s.Key, err)
		}
		if task.D > 16 || task.N() > 256 || task.D != s.D || task.N() != s.N {
			t.Errorf("%s: d=%d N=%d (setting %d, %d), want inside d ≤ 16, N ≤ 256", s.Key, task.D, task.N(), s.D, s.N)
		}
		if task.Prior.Family() != s.Prior {
			t.Errorf("%s: prior %s, setting says %s", s.Key, task.Prior.Family(), s.Prior)
		}
		priors[s.Prior] = true
		if factor.IsConjugate(task) {
			conjugate++
		}
		for i, f := range task.Factors {
			if f.Family() != s.Likelihood {
				t.Fatalf("%s: factor %d is %s, setting says %s", s.Key, i, f.Family(), s.Likelihood)
			}
			liks[f.Family()] = true
			if c, ok := f.(interface{ Covariate() []float64 }); ok {
				for _, v := range c.Covariate() {
					maxX = max(maxX, math.Abs(v))
				}
			}
			if b, ok := f.(*factor.BinomialLogit); ok && (b.Trials < 20 || b.Trials > 100) {
				t.Errorf("%s: factor %d has %d trials, want 20–100", s.Key, i, b.Trials)
			}
		}
		// Same (model, seed): the same task; another seed: other data.
		again, _ := ExternalTask(s, 0)
		h0, _ := TaskHash(task)
		h1, _ := TaskHash(again)
		other, _ := ExternalTask(s, 1)
		h2, _ := TaskHash(other)
		if h0 != h1 || h0 == h2 {
			t.Errorf("%s: seed 0 twice gives equal tasks %v, seeds 0 and 1 differ %v; want true, true", s.Key, h0 == h1, h0 != h2)
		}
	}
	for _, l := range []string{factor.LinGaussianFamily, factor.LinStudentTFamily, factor.BernoulliLogitFamily, factor.BinomialLogitFamily, factor.GaussianFamily} {
		if !liks[l] {
			t.Errorf("no external model has likelihood %s", l)
		}
	}
	if len(priors) < 4 {
		t.Errorf("external models use priors %v, want all four families", priors)
	}
	if maxX < 100 {
		t.Errorf("largest |x| %g, want raw covariates in the hundreds", maxX)
	}
	if conjugate < 4 {
		t.Errorf("%d conjugate models, want ≥ 4 (exact references)", conjugate)
	}
	if _, err := ExternalTask(Setting{Suite: ExternalSuite, Key: "nope"}, 0); err == nil {
		t.Error("an unknown model key built a task")
	}
}

// TestMarginalErrors checks the per-coordinate errors on draws whose
// moments are known by hand, weighted and not, and that a non-finite
// answer is NaN (never accurate).
func TestMarginalErrors(t *testing.T) {
	ref := &Reference{Mean: []float64{1, 0}, Cov: []float64{4, 0, 0, 1}}
	for _, tc := range []struct {
		name         string
		draws        *posterior.Draws
		mean, lo, hi float64
		nan          bool
	}{
		// Coordinate 0: mean 2, sd √2 → error 0.5 sd, ratio √2/2;
		// coordinate 1: mean −1, sd √2 → error 1 sd, ratio √2.
		{"unweighted", &posterior.Draws{D: 2, Z: []float64{1, -2, 3, 0}}, 1, math.Sqrt2 / 2, math.Sqrt2, false},
		// Weights ¾, ¼ on (0, 0), (4, 2): mean (1, 0.5), weighted sd
		// (√3, √3/2) → errors 0, 0.5; ratios √3/2, √3/2.
		{"weighted", &posterior.Draws{D: 2, Z: []float64{0, 0, 4, 2}, W: []float64{0.75, 0.25}}, 0.5, math.Sqrt(3) / 2, math.Sqrt(3) / 2, false},
		{"non-finite draw", &posterior.Draws{D: 2, Z: []float64{math.Inf(1), 0, 1, 1}}, 0, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mean, cov := tc.draws.MeanCov()
			m := marginalErrors(mean, cov, ref)
			got := []float64{float64(m.MaxMeanErr), float64(m.MinSDRatio), float64(m.MaxSDRatio)}
			if tc.nan {
				for _, v := range got {
					if !math.IsNaN(v) {
						t.Fatalf("got %v, want NaN", got)
					}
				}
				return
			}
			for i, want := range []float64{tc.mean, tc.lo, tc.hi} {
				if math.Abs(got[i]-want) > 1e-12 {
					t.Fatalf("got %v, want %v", got, []float64{tc.mean, tc.lo, tc.hi})
				}
			}
		})
	}
}

// TestCheckExternalReference: exact references pass; NUTS ones must have
// R̂ ≤ 1.01 and bulk ESS ≥ 4,000, NaN failing.
func TestCheckExternalReference(t *testing.T) {
	for _, tc := range []struct {
		kind      string
		rhat, ess float64
		ok        bool
	}{
		{reference.KindExact, 0, 0, true},
		{reference.KindNUTS, 1.004, 9000, true},
		{reference.KindNUTS, 1.01, 4000, true},
		{reference.KindNUTS, 1.011, 9000, false},
		{reference.KindNUTS, 1.001, 3999, false},
		{reference.KindNUTS, math.NaN(), 9000, false},
		{reference.KindNUTS, 1.001, math.NaN(), false},
	} {
		ref := &reference.Reference{Kind: tc.kind, Diagnostics: reference.Diagnostics{MaxRhat: tc.rhat, MinESSBulk: tc.ess}}
		err := checkExternalReference(ref)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrExternalReference)) {
			t.Errorf("%s R̂ %g ESS %g: %v, want ok=%v", tc.kind, tc.rhat, tc.ess, err, tc.ok)
		}
	}
	s := externalReferenceSettings(&Profile{Reference: reference.Settings{Profile: reference.ProfileSmoke}})
	if s.Draws < 40000 || s.Chains < 4 || s.Subsample < 10000 || !s.Dense || s.MinESS != 4000 || s.MaxRhat != 1.01 {
		t.Errorf("smoke profile's external reference settings %+v fall below the suite's bar", s)
	}
}

// TestExternalTrustEndToEnd runs the conjugate models of the suite with
// exact and NUTS at the smoke profile and classifies the records: every
// record carries marginals, exact answers are accurate and silent, and
// the trust table counts one answer per model and method.
func TestExternalTrustEndToEnd(t *testing.T) {
	prof, err := GetProfile("smoke")
	if err != nil {
		t.Fatal(err)
	}
	all, _ := Settings(ExternalSuite)
	var conj []Setting
	for _, s := range all {
		task, err := ExternalTask(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		if factor.IsConjugate(task) {
			conj = append(conj, s)
		}
	}
	dir := t.TempDir()
	sum, err := Run(context.Background(), Config{
		Suite: ExternalSuite, Profile: prof, Results: dir, RefCacheDir: t.TempDir(),
		Methods: []string{"exact", "nuts"}, Settings: conj,
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ran != 2*len(conj) || sum.Failed != 0 {
		t.Fatalf("ran %d units (%d failed), want %d", sum.Ran, sum.Failed, 2*len(conj))
	}
	recs, err := records.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		r := &recs[i]
		if r.Marginals == nil || r.Reference.Kind != reference.KindExact {
			t.Fatalf("%s/%s: marginals %v, reference %q; want marginals against an exact reference", r.Setting, r.Method, r.Marginals, r.Reference.Kind)
		}
		c, ok := reports.Classify(r)
		if !ok {
			t.Fatalf("%s/%s: not classifiable", r.Setting, r.Method)
		}
		if r.Method == "exact" && c != reports.AccurateSilent {
			t.Errorf("%s: exact answer classed %s (marginals %+v)", r.Setting, reports.ClassName(c), *r.Marginals)
		}
	}
	tab := reports.TrustTable(recs, "trust")
	if len(tab.Rows) != 2 {
		t.Fatalf("trust table has %d rows, want exact and nuts", len(tab.Rows))
	}
	for _, row := range tab.Rows {
		n := 0
		for _, c := range row[2:] {
			var k int
			for _, ch := range c.Text {
				k = 10*k + int(ch-'0')
			}
			n += k
		}
		if n != len(conj) || !slices.Contains([]string{"exact", "nuts"}, row[0].Text) {
			t.Errorf("row %s counts %d answers, want %d", row[0].Text, n, len(conj))
		}
	}
}

// TestExternalModelsDocumented: docs/external-suite.md lists every model
// with its prior, likelihood, d, N and description as the code defines
// them.
func TestExternalModelsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "external-suite.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range externalModels {
		row := fmt.Sprintf("| `%s` | %s | %s | %d | %d | %s |", m.key, m.prior, m.likelihood, m.d, m.n, m.about)
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/external-suite.md lacks the row %q", row)
		}
	}
}
