//go:build amd64 && !purego

package posterior

import (
	"math"

	"golang.org/x/sys/cpu"
)

// hasAVX2 is whether projectPairAVX2 can run here; fixed at start-up.
var hasAVX2 = cpu.X86.HasAVX2

// projectPairFast projects the leading rows of z, a multiple of four,
// on u and v as projectRowsPair does, in AVX2 (projectPairAVX2), when
// d is a multiple of four; it returns how many rows it did (0: none).
// At d = 16 the scalar pair loop was bound by its arithmetic once the
// rows were read once for both directions.
func projectPairFast(z []float64, d int, u, v []float64, c, e float64, xs, ys []float64) int {
	n := len(xs) &^ 3
	if !hasAVX2 || d == 0 || d%4 != 0 || n == 0 {
		return 0
	}
	_, _, _, _ = z[n*d-1], u[d-1], v[d-1], ys[n-1] // in bounds, or panic here
	projectPairAVX2(&z[0], n, d, &u[0], &v[0], c, e, &xs[0], &ys[0])
	return n
}

// projectQuadFast is projectPairFast for the four directions of q, from
// one read of each block of rows (projectQuadAVX2); it returns how many
// rows it did (0: none).
func projectQuadFast(z []float64, d int, q *quadDirs, xss [4][]float64) int {
	n := len(xss[0]) &^ 3
	if !hasAVX2 || d == 0 || d%4 != 0 || n == 0 {
		return 0
	}
	_, _ = z[n*d-1], q.u[4*d-1] // in bounds, or panic here
	var xs [4]*float64
	for k, x := range xss {
		_ = x[n-1]
		xs[k] = &x[0]
	}
	projectQuadAVX2(&z[0], n, d, &q.u[0], &q.c[0], &xs[0])
	return n
}

//go:noescape
func projectQuadAVX2(z *float64, n, d int, u, c *float64, xs **float64)

//go:noescape
func projectPairAVX2(z *float64, n, d int, u, v *float64, c, e float64, xs, ys *float64)

// binIndexesFast sets idx[i], for each of xs, to its bin as binIndex
// finds it, or that with the sign bit set when x is outside [lo, hi) or
// NaN, and returns idx[:len(xs)]; nil where the CPU has no AVX2 (the Go
// loops then find each bin themselves).
func binIndexesFast(idx []int32, xs []float64, lo, hi, invH float64) []int32 {
	n := len(xs)
	if !hasAVX2 {
		return nil
	}
	idx = idx[:n]
	v := n &^ 3
	if v > 0 {
		binIndexesAVX(&xs[0], v, lo, hi, invH, sw2Bins-1, &idx[0])
	}
	for i := v; i < n; i++ {
		x := xs[i]
		k := int32(binIndex(x, lo, invH)) // in range: at most sw2Bins−1
		if !(x >= lo && x < hi) {
			k = math.MinInt32
		}
		idx[i] = k
	}
	return idx
}

// binBothFast is binBoth in AVX (binPairAVX) on atoms j … of xs, their
// bins in idx (binIndexesFast, not nil); it returns the first atom
// outside the bins, or len(xs).
func binBothFast(tab, xs, ws, vs []float64, idx []int32, j int, block, other float64) (int, float64, float64) {
	n := len(xs)
	if j >= n {
		return j, block, other
	}
	_, _, _, _, _ = ws[n-1], vs[n-1], idx[n-1], idx[:n+prefetchAhead], tab[4*sw2Bins-1] // in bounds, or panic here
	acc := [2]float64{block, other}
	j = binPairAVX(&tab[0], &xs[0], &ws[0], &vs[0], &idx[0], j, n, &acc[0])
	return j, acc[0], acc[1]
}

// binOneFast is binWeighted in AVX (binOneAVX), on tab's bins of stride
// float64s, as binBothFast.
func binOneFast(tab, xs, ws []float64, idx []int32, stride, j int, block float64) (int, float64) {
	n := len(xs)
	if j >= n {
		return j, block
	}
	_, _, _, _ = ws[n-1], idx[n-1], idx[:n+prefetchAhead], tab[stride*(sw2Bins-1)+1] // in bounds, or panic here
	j = binOneAVX(&tab[0], &xs[0], &ws[0], &idx[0], j, n, &block, 8*stride)
	return j, block
}

// binPairAVX and binOneAVX read the bin prefetchAhead atoms ahead at
// 256 bytes past the atom's own.
var _ = [1]struct{}{}[prefetchAhead-64]

//go:noescape
func binIndexesAVX(xs *float64, n int, lo, hi, invH float64, last int, idx *int32)

//go:noescape
func binPairAVX(tab, xs, ws, vs *float64, idx *int32, j, n int, acc *float64) int

//go:noescape
func binOneAVX(tab, xs, ws *float64, idx *int32, j, n int, acc *float64, stride int) int
