//go:build !amd64 || purego

package posterior

// projectPairFast does nothing here: projectRowsPair's loops do it all.
func projectPairFast(z []float64, d int, u, v []float64, c, e float64, xs, ys []float64) int {
	return 0
}

// binBothFast does nothing here: binBoth's loop does it all.
func binBothFast(tab, xs, ws, vs []float64, j int, block, other, lo, hi, invH float64) (int, float64, float64, bool) {
	return j, block, other, false
}

// binOneFast does nothing here: binWeighted's loop does it all.
func binOneFast(tab, xs, ws []float64, stride, j int, block, lo, hi, invH float64) (int, float64, bool) {
	return j, block, false
}
