package cpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
)

// TestProgressCoversThePass: a forward pass under WithProgress reports
// from 0 to its embedding's FLOPs, never backwards, ends at the total
// exactly (the model counts every product the pass executes), and makes
// at most progressSteps+2 reports whatever the size of the task; a pass
// without a callback reports nothing to the next one.
func TestProgressCoversThePass(t *testing.T) {
	net := newTestNet(t, "small")
	for _, tc := range []struct{ d, n int }{{1, 1}, {3, 40}, {4, 700}} {
		t.Run(fmt.Sprintf("d=%d,N=%d", tc.d, tc.n), func(t *testing.T) {
			b := benchTask(t, tc.d, tc.n, 1)
			var got [][2]int64
			ctx := WithProgress(context.Background(), func(done, total int64) { got = append(got, [2]int64{done, total}) })
			if _, _, err := net.Gaussian(ctx, b); err != nil {
				t.Fatal(err)
			}
			want := embedFLOPs(net.cfg, tc.d, tc.n)
			if len(got) < 2 || len(got) > progressSteps+2 {
				t.Fatalf("%d reports, want 2 to %d", len(got), progressSteps+2)
			}
			if got[0] != [2]int64{0, want} || got[len(got)-1] != [2]int64{want, want} {
				t.Fatalf("reports run from %v to %v, want (0, %d) to (%d, %d)", got[0], got[len(got)-1], want, want, want)
			}
			for i := 1; i < len(got); i++ {
				if got[i][0] < got[i-1][0] || got[i][1] != want {
					t.Fatalf("report %d = %v after %v", i, got[i], got[i-1])
				}
			}
			n := len(got)
			if _, _, err := net.Gaussian(context.Background(), b); err != nil {
				t.Fatal(err)
			}
			if len(got) != n {
				t.Errorf("a pass without a callback reported %d times to an earlier one's", len(got)-n)
			}
		})
	}
}

// TestFLOPsLinearBesideAttention pins where a forward pass's cost grows
// faster than N: every product except the merge blocks' factor-axis
// attention (Q·Kᵀ and A·V over all K = N+1 tokens, the paper's design:
// 4·K²·(d+d²)·C FLOPs per block as written, 4·K²·(d+d(d+1)/2)·C as
// inference runs it on the pair part's upper triangle) costs the same
// per site at every N, so the rest is exactly affine in N.
func TestFLOPsLinearBesideAttention(t *testing.T) {
	for _, name := range []string{"small", "paper"} {
		cfg, err := arch.ConfigByName(name, "gaussian")
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []int{1, 3, 8, 32} {
			attention := func(n int) int64 {
				K := int64(n + 1)
				return int64(cfg.Blocks) * 4 * K * K * int64((d+d*(d+1)/2)*cfg.C)
			}
			rest := func(n int) int64 { return FLOPs(cfg, d, n) - attention(n) }
			full := func(n int) int64 {
				K := int64(n + 1)
				return UnfactorisedFLOPs(cfg, d, n) - int64(cfg.Blocks)*4*K*K*int64((d+d*d)*cfg.C)
			}
			if f1, f2, f3 := full(100), full(200), full(300); f3-f2 != f2-f1 {
				t.Errorf("%s d=%d: the unfactorised count is not (d+d²)·C attention plus an affine rest", name, d)
			}
			// Affine: equal increments over equal steps of N, from 10 to
			// 1.36 million sites.
			step := rest(20) - rest(10)
			for _, n := range []int{1000, 10_000, 100_000, 1_360_000} {
				if inc := rest(n+10) - rest(n); inc != step {
					t.Errorf("%s d=%d: the non-attention FLOPs grow by %d per 10 sites at N=%d, %d at N=10", name, d, inc, n, step)
				}
			}
			// And attention is what makes N=100,000 cost ~100× N=10,000.
			r := float64(FLOPs(cfg, d, 100_000)) / float64(FLOPs(cfg, d, 10_000))
			ra := float64(attention(100_000)) / float64(attention(10_000))
			if ra < 99.9 || ra > 100.1 || r > ra {
				t.Errorf("%s d=%d: N 10k→100k multiplies FLOPs by %.1f, attention by %.1f", name, d, r, ra)
			}
		}
	}
}

// TestPredictSeconds: the prediction is FLOPs at the kernel's measured
// rate; an unmeasured kernel gets the fastest rate and says its figure is
// a lower bound.
func TestPredictSeconds(t *testing.T) {
	cfg := arch.SmallConfig("gaussian")
	f := float64(FLOPs(cfg, 3, 10_000))
	for _, tc := range []struct {
		kernel  string
		rate    float64
		atLeast bool
	}{{"avx2", forwardRates["avx2"], false}, {"generic", forwardRates["generic"], false}, {"neon", forwardRates["avx512"], true}} {
		s, atLeast := PredictSeconds(cfg, 3, 10_000, tc.kernel)
		if s != f/tc.rate || atLeast != tc.atLeast {
			t.Errorf("%s: %g s (at least %v), want %g (%v)", tc.kernel, s, atLeast, f/tc.rate, tc.atLeast)
		}
	}
}
