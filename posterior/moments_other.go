//go:build !amd64 || purego

package posterior

// addCovFast does nothing here: addCov's loop does it all.
func addCovFast(c []float64, w *[momentRows]float64, rows *[momentRows][]float64) bool {
	return false
}
