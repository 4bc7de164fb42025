package datasets

import (
	"context"
	"flag"
	"math"
	"testing"
	"time"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/reference"
)

var long = flag.Bool("long", false, "run the long validation: quick-profile NUTS references for the 12 UCI tasks")

// TestUCIReferencesQuickProfile computes the quick-profile reference of
// every UCI task and requires each to pass the convergence check (R̂ <
// 1.01, bulk ESS at the reference floor) with no post-warm-up divergences,
// and to be served from the cache on a second request. Run with
// `go test ./datasets -run UCIReferences -v -args -long`.
//
// The reference starts all chains at the prior location, so its R̂ cannot
// see a mode those chains never left for. Each task is therefore also
// sampled from dispersed starts (another seed, ±2 per coordinate, beyond
// the prior's unit scale): its mean must agree with the reference's to a
// tenth of a posterior SD per coordinate, about ten Monte Carlo standard
// errors at these ESS values, so a missed mode fails while noise cannot.
func TestUCIReferencesQuickProfile(t *testing.T) {
	if !*long {
		t.Skip("-long not set: quick-profile NUTS references for the 12 UCI tasks (go tool task test:long)")
	}
	dir := dataDir(t)
	cache := t.TempDir()
	start := time.Now()
	for _, in := range List() {
		t.Run(in.Key, func(t *testing.T) {
			task, err := Load(dir, in.Key)
			if err != nil {
				t.Fatal(err)
			}
			s := reference.Settings{Profile: reference.ProfileQuick, CacheDir: cache, Seed: 1}
			resolved, err := s.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			ref, err := reference.Get(context.Background(), task, s)
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			secs := time.Since(t0).Seconds()
			dg := ref.Diagnostics
			t.Logf("d=%-2d N=%-3d %-4s %5.2fs  R̂ %.4f  bulk ESS %6.0f  tail ESS %6.0f  div %d  step %.3f  grads %d",
				task.D, len(task.Factors), ref.Kind, secs, dg.MaxRhat, dg.MinESSBulk, dg.MinESSTail, dg.Divergences, dg.StepSize, dg.GradEvals)
			if ref.Kind != reference.KindNUTS {
				// No UCI task is conjugate (Laplace or Student-t priors,
				// or non-Gaussian likelihoods); an exact reference here
				// would mean a task lost its non-conjugate factors.
				t.Errorf("kind %q, want %q", ref.Kind, reference.KindNUTS)
			}
			if !(dg.MaxRhat < 1.01) {
				t.Errorf("max R̂ %.4f, want < 1.01", dg.MaxRhat)
			}
			if !(dg.MinESSBulk >= resolved.MinESS) || !(dg.MinESSTail >= resolved.MinESS) {
				t.Errorf("min ESS bulk %.0f, tail %.0f, want >= %.0f", dg.MinESSBulk, dg.MinESSTail, resolved.MinESS)
			}
			if dg.Divergences != 0 {
				t.Errorf("%d divergent transitions after warm-up", dg.Divergences)
			}
			again, err := reference.Get(context.Background(), task, s)
			if err != nil {
				t.Fatalf("second request: %v", err)
			}
			if !again.CacheHit {
				t.Errorf("second request recomputed the reference instead of reading %s", ref.CachePath)
			}

			res, err := nuts.Sample(context.Background(), task, task.D, nuts.Config{
				Warmup: 1000, Draws: 2000, Chains: 4, Seed: 2, Init: task.Prior.Location(), Jitter: 2,
			})
			if err != nil {
				t.Fatalf("dispersed NUTS: %v", err)
			}
			if !(res.Convergence.MaxRhat < 1.01) || res.Divergences != 0 {
				t.Errorf("dispersed NUTS: max R̂ %.4f, %d divergences", res.Convergence.MaxRhat, res.Divergences)
			}
			mean := res.Draws().Mean()
			var worst float64
			for i := range mean {
				sd := math.Sqrt(ref.Cov[i*task.D+i])
				diff := math.Abs(mean[i] - ref.Mean[i])
				if !(diff < 0.1*sd) {
					t.Errorf("z[%d]: dispersed-start mean %.4f, reference %.4f (posterior SD %.4f)", i, mean[i], ref.Mean[i], sd)
				}
				worst = math.Max(worst, diff/sd)
			}
			t.Logf("dispersed starts: R̂ %.4f, worst mean gap %.3f posterior SD", res.Convergence.MaxRhat, worst)
		})
	}
	t.Logf("12 UCI references: total %.1f s", time.Since(start).Seconds())
}
