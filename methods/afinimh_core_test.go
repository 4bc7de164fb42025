package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/afin-bench/afin/baselines/nuts"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// conjugate returns a simulated diag_gaussian/lin_gaussian task and its
// exact posterior moments.
func conjugate(t *testing.T, d int) (*factor.Task, []float64, []float64) {
	t.Helper()
	return conjugateFrom(t, rand.New(rand.NewPCG(4, 5)), d, 16)
}

// gaussianProposal is N(mean + shift, inflate·cov) as a posterior.Gaussian.
func gaussianProposal(t *testing.T, mean, cov []float64, shift, inflate float64) *posterior.Gaussian {
	t.Helper()
	d := len(mean)
	m := make([]float64, d)
	c := make([]float64, d*d)
	for i := range m {
		m[i] = mean[i] + shift
	}
	for i := range c {
		c[i] = cov[i] * inflate
	}
	l, ok := posterior.Cholesky(c, d, 0)
	if !ok {
		t.Fatal("proposal covariance not positive definite")
	}
	return &posterior.Gaussian{Mean: m, L: l}
}

// TestIndependenceMHExact: with proposals that are shifted and too wide
// (or too narrow), the IMH chains still reproduce the exact posterior's
// mean and variances within Monte Carlo error (a few ESS-based standard
// errors), and the acceptance rate is 1 when the proposal is the target.
func TestIndependenceMHExact(t *testing.T) {
	task, mean, cov := conjugate(t, 3)
	d := task.D
	for _, tc := range []struct {
		name           string
		shift, inflate float64
		acceptLo       float64
	}{
		{"exact proposal", 0, 1, 0.999},
		{"wide shifted", 0.3 * math.Sqrt(cov[0]), 2.5, 0.2},
		{"narrow", 0, 0.7, 0.5},
	} {
		q := gaussianProposal(t, mean, cov, tc.shift, tc.inflate)
		rng := rand.New(rand.NewPCG(8, 9))
		const chains, keep, burn = 4, 5000, 500
		props, lq := posterior.DrawsOf(q, rng, chains*(1+burn+keep))
		res, err := independenceMH(context.Background(), task, props, lq, chains, burn, rng)
		if err != nil {
			t.Fatal(err)
		}
		var all []float64
		for _, c := range res.chains {
			if len(c) != keep*d {
				t.Fatalf("%s: chain holds %d values, want %d", tc.name, len(c), keep*d)
			}
			all = append(all, c...)
		}
		dr := &posterior.Draws{D: d, Z: all}
		mu, c := dr.Mean(), dr.Cov()
		for j := range d {
			sd := math.Sqrt(cov[j*d+j])
			// IMH's ESS per draw is at least its acceptance rate in
			// these cases; 5 standard errors at that ESS.
			se := sd / math.Sqrt(res.accept*chains*keep)
			if math.Abs(mu[j]-mean[j]) > 5*se || math.Abs(c[j*d+j]/cov[j*d+j]-1) > 0.1 {
				t.Errorf("%s coordinate %d: mean %.4f (exact %.4f, se %.4f), var %.4f (exact %.4f)", tc.name, j, mu[j], mean[j], se, c[j*d+j], cov[j*d+j])
			}
		}
		t.Logf("%s: accept %.3f, k̂ %.3f", tc.name, res.accept, res.paretoK)
		if res.accept < tc.acceptLo {
			t.Errorf("%s: acceptance %.3f, want ≥ %v", tc.name, res.accept, tc.acceptLo)
		}
	}
}

func TestIMHOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		o      IMHOptions
		ladder []int
		ok     bool
	}{
		{DefaultIMHOptions(), []int{400, 4000}, true},
		{IMHOptions{Chains: 0}, []int{400}, false},
		{IMHOptions{Chains: 4, BurnIn: -1}, []int{400}, false},
		{DefaultIMHOptions(), []int{402}, false},
		{DefaultIMHOptions(), []int{8}, false},
	} {
		if err := tc.o.check(tc.ladder); (err == nil) != tc.ok {
			t.Errorf("%+v %v: err %v, want ok=%v", tc.o, tc.ladder, err, tc.ok)
		}
	}
}

// TestThinned keeps every k-th draw of each chain.
func TestThinned(t *testing.T) {
	res := &nuts.Result{D: 2, Chains: [][]float64{{0, 0, 1, 1, 2, 2, 3, 3}, {10, 10, 11, 11, 12, 12, 13, 13}}}
	got := thinned(res, 2).Z
	want := []float64{0, 0, 2, 2, 10, 10, 12, 12}
	if !slices.Equal(got, want) {
		t.Errorf("thinned %v, want %v", got, want)
	}
}
