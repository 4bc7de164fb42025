package bench_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/bench"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reports"
	"github.com/afin-bench/afin/suite"
)

// tinySuite is a throw-away suite defined in this file alone: two
// hand-written conjugate regression tasks, the exact method at two
// budgets, and the default reference policy (exact where conjugate).
type tinySuite struct{ bench.BaseSuite }

const tinyName = "tiny-throwaway"

func (tinySuite) Info() suite.Info {
	return suite.Info{Name: tinyName, Scoring: suite.ByReference}
}

func (tinySuite) Settings(*bench.Profile) ([]bench.Setting, error) {
	var out []bench.Setting
	for _, k := range []string{"slope-small", "slope-large"} {
		out = append(out, bench.Setting{Suite: tinyName, Key: k, Group: "all",
			Prior: factor.DiagGaussianFamily, Likelihood: factor.LinGaussianFamily, D: 2, N: 30})
	}
	return out, nil
}

func (tinySuite) Plans(*bench.Profile) []bench.Plan {
	return []bench.Plan{{Method: "exact", Ladder: []int{200, 400}, Options: methods.DefaultOptions()}}
}

// Task: y = x·(1, slope) + noise, the slope set by the setting.
func (tinySuite) Task(_ *bench.Config, s bench.Setting, seed uint64) (*factor.Task, error) {
	slope := 0.5
	if s.Key == "slope-large" {
		slope = 3
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	t := &factor.Task{Name: s.Key, D: 2, Prior: &factor.DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{2, 2}}}
	for range s.N {
		x := []float64{1, rng.NormFloat64()}
		t.Factors = append(t.Factors, &factor.LinGaussian{X: x, Y: x[0] + slope*x[1] + 0.5*rng.NormFloat64(), Sigma: 0.5})
	}
	return t, nil
}

// A suite registered in the test binary, with no other file changed, is
// listed by the CLI's registry, runs through bench.Run, its records are
// accepted by the results reader, and the report draws its section;
// once unregistered, its records are refused again.
func TestThrowAwaySuite(t *testing.T) {
	prof, err := bench.GetProfile("smoke")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := bench.Config{Suite: tinyName, Profile: prof, Results: dir, RefCacheDir: t.TempDir()}
	if _, err := bench.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "unknown suite") {
		t.Fatalf("unregistered suite: err %v, want unknown suite", err)
	}

	undo := bench.Register(tinySuite{})
	registered := true
	defer func() {
		if registered {
			undo()
		}
	}()
	if !slices.Contains(bench.SuiteNames(), tinyName) {
		t.Fatalf("suite names %v lack %s", bench.SuiteNames(), tinyName)
	}
	sum, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 2 settings × 1 seed (smoke) × 1 method, 2 budgets each.
	if sum.Units != 2 || sum.Ran != 2 || sum.Records != 4 || sum.Failed != 0 {
		t.Fatalf("summary %+v", sum)
	}
	recs, err := records.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		// Exact draws against the exact conjugate posterior: M1 is Monte
		// Carlo error only (posterior sds ≈ 0.1, at most 400 draws).
		if r.Suite != tinyName || r.Reference.Kind != "exact" || !(float64(r.M1) < 0.05) {
			t.Errorf("record %s: suite %s reference %q M1 %v", r.Key(), r.Suite, r.Reference.Kind, r.M1)
		}
	}

	rep, err := reports.Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range rep.Sections {
		ids = append(ids, s.ID)
	}
	if !slices.Contains(ids, tinyName) {
		t.Fatalf("report sections %v lack %s", ids, tinyName)
	}
	var html bytes.Buffer
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "Suite "+tinyName) {
		t.Error("the HTML report does not show the suite's section")
	}

	undo()
	registered = false
	if _, err := records.ReadDir(dir); !errors.Is(err, records.ErrInvalidRecord) {
		t.Errorf("records of an unregistered suite read back with err %v, want ErrInvalidRecord", err)
	}
}
