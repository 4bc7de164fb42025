//go:build amd64 && !purego

package posterior

import "golang.org/x/sys/cpu"

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

//go:noescape
func projectPairAVX2(z *float64, n, d int, u, v *float64, c, e float64, xs, ys *float64)

//go:noescape
func binPairAVX(tab, xs, ws, vs *float64, j, n int, lo, hi, invH float64, acc *float64, ahead, last int) int

// pairAhead is how many atoms ahead binPairAVX asks for a bin.
const pairAhead = 64

// binBothFast is binBoth in AVX (binPairAVX) where the CPU has it; ok is
// false when it did nothing.
func binBothFast(tab, xs, ws, vs []float64, j int, block, other, lo, hi, invH float64) (int, float64, float64, bool) {
	n := len(xs)
	if !hasAVX2 || j >= n || len(tab) < 4*sw2Bins {
		return j, block, other, false
	}
	_, _ = ws[n-1], vs[n-1] // in bounds, or panic here
	acc := [2]float64{block, other}
	j = binPairAVX(&tab[0], &xs[0], &ws[0], &vs[0], j, n, lo, hi, invH, &acc[0], pairAhead, sw2Bins-1)
	return j, acc[0], acc[1], true
}

// oneAhead is how many atoms ahead binOneAVX asks for a bin.
const oneAhead = 64

// binOneFast is binWeighted (ws, the masses of xs) in AVX (binOneAVX),
// on tab's bins of stride float64s, where the CPU has it; ok is false
// when it did nothing.
func binOneFast(tab, xs, ws []float64, stride, j int, block, lo, hi, invH float64) (int, float64, bool) {
	n := len(xs)
	if !hasAVX2 || j >= n || len(tab) < stride*(sw2Bins-1)+2 {
		return j, block, false
	}
	_ = ws[n-1] // in bounds, or panic here
	j = binOneAVX(&tab[0], &xs[0], &ws[0], j, n, lo, hi, invH, &block, oneAhead, sw2Bins-1, 8*stride)
	return j, block, true
}

//go:noescape
func binOneAVX(tab, xs, ws *float64, j, n int, lo, hi, invH float64, acc *float64, ahead, last, stride int) int
