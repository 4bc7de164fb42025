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
