package moments

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestMeanVarAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 257)
	for i := range x {
		x[i] = 3 + 1e-3*rng.NormFloat64()
	}
	tests := []struct {
		name   string
		ddof   int
		gonumF func([]float64, []float64) (float64, float64)
	}{
		{"sample", 1, stat.MeanVariance},
		{"population", 0, stat.PopMeanVariance},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, v := MeanVar(x, tc.ddof)
			gm, gv := tc.gonumF(x, nil)
			if math.Abs(m-gm) > 1e-15*math.Abs(gm) || math.Abs(v-gv) > 1e-9*gv {
				t.Errorf("MeanVar = %v, %v; gonum %v, %v", m, v, gm, gv)
			}
		})
	}
}

func TestMeanVarSmall(t *testing.T) {
	tests := []struct {
		x       []float64
		ddof    int
		mean, v float64
	}{
		{[]float64{1, 2, 3, 4}, 1, 2.5, 5.0 / 3},
		{[]float64{1, 2, 3, 4}, 0, 2.5, 1.25},
		{[]float64{7}, 1, 7, 0},
	}
	for _, tc := range tests {
		m, v := MeanVar(tc.x, tc.ddof)
		if m != tc.mean || math.Abs(v-tc.v) > 1e-15 {
			t.Errorf("MeanVar(%v, %d) = %v, %v; want %v, %v", tc.x, tc.ddof, m, v, tc.mean, tc.v)
		}
	}
}

// TestWelford checks the streaming and merged moments against the
// two-pass sample covariance, for both modes.
func TestWelford(t *testing.T) {
	const d, n = 3, 200
	rng := rand.New(rand.NewPCG(3, 4))
	z := make([][]float64, n)
	for k := range z {
		z[k] = []float64{rng.NormFloat64(), 2 + rng.NormFloat64(), 0}
		z[k][2] = z[k][0] + 0.1*rng.NormFloat64()
	}
	want := make([]float64, d*d)
	mean := make([]float64, d)
	for i := 0; i < d; i++ {
		col := make([]float64, n)
		for k := range z {
			col[k] = z[k][i]
		}
		mean[i], _ = MeanVar(col, 1)
	}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			for k := range z {
				want[i*d+j] += (z[k][i] - mean[i]) * (z[k][j] - mean[j]) / (n - 1)
			}
		}
	}
	for _, full := range []bool{false, true} {
		one, a, b := NewWelford(d, full), NewWelford(d, full), NewWelford(d, full)
		for k, v := range z {
			one.Add(v)
			if k < 70 {
				a.Add(v)
			} else {
				b.Add(v)
			}
		}
		a.Merge(b)
		for _, w := range []*Welford{one, a} {
			c := w.Cov()
			for i := 0; i < d; i++ {
				if math.Abs(w.Mean()[i]-mean[i]) > 1e-12 {
					t.Errorf("full=%v mean[%d] = %v, want %v", full, i, w.Mean()[i], mean[i])
				}
				for j := 0; j < d; j++ {
					got := c[i]
					if full {
						got = c[i*d+j]
					} else if i != j {
						continue
					}
					if math.Abs(got-want[i*d+j]) > 1e-12 {
						t.Errorf("full=%v cov[%d][%d] = %v, want %v", full, i, j, got, want[i*d+j])
					}
				}
			}
		}
	}
}

func TestSampleMeanSD(t *testing.T) {
	tests := []struct {
		x             []float64
		wantM, wantSD float64
		sdNaN         bool
	}{
		{x: []float64{2, 4, 4, 4, 5, 5, 7, 9}, wantM: 5, wantSD: math.Sqrt(32.0 / 7)},
		{x: []float64{3}, wantM: 3, sdNaN: true},
	}
	for _, tc := range tests {
		m, sd := SampleMeanSD(tc.x)
		if m != tc.wantM || (tc.sdNaN != math.IsNaN(sd)) || (!tc.sdNaN && math.Abs(sd-tc.wantSD) > 1e-15) {
			t.Errorf("SampleMeanSD(%v) = %v, %v; want %v, %v (NaN sd: %v)", tc.x, m, sd, tc.wantM, tc.wantSD, tc.sdNaN)
		}
	}
}
