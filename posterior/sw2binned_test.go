package posterior

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// plainW2sq is the 1-D W2² between the projections of a and b on u,
// computed the plain way: sort each set's (value, weight) pairs, then
// integrate the squared difference of the quantile functions over the
// merged breakpoints of their cumulative weights.
func plainW2sq(a, b *Draws, u []float64) float64 {
	type pt struct{ x, w float64 }
	proj := func(d *Draws) []pt {
		var out []pt
		var total float64
		for s := range d.Len() {
			w := 1.0
			if d.W != nil {
				w = d.W[s]
			}
			if w > 0 {
				var x float64
				for i, v := range d.Row(s) {
					x += v * u[i]
				}
				out = append(out, pt{x, w})
				total += w
			}
		}
		slices.SortStableFunc(out, func(p, q pt) int { return cmp.Compare(p.x, q.x) })
		for i := range out {
			out[i].w /= total
		}
		return out
	}
	pa, pb := proj(a), proj(b)
	var sum, t, ca, cb float64
	i, j := 0, 0
	ca, cb = pa[0].w, pb[0].w
	for {
		end := math.Min(ca, cb)
		if i == len(pa)-1 && j == len(pb)-1 {
			end = 1
		}
		if end > t {
			d := pa[i].x - pb[j].x
			sum += (end - t) * d * d
			t = end
		}
		if i == len(pa)-1 && j == len(pb)-1 {
			return sum
		}
		if (ca <= cb && i < len(pa)-1) || j == len(pb)-1 {
			i++
			ca += pa[i].w
		} else {
			j++
			cb += pb[j].w
		}
	}
}

// TestSW2BinnedWithinTolerance: on sets large enough to be binned (2¹⁸
// and more draws against 5·10⁴), every direction's W2² is within
// sw2RelTol of the plain computation; cases cover unweighted and
// weighted large sets, a close and a distant pair, heavy weights, and a
// large set with a fifth of its draws outside the reference's range (the
// exact fallback).
func TestSW2BinnedWithinTolerance(t *testing.T) {
	const n, m, dirs = 1 << 18, 50000, 6
	cases := []struct {
		name     string
		shift    float64
		scale    float64
		weighted bool
		binned   bool // whether the bound allows binning every direction
	}{
		{"same distribution", 0, 1, false, true},
		{"shifted", 0.3, 1, false, true},
		{"weighted close", 0.05, 1.2, true, true},
		{"much wider (fallback)", 0, 3, false, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 99))
			a := newGaussian(filled(4, c.shift), diagCov(filled(4, c.scale)...)).sample(rng, n)
			if c.weighted {
				a.W = make([]float64, n)
				for s := range a.W {
					a.W[s] = math.Exp(2 * rng.NormFloat64())
				}
				a.W[7] = 0 // a dead draw
				a.Z[7*4] = math.NaN()
				normalise(a.W)
			}
			b := newGaussian(zeros(4), equicorr(4, 1, 0.2)).sample(rng, m)
			got := SW2PerDirection(a, b, SW2Options{Directions: dirs, Seed: 5})
			// The same on one core: each direction is one worker's.
			prev := runtime.GOMAXPROCS(1)
			one := SW2PerDirection(a, b, SW2Options{Directions: dirs, Seed: 5})
			runtime.GOMAXPROCS(prev)
			if !slices.Equal(got, one) {
				t.Errorf("W2² per direction differs between %d cores and one", prev)
			}
			u := sw2Directions(5, dirs, 4)
			bs, ps := newBinnedSide(a).withBins(), newProjector(b)
			worst := 0.0
			defer func() { t.Logf("largest relative error of W2² %.2g", worst) }()
			for k := range dirs {
				ps.project(u[k*4 : (k+1)*4])
				dir := &binDir{sides: []*binnedSide{bs}, u: u[k*4 : (k+1)*4], small: ps, w2: make([]float64, 1), ok: make([]bool, 1)}
				if w2sqGroup([]*binDir{dir}); dir.ok[0] != c.binned {
					t.Errorf("direction %d: binned %v, want %v", k, dir.ok[0], c.binned)
				}
				want := plainW2sq(a, b, u[k*4:(k+1)*4])
				worst = math.Max(worst, math.Abs(got[k]-want)/want)
				if math.Abs(got[k]-want) > sw2RelTol*want+1e-13 {
					t.Errorf("direction %d: W2² %.12g, plain %.12g (relative error %.2g, allowed %g)", k, got[k], want, math.Abs(got[k]-want)/want, sw2RelTol)
				}
			}
		})
	}
}

