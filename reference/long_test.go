package reference

import (
	"context"
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/afin-bench/afin/factor"
)

var long = flag.Bool("long", false, "run the long validation: quick-profile references for the 48 synthetic settings")

// TestLongSyntheticQuickProfile computes quick-profile references for the
// 48 synthetic settings (4 priors × 4 likelihoods × easy/medium/hard) and
// requires every one to pass the convergence check. Run with
// `go test ./reference -run LongSynthetic -long -v`; it reports the total
// wall-clock time.
func TestLongSyntheticQuickProfile(t *testing.T) {
	if !*long {
		t.Skip("-long not set: quick-profile references for the 48 synthetic settings (go tool task test:long)")
	}
	tiers := []struct {
		name string
		d, n int
	}{{"easy", 4, 256}, {"medium", 8, 64}, {"hard", 16, 1}}
	liks := []string{factor.LinGaussianFamily, factor.BernoulliLogitFamily, factor.BinomialLogitFamily, factor.LinStudentTFamily}
	dir := t.TempDir()
	start := time.Now()
	var nExact, nNUTS int
	for pi, prior := range factor.PriorFamilies {
		for li, lik := range liks {
			for ti, tier := range tiers {
				seed := uint64(1000 + 100*pi + 10*li + ti)
				task, err := factor.Simulate(rand.New(rand.NewPCG(seed, 1)), factor.SimOptions{D: tier.d, N: tier.n, Prior: prior, Likelihoods: []string{lik}, Design: factor.DesignIID})
				if err != nil {
					t.Fatal(err)
				}
				t0 := time.Now()
				ref, err := Get(context.Background(), task, Settings{Profile: ProfileQuick, CacheDir: dir, Seed: seed})
				if err != nil {
					t.Errorf("%s/%s/%s: %v", prior, lik, tier.name, err)
					continue
				}
				dg := ref.Diagnostics
				if ref.Kind == KindExact {
					nExact++
				} else {
					nNUTS++
				}
				t.Logf("%-17s %-15s %-6s %-5s %6.2fs  R̂ %.4f  ESS %6.0f  div %d  step %.3f  grads %d",
					prior, lik, tier.name, ref.Kind, time.Since(t0).Seconds(), dg.MaxRhat, dg.MinESSBulk, dg.Divergences, dg.StepSize, dg.GradEvals)
			}
		}
	}
	t.Logf("48 settings: %d exact, %d NUTS, total %.1f s", nExact, nNUTS, time.Since(start).Seconds())
}
