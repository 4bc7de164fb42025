package posterior

// Draws is a set of S draws in R^D, stored row-major in Z (len S·D). W holds
// normalised weights (summing to 1) for weighted draws and is nil for
// unweighted ones.
type Draws struct {
	D int
	Z []float64
	W []float64
	// LogP, when not nil, holds the target's log p̃ at each row: SNIS
	// evaluates it to weight the draws, and EnergyGap reuses it rather
	// than evaluate the target again at every draw (10⁷ in the paper).
	// Whoever changes Z must drop it.
	LogP []float64
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
