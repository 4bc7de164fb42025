//go:build !amd64 || purego

package posterior

// projectPairFast does nothing here: projectRowsPair's loops do it all.
func projectPairFast(z []float64, d int, u, v []float64, c, e float64, xs, ys []float64) int {
	return 0
}
