package vi

import (
	"math"
	"testing"

	"github.com/afin-bench/afin/factor"
)

// TestPriorGaussian checks the starting Gaussian against each prior's
// covariance (diag: scale², Laplace: 2b², Student-t: scale²; full rank:
// the inverse of the precision), computed independently of the code under
// test.
func TestPriorGaussian(t *testing.T) {
	loc := []float64{0.3, -1, 2}
	scale := []float64{0.5, 1, 2}
	prec := []float64{
		2, 0.5, 0.1,
		0.5, 1.5, -0.3,
		0.1, -0.3, 1,
	}
	full, err := factor.NewFullRankGaussian(loc, prec)
	if err != nil {
		t.Fatal(err)
	}
	diagCov := func(f float64) []float64 {
		c := make([]float64, 9)
		for i, s := range scale {
			c[i*3+i] = f * s * s
		}
		return c
	}
	tests := []struct {
		name  string
		prior factor.Prior
		cov   []float64 // nil: check L·Lᵀ·Λ = I instead
	}{
		{"diag_gaussian", &factor.DiagGaussian{Loc: loc, Scale: scale}, diagCov(1)},
		{"diag_laplace", &factor.DiagLaplace{Loc: loc, Scale: scale}, diagCov(2)},
		{"diag_student_t", &factor.DiagStudentT{Loc: loc, Scale: scale, DF: 3}, diagCov(1)},
		{"fullrank_gaussian", full, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := PriorGaussian(tc.prior)
			if err != nil {
				t.Fatal(err)
			}
			for i := range loc {
				if g.Mean[i] != loc[i] {
					t.Errorf("mu[%d] = %g, want %g", i, g.Mean[i], loc[i])
				}
				if !(g.L[i*3+i] > 0) {
					t.Errorf("L[%d][%d] = %g, want > 0", i, i, g.L[i*3+i])
				}
				for j := i + 1; j < 3; j++ {
					if g.L[i*3+j] != 0 {
						t.Errorf("L[%d][%d] = %g above the diagonal", i, j, g.L[i*3+j])
					}
				}
			}
			c := g.Cov()
			for i := 0; i < 3; i++ {
				for j := 0; j < 3; j++ {
					want := 0.0
					got := c[i*3+j]
					if tc.cov != nil {
						want = tc.cov[i*3+j]
					} else {
						// (Σ Λ)_ij must be the identity.
						got = 0
						for k := 0; k < 3; k++ {
							got += c[i*3+k] * prec[k*3+j]
						}
						if i == j {
							want = 1
						}
					}
					if math.Abs(got-want) > 1e-12 {
						t.Errorf("entry [%d][%d] = %.15g, want %.15g", i, j, got, want)
					}
				}
			}
			// The mean is a copy: moving q must not move the prior.
			g.Mean[0] = 99
			if tc.prior.Location()[0] == 99 {
				t.Error("PriorGaussian aliases the prior location")
			}
		})
	}
}