// TestSW2SharedEqualsSeparate: SW2PerDirectionShared gives each set the
// values SW2PerDirection gives it alone, to the bit: when it shares the
// projections (unweighted and positively weighted copies of one Z), when
// a zero weight or a small set makes it score them apart, and for sets
// that are not the same draws.
func TestSW2SharedEqualsSeparate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	n := sw2BinMin
	a := newGaussian(zeros(3), equicorr(3, 1, 0.3)).sample(rng, n)
	b := newGaussian(filled(3, 0.05), diagCov(filled(3, 1.2)...)).sample(rng, 5000)
	weighted := func(zeroAt int) *Draws {
		w := &Draws{D: a.D, Z: a.Z, W: make([]float64, n)}
		for i := range w.W {
			w.W[i] = math.Exp(0.3 * rng.NormFloat64())
		}
		if zeroAt >= 0 {
			w.W[zeroAt] = 0
		}
		return w
	}
	other := newGaussian(zeros(3), equicorr(3, 1, 0.3)).sample(rng, n)
	small := &Draws{D: a.D, Z: a.Z[:3*1000]}
	tests := []struct {
		name string
		as   []*Draws
	}{
		{"unweighted and weighted copies", []*Draws{a, weighted(-1)}},
		{"one set", []*Draws{weighted(-1)}},
		{"a zero weight", []*Draws{a, weighted(17)}},
		{"other draws", []*Draws{a, other}},
		{"a small set", []*Draws{small, a}},
	}
	o := SW2Options{Directions: 12, Seed: 9}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SW2PerDirectionShared(tc.as, b, o)
			for i, s := range tc.as {
				if want := SW2PerDirection(s, b, o); !slices.Equal(got[i], want) {
					t.Errorf("set %d: %v shared, %v alone", i, got[i], want)
				}
			}
		})
	}
}

// scatterFill is fill as it was before its two stages: each chunk of
// 4096 atoms projected, then added to the bins one atom at a time. It is
// the reference TestFillMatchesScatter holds fill to, bit for bit.
func scatterFill(sides []*binnedSide, u []float64, c, lo, hi, invH float64) (ea2 []float64, live []bool) {
	first := sides[0]
	n := first.n()
	limit := n / 16
	xs := make([]float64, fillChunk)
	ea2, live = make([]float64, len(sides)), make([]bool, len(sides))
	for i := range live {
		live[i] = true
	}
	for j0 := 0; j0 < n; j0 += fillChunk {
		m := min(fillChunk, n-j0)
		projectRows(first.chunkRows(j0, m), first.d.D, u, c, xs[:m])
		for i, b := range sides {
			if !live[i] {
				continue
			}
			block, ok := scatterBin(b, xs[:m], b.masses(j0, m), lo, hi, invH, limit)
			ea2[i] += block
			live[i] = ok
		}
	}
	return ea2, live
}

// scatterBin adds a chunk's atoms to b's bins one by one (or to b.out),
// returning their Σ mass·x² and false on a NaN or too many atoms
// outside.
func scatterBin(b *binnedSide, xs, ws []float64, lo, hi, invH float64, limit int) (block float64, ok bool) {
	for j, x := range xs {
		w := b.uniform
		if ws != nil {
			w = ws[j]
		}
		block += w * x * x
		if !(x >= lo && x < hi) {
			if x != x {
				return 0, false
			}
			b.out = append(b.out, atom{x, w})
			if len(b.out) > limit {
				return 0, false
			}
			continue
		}
		k := min(uint((x-lo)*invH), sw2Bins-1)
		b.tab[int(k)*b.stride+b.off] += w
		b.tab[int(k)*b.stride+b.off+1] += w * x
	}
	return block, true
}

// sameBits: the two slices hold the same float64s, bit for bit.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// sameBins: two sides' bins are the same, bit for bit, wherever in
// their tables they lie.
func sameBins(a, b *binnedSide) bool {
	for k := range sw2Bins {
		if !sameBits([]float64{a.binMass(k), a.binMoment(k)}, []float64{b.binMass(k), b.binMoment(k)}) {
			return false
		}
	}
	return true
}

