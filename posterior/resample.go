package posterior

import (
	"math/rand/v2"
	"slices"
)

// Resample draws n rows with replacement, with probabilities given by the
// weights (uniform for unweighted draws), and returns them as an unweighted
// set. This is multinomial resampling — what the authors' public code feeds
// to its metrics; afin's metrics use the weights directly and offer this
// only as an option.
func (d *Draws) Resample(rng *rand.Rand, n int) *Draws {
	s := d.Len()
	out := &Draws{D: d.D, Z: make([]float64, 0, n*d.D)}
	if s == 0 || n <= 0 {
		return out
	}
	if d.W == nil {
		for range n {
			out.Z = append(out.Z, d.Row(rng.IntN(s))...)
		}
		return out
	}
	cum := make([]float64, s)
	var c float64
	for i, w := range d.W {
		c += w
		cum[i] = c
	}
	for range n {
		// Binary search on the cumulative weights; u is scaled by the
		// total so unnormalised or slightly-off weights still work, and
		// zero-weight rows (flat steps) can never be hit.
		u := rng.Float64() * c
		i, _ := slices.BinarySearchFunc(cum, u, func(x, t float64) int {
			if x <= t {
				return -1
			}
			return 1
		})
		if i >= s {
			i = s - 1
		}
		out.Z = append(out.Z, d.Row(i)...)
	}
	return out
}
