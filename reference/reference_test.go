package reference

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/factor/factortest"
)

func simTask(t *testing.T, seed uint64, prior, lik string, d, n int) *factor.Task {
	return factortest.Simulate(t, seed, 3, prior, lik, d, n)
}

func maxAbsDiff(a, b []float64) float64 { return factortest.MaxAbsDiff(a, b) }

func TestExactReference(t *testing.T) {
	task := simTask(t, 1, factor.FullRankGaussianFamily, factor.LinGaussianFamily, 3, 10)
	ref, err := Get(context.Background(), task, Settings{Subsample: 20000, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Kind != KindExact || ref.CacheHit {
		t.Fatalf("kind %q hit %v, want exact, no hit", ref.Kind, ref.CacheHit)
	}
	mean, cov, _ := factor.ExactPosterior(task)
	if maxAbsDiff(ref.Mean, mean) != 0 || maxAbsDiff(ref.Cov, cov) != 0 {
		t.Error("exact reference moments differ from factor.ExactPosterior")
	}
	if ref.Draws.Len() != 20000 {
		t.Fatalf("subsample has %d draws, want 20000", ref.Draws.Len())
	}
	// The subsample is a draw from the exact Gaussian: its mean is within
	// a few standard errors.
	m := ref.Draws.Mean()
	for i := range m {
		se := math.Sqrt(cov[i*3+i] / 20000)
		if math.Abs(m[i]-mean[i]) > 5*se {
			t.Errorf("subsample mean[%d] = %g, exact %g (se %g)", i, m[i], mean[i], se)
		}
	}
}

func TestNUTSReferenceCache(t *testing.T) {
	task := simTask(t, 2, factor.DiagLaplaceFamily, factor.BernoulliLogitFamily, 2, 30)
	dir := t.TempDir()
	s := Settings{Draws: 8000, Warmup: 400, Chains: 2, Subsample: 2000, CacheDir: dir, Seed: 9}
	ctx := context.Background()
	first, err := Get(ctx, task, s)
	if err != nil {
		t.Fatal(err)
	}
	if first.Kind != KindNUTS || first.CacheHit {
		t.Fatalf("first call: kind %q hit %v, want nuts miss", first.Kind, first.CacheHit)
	}
	if n := first.Draws.Len(); n != 2000 {
		t.Errorf("subsample has %d draws, want 2000", n)
	}
	if _, err := os.Stat(first.CachePath); err != nil {
		t.Fatalf("cache file missing: %v", err)
	}
	second, err := Get(ctx, task, s)
	if err != nil {
		t.Fatal(err)
	}
	if !second.CacheHit || second.Key != first.Key {
		t.Fatalf("second call: hit %v key %s, want hit on %s", second.CacheHit, second.Key, first.Key)
	}
	if maxAbsDiff(first.Mean, second.Mean) != 0 || maxAbsDiff(first.Cov, second.Cov) != 0 || maxAbsDiff(first.Draws.Z, second.Draws.Z) != 0 {
		t.Error("cached reference differs from the computed one")
	}
	if second.Diagnostics.MaxRhat != first.Diagnostics.MaxRhat {
		t.Error("diagnostics not cached")
	}
	// The key covers the task content (not its name) and the settings.
	data, _ := factor.MarshalTask(task)
	again, err := factor.ParseTask(data)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := Key(again, mustResolve(t, s)); k != first.Key {
		t.Error("re-parsed task has a different key")
	}
	s2 := s
	s2.Seed = 10
	if k, _ := Key(task, mustResolve(t, s2)); k == first.Key {
		t.Error("a different seed gives the same key")
	}
	// No stray temporary files.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || filepath.Ext(entries[0].Name()) != ".gob" || strings.HasPrefix(entries[0].Name(), ".tmp") {
		t.Errorf("cache dir holds %v, want exactly one .gob file", entries)
	}
}

func mustResolve(t *testing.T, s Settings) Settings {
	t.Helper()
	r, err := s.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStreamingMomentsMatchDraws(t *testing.T) {
	// With thinning 1 every draw is kept, so the streaming moments must
	// equal the two-pass moments of the kept draws.
	task := simTask(t, 4, factor.DiagStudentTFamily, factor.LinStudentTFamily, 3, 10)
	ref, err := Get(context.Background(), task, Settings{Draws: 3000, Warmup: 300, Chains: 3, Subsample: 3000, NoCache: true, MinESS: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Draws.Len() != 3000 {
		t.Fatalf("kept %d draws, want 3000", ref.Draws.Len())
	}
	if d := maxAbsDiff(ref.Mean, ref.Draws.Mean()); d > 1e-12 {
		t.Errorf("streaming mean differs from two-pass by %g", d)
	}
	if d := maxAbsDiff(ref.Cov, ref.Draws.Cov()); d > 1e-12 {
		t.Errorf("streaming covariance differs from two-pass by %g", d)
	}
}

func TestRefusesUnconverged(t *testing.T) {
	task := simTask(t, 5, factor.DiagGaussianFamily, factor.BinomialLogitFamily, 4, 20)
	dir := t.TempDir()
	ref, err := Get(context.Background(), task, Settings{Draws: 40, Warmup: 20, Chains: 2, Subsample: 40, CacheDir: dir})
	var ce *ConvergenceError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a ConvergenceError", err)
	}
	if ref == nil || ce.Reference != ref {
		t.Error("the failed reference should come back for inspection")
	}
	msg := err.Error()
	for _, want := range []string{"R̂", "ESS", "need >= 400"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an unconverged reference was cached: %v", entries)
	}
}

func TestSettings(t *testing.T) {
	p, err := Settings{Profile: ProfilePaper}.Resolve()
	if err != nil || p.Draws != 1000000 || p.Warmup != 10000 {
		t.Errorf("paper profile resolved to %+v, %v", p, err)
	}
	q, _ := Settings{}.Resolve()
	if q.Profile != ProfileQuick || q.Draws != 20000 || q.Chains != 4 || q.Warmup != 1000 || q.Subsample != 50000 {
		t.Errorf("quick profile resolved to %+v", q)
	}
	for _, s := range []Settings{{Profile: "slow"}, {Chains: -1}, {Draws: 3}, {Warmup: -2}} {
		if _, err := s.Resolve(); err == nil {
			t.Errorf("settings %+v accepted", s)
		}
	}
	if d, _ := DefaultCacheDir("/x/y"); d != "/x/y" {
		t.Errorf("cache root ignored: %s", d)
	}
	t.Setenv("XDG_CACHE_HOME", "/u/c") // os.UserCacheDir on Linux
	t.Setenv("HOME", "/u")
	want, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := DefaultCacheDir(""); d != filepath.Join(want, "afin", "references") {
		t.Errorf("default cache dir %s, want under %s", d, want)
	}
}

func TestKeyIgnoresNameAndTrueZ(t *testing.T) {
	task := &factor.Task{
		Name:    "a",
		D:       1,
		Prior:   &factor.DiagGaussian{Loc: []float64{0}, Scale: []float64{1}},
		Factors: []factor.Likelihood{&factor.LinGaussian{X: []float64{1}, Y: 0.5, Sigma: 1}},
		TrueZ:   []float64{0.3},
	}
	renamed := *task
	renamed.Name, renamed.TrueZ = "b", nil
	changed := *task
	changed.Factors = []factor.Likelihood{&factor.LinGaussian{X: []float64{1}, Y: 0.6, Sigma: 1}}
	s, err := Settings{}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	k1, _ := Key(task, s)
	k2, _ := Key(&renamed, s)
	k3, _ := Key(&changed, s)
	if k1 != k2 {
		t.Errorf("renaming the task changed its key")
	}
	if k1 == k3 {
		t.Errorf("changing an observation kept the key")
	}
}
