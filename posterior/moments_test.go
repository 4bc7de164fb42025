package posterior

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveMoments are Mean and Cov as plain loops over the draws, one draw
// after another: the order of every entry's sum that the blocked loops
// must keep.
func naiveMoments(d *Draws) (mean, cov []float64) {
	dim, s := d.D, d.Len()
	mean, cov = make([]float64, dim), make([]float64, dim*dim)
	weight := func(k int, n int) (float64, bool) {
		if d.W == nil {
			return 1 / float64(n), true
		}
		return d.W[k], d.W[k] != 0
	}
	for k := 0; k < s; k++ {
		if w, ok := weight(k, s); ok {
			for i, v := range d.Row(k) {
				mean[i] += w * v
			}
		}
	}
	if s < 2 && d.W == nil {
		return mean, cov
	}
	r := make([]float64, dim)
	for k := 0; k < s; k++ {
		w, ok := weight(k, s-1)
		if !ok {
			continue
		}
		for i, v := range d.Row(k) {
			r[i] = v - mean[i]
		}
		for i := 0; i < dim; i++ {
			wi := w * r[i]
			for j := 0; j <= i; j++ {
				cov[i*dim+j] += wi * r[j]
			}
		}
	}
	for i := 0; i < dim; i++ {
		for j := 0; j < i; j++ {
			cov[j*dim+i] = cov[i*dim+j]
		}
	}
	return mean, cov
}

// TestMomentsKeepTheirOrder: Mean and Cov give bitwise the sums of a
// plain loop over the draws, weighted or not, with zero-weight draws
// holding NaN skipped, for every remainder of the four-draw blocks.
func TestMomentsKeepTheirOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	tests := []struct {
		name     string
		dim, n   int
		weighted bool
		zeros    bool
	}{
		{"empty", 3, 0, false, false},
		{"one", 3, 1, false, false},
		{"one weighted", 3, 1, true, false},
		{"three", 2, 3, false, false},
		{"five d1", 1, 5, false, false},
		{"seven weighted d4", 4, 7, true, false},
		{"many d4", 4, 1001, false, false},
		{"many weighted d5 zeros", 5, 1003, true, true},
		{"many d7", 7, 401, false, false},
		{"many weighted d8", 8, 402, true, false},
		{"many weighted d13 zeros", 13, 403, true, true},
		{"many d16", 16, 517, false, false},
		{"many weighted d16 zeros", 16, 2050, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &Draws{D: tc.dim, Z: make([]float64, tc.dim*tc.n)}
			for i := range d.Z {
				d.Z[i] = 3 + rng.NormFloat64()*math.Exp(2*rng.NormFloat64())
			}
			if tc.weighted {
				d.W = make([]float64, tc.n)
				var sum float64
				for k := range d.W {
					d.W[k] = rng.ExpFloat64()
					if tc.zeros && k%7 == 3 {
						d.W[k] = 0
						d.Z[k*tc.dim] = math.NaN()
					}
					sum += d.W[k]
				}
				for k := range d.W {
					d.W[k] /= sum
				}
			}
			wantM, wantC := naiveMoments(d)
			gotM, gotC := d.Mean(), d.Cov()
			for i := range wantM {
				if math.Float64bits(gotM[i]) != math.Float64bits(wantM[i]) {
					t.Fatalf("mean[%d] = %v, want %v", i, gotM[i], wantM[i])
				}
			}
			for i := range wantC {
				if math.Float64bits(gotC[i]) != math.Float64bits(wantC[i]) {
					t.Fatalf("cov[%d] = %v, want %v", i, gotC[i], wantC[i])
				}
			}
		})
	}
}

// BenchmarkCov is Cov of 10⁶ weighted draws at d = 4 and 16.
func BenchmarkCov(b *testing.B) {
	for _, dim := range []int{4, 16} {
		rng := rand.New(rand.NewPCG(1, uint64(dim)))
		n := 1_000_000
		d := &Draws{D: dim, Z: make([]float64, dim*n), W: make([]float64, n)}
		for i := range d.Z {
			d.Z[i] = rng.NormFloat64()
		}
		for k := range d.W {
			d.W[k] = 1 / float64(n)
		}
		b.Run(map[int]string{4: "d4", 16: "d16"}[dim], func(b *testing.B) {
			for range b.N {
				d.Cov()
			}
		})
	}
}
