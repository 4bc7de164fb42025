//go:build !amd64 || purego

package posterior

// projectPairFast does nothing here: projectRowsPair's loops do it all.
func projectPairFast(z []float64, d int, u, v []float64, c, e float64, xs, ys []float64) int {
	return 0
}

// binIndexesFast is nil here: the Go loops find each bin themselves.
func binIndexesFast(idx []int32, xs []float64, lo, hi, invH float64) []int32 { return nil }

// binBothFast and binOneFast are never called here (binIndexesFast is
// nil).
func binBothFast(tab, xs, ws, vs []float64, idx []int32, j int, block, other float64) (int, float64, float64) {
	return j, block, other
}

func binOneFast(tab, xs, ws []float64, idx []int32, stride, j int, block float64) (int, float64) {
	return j, block
}

// projectQuadFast does nothing here: projectRowsQuad's pairs do it all.
func projectQuadFast(z []float64, d int, q *quadDirs, xss [4][]float64) int {
	return 0
}