// TestFillMatchesScatter: fill, which bins a pair of sides that share
// their atoms through one table (binPair) and projects each chunk on a
// group of directions at once, leaves every side's bins, atoms outside
// them, E[x²] and liveness exactly as adding the atoms one by one does,
// over more than one block: unweighted and weighted sets, zero weights
// (the gathered rows), sides sharing their atoms, atoms outside the
// range (under and over the limit), a NaN in a live or a dead row, and
// a NaN range.
func TestFillMatchesScatter(t *testing.T) {
	const d = 3
	n := 1<<18 + 3*fillChunk + 77
	rng := rand.New(rand.NewPCG(11, 4))
	z := newGaussian(zeros(d), equicorr(d, 1, 0.3)).sample(rng, n)
	weights := func(zeros ...int) []float64 {
		w := make([]float64, n)
		for i := range w {
			w[i] = math.Exp(rng.NormFloat64())
		}
		for _, i := range zeros {
			w[i] = 0
		}
		return w
	}
	withNaN := func(row int, w []float64) *Draws {
		nz := slices.Clone(z.Z)
		nz[row*d+1] = math.NaN()
		return &Draws{D: d, Z: nz, W: w}
	}
	unweighted, weighted := z, &Draws{D: d, Z: z.Z, W: weights()}
	sharing := func(a *Draws, w []float64) []*Draws { return []*Draws{a, {D: d, Z: a.Z, W: w}} }
	tests := []struct {
		name   string
		sets   []*Draws
		lo, hi float64
	}{
		{"unweighted", []*Draws{unweighted}, -2.5, 3},
		{"weighted", []*Draws{weighted}, -2.5, 3},
		{"zero weights", []*Draws{{D: d, Z: z.Z, W: weights(0, 5, 1<<18, n-1)}}, -2.5, 3},
		{"shared atoms", []*Draws{unweighted, weighted}, -2.5, 3},
		{"three sides", []*Draws{weighted, unweighted, {D: d, Z: z.Z, W: weights()}}, -2.5, 3},
		{"all inside", []*Draws{weighted}, -20, 20},
		{"too many outside", []*Draws{unweighted, weighted}, -0.5, 0.5},
		{"NaN", []*Draws{withNaN(1<<18+9, nil)}, -2.5, 3},
		{"NaN, shared", sharing(withNaN(1<<18+9, nil), weights()), -2.5, 3},
		{"NaN in a dead row", []*Draws{withNaN(5, weights(5))}, -2.5, 3},
		{"NaN range", []*Draws{weighted}, math.NaN(), 3},
	}
	us := [][]float64{{0.6, -0.48, 0.64}, {0, 0.8, 0.6}, {-0.48, 0.64, 0.6}, {0.8, 0, -0.6}, {0.36, 0.48, 0.8}}
	cs := []float64{0.03, -0.1, 0, 0.2, -0.05}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			invH := sw2Bins / (tc.hi - tc.lo)
			var sides []*binnedSide
			for _, s := range tc.sets {
				sides = append(sides, newBinnedSide(s))
			}
			// One direction, and groups of two to five binned at once
			// (four: projectRowsQuad): each direction as the one-by-one
			// scatter leaves it.
			for _, group := range []int{1, 2, 3, 4, len(us)} {
				var dirs []*binDir
				for g := range group {
					dirs = append(dirs, &binDir{sides: forWorker(sides), u: us[g], c: cs[g], lo: tc.lo, hi: tc.hi, invH: invH})
				}
				fill(dirs)
				for g, dir := range dirs {
					var want []*binnedSide
					for _, side := range sides {
						want = append(want, side.withBins())
					}
					wantE, wantLive := scatterFill(want, us[g], cs[g], tc.lo, tc.hi, invH)
					checkFilled(t, fmt.Sprintf("group of %d, direction %d", group, g), dir, want, wantE, wantLive)
				}
			}
		})
	}
}

// checkFilled: a filled direction's sides are want's, bit for bit, with
// E[x²] wantE and liveness wantLive.
func checkFilled(t *testing.T, what string, dir *binDir, want []*binnedSide, wantE []float64, wantLive []bool) {
	t.Helper()
	if !slices.Equal(dir.live, wantLive) {
		t.Fatalf("%s: live %v, want %v", what, dir.live, wantLive)
	}
	for i, live := range wantLive {
		if !live {
			continue
		}
		got := dir.sides[i]
		if !sameBits(dir.ea2[i:i+1], wantE[i:i+1]) {
			t.Errorf("%s, side %d: E[x²] %v, want %v", what, i, dir.ea2[i], wantE[i])
		}
		if !sameBins(got, want[i]) {
			t.Errorf("%s, side %d: bins differ", what, i)
		}
		if !slices.Equal(got.out, want[i].out) {
			t.Errorf("%s, side %d: %d atoms outside, want %d (or they differ)", what, i, len(got.out), len(want[i].out))
		}
	}
}

