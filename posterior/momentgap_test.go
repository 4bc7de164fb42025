package posterior

import (
	"math"
	"testing"
)

// MomentGapOf reads the extremes off known weighted moments, and refuses
// what it cannot compare.
func TestMomentGapOf(t *testing.T) {
	// Two coordinates, weighted draws with mean (1, 0) and sds (2, 1):
	// (1±2, 0±1) with equal weights.
	w := &Draws{D: 2, Z: []float64{3, 1, -1, -1, 3, -1, -1, 1}, W: []float64{0.25, 0.25, 0.25, 0.25}}
	g, ok := MomentGapOf([]float64{2, 0}, []float64{16, 0, 0, 0.25}, w)
	if !ok {
		t.Fatal("not comparable")
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(g.MeanShift, 0.5) || g.ShiftCoord != 0 || !near(g.WideLog, math.Log(2)) || g.WideCoord != 0 ||
		!near(g.NarrowLog, math.Log(0.5)) || g.NarrowCoord != 1 {
		t.Errorf("gap %+v, want shift 0.5 at 0, wide log 2 at 0, narrow log ½ at 1", g)
	}
	for _, tc := range []struct {
		name      string
		mean, cov []float64
		w         *Draws
	}{
		{"unweighted", []float64{0, 0}, []float64{1, 0, 0, 1}, &Draws{D: 2, Z: w.Z}},
		{"sizes", []float64{0}, []float64{1}, w},
		{"zero sd", []float64{0, 0}, []float64{0, 0, 0, 1}, w},
		{"NaN", []float64{math.NaN(), 0}, []float64{1, 0, 0, 1}, w},
		{"nil", []float64{0, 0}, []float64{1, 0, 0, 1}, nil},
	} {
		if _, ok := MomentGapOf(tc.mean, tc.cov, tc.w); ok {
			t.Errorf("%s: compared", tc.name)
		}
	}
}
