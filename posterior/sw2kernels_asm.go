//go:build (amd64 || arm64) && !purego

package posterior

// prefetchBins asks the cache for the bin (of size bytes, in tab) of each
// of xs, as binIndex finds it. It changes nothing: a hint only.
func prefetchBins(tab, xs []float64, lo, invH float64, size int) {
	if len(xs) == 0 || len(tab) == 0 {
		return
	}
	prefetchBinsAsm(&tab[0], &xs[0], len(xs), lo, invH, sw2Bins-1, size)
}

//go:noescape
func prefetchBinsAsm(tab, xs *float64, n int, lo, invH float64, last, size int)