// TestProjectRowsPair: the projections on two directions from one read
// of the rows are each direction's projectRows, bit for bit, at every d
// (d = 4 has its own loop; on amd64 with AVX2, d a multiple of 4 goes
// through projectPairAVX2) and for chunks that are and are not a
// multiple of the four atoms the other loops take at a time.
func TestProjectRowsPair(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, d := range []int{1, 2, 3, 4, 5, 8, 16} {
		for _, m := range []int{1, 3, 4, 7, 4096} {
			z, u, v := make([]float64, m*d), make([]float64, d), make([]float64, d)
			for i := range z {
				z[i] = rng.NormFloat64() * 3
			}
			for i := range u {
				u[i], v[i] = rng.NormFloat64(), rng.NormFloat64()
			}
			c, e := rng.NormFloat64(), rng.NormFloat64()
			xs, ys, wantX, wantY := make([]float64, m), make([]float64, m), make([]float64, m), make([]float64, m)
			projectRowsPair(z, d, u, v, c, e, xs, ys)
			projectRows(z, d, u, c, wantX)
			projectRows(z, d, v, e, wantY)
			if !sameBits(xs, wantX) || !sameBits(ys, wantY) {
				t.Errorf("d = %d, %d rows: the pair's projections differ from each direction's", d, m)
			}
		}
	}
}

// TestBinIndexes checks binIndexesFast, where it runs, against binIndex
// and the range test of the Go loops: the edges of [lo, hi), values a
// rounding inside and outside them, NaN and infinities, at every length
// up to 11 (the vector loop's tail) and on a block of random values.
func TestBinIndexes(t *testing.T) {
	lo, hi := -2.5, 3.0
	invH := sw2Bins / (hi - lo)
	edges := []float64{lo, hi, math.Nextafter(lo, -10), math.Nextafter(hi, -10), math.Nextafter(hi, 10),
		math.NaN(), math.Inf(1), math.Inf(-1), 0, -1e300, 1e300, lo + 1/invH, 2.999999999}
	rng := rand.New(rand.NewPCG(5, 9))
	random := make([]float64, 4099)
	for i := range random {
		random[i] = lo - 0.5 + (hi-lo+1)*rng.Float64()
	}
	cases := [][]float64{random}
	for n := 0; n <= 11; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = edges[(i*5+n)%len(edges)]
		}
		cases = append(cases, xs)
	}
	for _, xs := range cases {
		idx := binIndexesFast(make([]int32, len(xs)+prefetchAhead), xs, lo, hi, invH)
		if idx == nil {
			t.Skip("no vector bin index here")
		}
		for i, x := range xs {
			want := int32(binIndex(x, lo, invH))
			if in := x >= lo && x < hi; !in {
				if idx[i] >= 0 {
					t.Fatalf("x = %v (outside [%v, %v)): bin %d, want the sign bit", x, lo, hi, idx[i])
				}
				continue
			}
			if idx[i] != want {
				t.Fatalf("x = %v: bin %d, want %d", x, idx[i], want)
			}
		}
	}
}

// TestProjectRowsQuad checks projectRowsQuad (projectQuadAVX2 where it
// runs, then pairs) against projectRows on each direction, bit for bit.
func TestProjectRowsQuad(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 10))
	for _, d := range []int{1, 2, 3, 4, 5, 8, 16} {
		for _, m := range []int{1, 3, 4, 7, 4096} {
			z := make([]float64, m*d)
			for i := range z {
				z[i] = rng.NormFloat64() * 3
			}
			var dirs []*binDir
			var xss [4][]float64
			for k := range 4 {
				dir := &binDir{u: make([]float64, d), c: rng.NormFloat64()}
				for i := range dir.u {
					dir.u[i] = rng.NormFloat64()
				}
				dirs = append(dirs, dir)
				xss[k] = make([]float64, m)
			}
			projectRowsQuad(z, d, quadOf(dirs), xss)
			for k, dir := range dirs {
				want := make([]float64, m)
				projectRows(z, d, dir.u, dir.c, want)
				if !sameBits(xss[k], want) {
					t.Errorf("d = %d, %d rows, direction %d: the quad's projections differ from the direction's own", d, m, k)
				}
			}
		}
	}
}
