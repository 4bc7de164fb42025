package posterior

// Draws is a set of S draws in R^D, stored row-major in Z (len S·D). W holds
// normalised weights (summing to 1) for weighted draws and is nil for
// unweighted ones.
type Draws struct {
	D int
	Z []float64
	W []float64
}

// Len is the number of draws S.
func (d *Draws) Len() int {
	if d.D == 0 {
		return 0
	}
	return len(d.Z) / d.D
}

// Row returns draw s (not a copy).
func (d *Draws) Row(s int) []float64 { return d.Z[s*d.D : (s+1)*d.D] }

// Weighted reports whether the draws carry weights.
func (d *Draws) Weighted() bool { return d.W != nil }
