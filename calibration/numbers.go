package calibration

import (
	"fmt"
	"math"
)

// Keys of a TaskRanks in a results record's diagnostics: sbc_u_J,
// sbc_z_J and sbc_contraction_J for coordinate J (1-based), sbc_u_logdens
// and sbc_u_proj for the test quantities. The calibration suite writes
// them and the report reads them back.
const (
	keyLogDensity = "sbc_u_logdens"
	keyProjection = "sbc_u_proj"
)

func keyCoord(j int) string       { return fmt.Sprintf("sbc_u_%d", j+1) }
func keyZ(j int) string           { return fmt.Sprintf("sbc_z_%d", j+1) }
func keyContraction(j int) string { return fmt.Sprintf("sbc_contraction_%d", j+1) }

// Numbers flattens r into diagnostics entries.
func (r *TaskRanks) Numbers() map[string]float64 {
	out := map[string]float64{keyLogDensity: r.LogDensity, keyProjection: r.Projection}
	for j := range r.Coord {
		out[keyCoord(j)] = r.Coord[j]
		out[keyZ(j)] = r.ZScore[j]
		out[keyContraction(j)] = r.Contraction[j]
	}
	return out
}

// FromNumbers rebuilds the ranks of a d-dimensional task from
// diagnostics written by Numbers; false when an entry is missing or a
// rank is not in [0, 1].
func FromNumbers(m map[string]float64, d int) (*TaskRanks, bool) {
	r := &TaskRanks{Coord: make([]float64, d), ZScore: make([]float64, d), Contraction: make([]float64, d)}
	get := func(k string, rank bool) (float64, bool) {
		v, ok := m[k]
		if rank && !(v >= 0 && v <= 1) {
			return math.NaN(), false
		}
		return v, ok
	}
	var ok1, ok2 bool
	r.LogDensity, ok1 = get(keyLogDensity, true)
	r.Projection, ok2 = get(keyProjection, true)
	if !ok1 || !ok2 {
		return nil, false
	}
	for j := range d {
		var ok [3]bool
		r.Coord[j], ok[0] = get(keyCoord(j), true)
		r.ZScore[j], ok[1] = get(keyZ(j), false)
		r.Contraction[j], ok[2] = get(keyContraction(j), false)
		if !ok[0] || !ok[1] || !ok[2] {
			return nil, false
		}
	}
	return r, true
}
