//go:build (!amd64 && !arm64) || purego

package posterior

// prefetchBins is a hint only; Go has no prefetch outside assembly, and
// here there is none.
func prefetchBins(tab, xs []float64, lo, invH float64, size int) {}
