package posterior

import (
	"math"
	"slices"
)

// SW2 on a large set (an SNIS point or proposal star of 10⁶–10⁷ draws
// against a reference of 5·10⁴) need not sort the large set on every
// direction. Per direction, fill projects the large set A once into
// sw2Bins equal-width bins over the small set B's range, keeping each
// bin's mass and first moment (draws outside that range are kept as exact
// atoms), and writes
//
//	W2² = E_A[x²] + E_B[x²] − 2 ∫₀¹ F_A⁻¹(u) F_B⁻¹(u) du,
//
// with x centred on B's mean. The first two terms are exact. In the cross
// term, F_A⁻¹ on the u-range of a bin is replaced by the bin's mean; both
// quantile functions are non-decreasing there, so by Chebyshev's integral
// inequality the error of a bin is ∫(f − f̄)(g − ḡ) ≥ 0, and it is at most
// its mass × (bin width) × (oscillation of F_B⁻¹ over the bin's u-range) / 4
// (the covariance of two variables is at most the product of their ranges
// over 4). Summing these bounds gives E with W2² ∈ [Ŵ − 2E, Ŵ] for the
// binned value Ŵ; binDir.finish returns Ŵ − E, whose error is at most E.
//
// A direction whose bound is not within sw2RelTol of the smallest W2² it
// allows (E ≤ sw2RelTol·(Ŵ − 2E)) is computed exactly instead, as is any
// direction where more than a sixteenth of A lies outside B's range. So
// every direction's W2² is within sw2RelTol of the exact one, and SW2
// within sw2RelTol/2 of the exact SW2, up to float64 rounding.
//
// The time goes to fill: per direction, each atom is projected (a stream
// of its row) and added to its bin, a read and a write at a random place
// in a table of 2 MB (4 MB for a pair, below) that L2 does not hold.
// Five things keep that near the cost of the stream:
//   - The adding loops are lean: no calls (but the prefetcher's, once a
//     batch of atoms), so nothing spilled; one loop per kind of mass;
//     the index by int conversion. That took about a tenth off an SW2 of 10⁷ draws
//     (BenchmarkSW2Binned) and a sixth off fill (BenchmarkSW2Fill).
//   - A pair of sides with the same atoms — an SNIS point and its
//     proposals unweighted, as bench scores every point — shares one
//     table, so each atom's bin is found and reached once for both
//     (forWorker, binPair).
//   - The pair's loop asks the cache for the bins of the atoms 64 ahead
//     (prefetcher). Its own loads cannot run far ahead: they retire in
//     order, so each waited on its miss.
//   - A worker bins two or four directions at once (sw2Group), each
//     chunk's rows read from memory once for all and projected on each
//     while in cache (projectRowsPair, projectRowsQuad), each direction
//     into its own table. At d = 16 a row is 128 bytes, and reading the
//     rows was a third of an afin-snis unit's time: two directions a
//     pass took the paper snis suite's afin-snis unit at d = 16, N = 1
//     from 44.5 and 45.7 CPU-s to 36.0 and 39.0 (two
//     rounds, alternated); at d = 4 (29.7, 28.0 against 25.1, 29.2) the
//     change is within the machine's swings. With the rows read once,
//     projecting at d = 16 was bound by its scalar arithmetic; on amd64
//     with AVX2 it runs four atoms to a register (projectPairAVX2, the
//     same bits): in a profile of that unit, projecting went from 11.7
//     to 7.3 CPU-s, and the unit from 38.2 and 36.9 CPU-s to 36.2 and
//     34.8 (two rounds, alternated).
//   - On amd64 with AVX2, each atom's entry is added with one vector
//     load, add and store (binPairAVX: [w, w·x, v, v·x] in 32 bytes;
//     binOneAVX: [w, w·x] in 16). Scattered stores retire in order, and
//     four scalar stores an atom filled the store queue: in a loop
//     adding to random entries of a 4 MB table, four scalar adds took
//     4.0–4.4 ns an entry, one 32-byte VADDPD 1.8–2.0 (two runs). The
//     kernels ask for the bin 64 atoms ahead themselves; a pair's kernel
//     without that was slower than the Go loop it replaced. The paper
//     snis suite's afin-snis unit at d = 4, N = 256 went from 22.2, 23.3
//     and 23.9 CPU-s to 19.6, 20.2 and 21.5 with the pair's kernel
//     (three rounds, alternated). One side's: BenchmarkSW2Fill weighted,
//     three rounds, 8.0–9.5 ns an atom before, 5.9–6.4 after. The
//     chunk's bins are found before, four at a time (binIndexesAVX), so
//     the pair's loop is 23 instructions an atom, not 39 (and about
//     four in binIndexesAVX): BenchmarkSW2Fill, three rounds
//     alternated, pair 6.1–6.3 ns an atom before, 5.2–5.5 after; one
//     side 5.4–5.9, 4.6–5.4.
//
// None of them changes a bit of any bin. The shared table alone (no
// prefetch) took a pair's binning to 0.69–0.82 of two tables' time
// (BenchmarkSW2Fill pair/shared against pair/table-each in four runs);
// with the prefetch, an afin-snis unit of the paper's snis suite at
// d = 4, N = 256 went from 33.3–34.3 to 26.2–31.3 CPU-seconds (three
// rounds, alternated).
//
// Tried, measured no faster on the shared 2-core AMD EPYC we measure
// on, and not used (all give the same bits):
//   - Adding in two stages: each block of atoms copied into 16 to 256
//     partitions by the top bits of its bin, in order, then each
//     partition added to its slice of the table while that slice is in
//     cache. It was slower at every partition count and block size tried
//     (2¹⁴ to 2²⁰ atoms), at d = 4 and 16: the copy costs more than the
//     misses it saves.
//   - Projecting each chunk on four directions while its rows are in
//     cache, then binning each direction in its own table (without the
//     prefetch): what the projection saves, the four tables' misses took
//     back.
//   - Asking for the next chunk's rows while binning this one: projecting
//     got faster by what asking cost. The rows' stream is bound by the
//     memory's bandwidth, not its latency.
//   - binBoth's loop in assembly, asking for the bin 64 atoms ahead inline:
//     BenchmarkSW2Fill pair/shared, five rounds alternated, median 8.5 ns
//     an atom against 9.2, within the machine's swings.
//   - Four directions a pass rather than two, with four scalar stores an
//     atom and each chunk's rows read twice (once a pair): an afin-snis
//     unit of the paper's snis suite took 25.3 and 26.3 CPU-s against
//     24.4 and 24.2 at d = 4, 34.0 and 38.3 against 33.1 and 35.5 at
//     d = 16. With one store an atom and the rows read once for four
//     (projectRowsQuad) it is faster at d = 16 (sw2Group).

// sw2RelTol bounds the relative error of each direction's W2² (and so of
// SW2², and half of it SW2's) when SW2 bins a set.
const sw2RelTol = 1e-4

// sw2BinMin is the fewest positive-weight atoms a set needs, and the
// fewest times more than the other set it must have, for SW2 to bin it;
// smaller sets are sorted, which is then as cheap.
const (
	sw2BinMin   = 1 << 18
	sw2BinRatio = 4
)

// sw2Bins is the number of bins over the small set's range: at 2¹⁷ the
// bound of a 10⁷-draw set against a 5·10⁴-draw reference of the same
// distribution is about 10⁻⁴ of W2² (the bins hold the array in cache).
const sw2Bins = 1 << 17

// binnedSide is the large set of a binned SW2: its rows with positive
// weight and their normalised masses, and a worker's bins.
type binnedSide struct {
	d       *Draws
	rows    []int       // positive-weight rows (weighted sets only)
	mass    []float64   // their normalised weights; nil: 1/n each
	tab     []float64   // the bins, maybe shared with other sides (binTable)
	off     int         // this side's place in each bin's entry of tab
	stride  int         // float64s per bin in tab: 2 per side sharing it
	pair    *binnedSide // the side sharing tab (forWorker), on the first
	out     []atom      // atoms outside the bins' range
	xs      []float64   // a chunk's projections
	zs      []float64   // a chunk's rows, gathered when rows is not nil
	ones    []float64   // fillChunk masses b.uniform, for binPair (uniformOr)
	idx     []int32     // a chunk's bins (binIndexesFast), and prefetchAhead more for the prefetch
	uniform float64     // 1/n for unweighted sets
}

// atom is a point mass of a projected set.
type atom struct{ x, w float64 }

// newBinnedSide prepares d for binning; its rows and masses are shared
// read-only by the workers, each of which takes its own bins (withBins).
func newBinnedSide(d *Draws) *binnedSide {
	b := &binnedSide{d: d}
	if d.W == nil {
		b.uniform = 1 / float64(d.Len())
		return b
	}
	// Counted first, so the rows are not grown by appending: at 10⁷
	// draws the regrowth took 1.6 CPU-s of an afin-snis unit at d = 16.
	var total float64
	n := 0
	for _, w := range d.W {
		if w > 0 {
			n++
			total += w
		}
	}
	b.mass = make([]float64, n)
	if n == d.Len() { // every weight positive, as in SNIS
		for r, w := range d.W {
			b.mass[r] = w / total
		}
		return b
	}
	b.rows = make([]int, 0, n)
	for r, w := range d.W {
		if w > 0 {
			b.rows = append(b.rows, r)
		}
	}
	for j, r := range b.rows {
		b.mass[j] = d.W[r] / total
	}
	return b
}

// withBins is a copy of b with bins of its own, for one worker.
func (b *binnedSide) withBins() *binnedSide {
	return b.binningInto(make([]float64, 2*sw2Bins), 0, 2, make([]float64, fillChunk))
}

// binningInto is a copy of b for one worker, binning into tab at off in
// entries of stride float64s and projecting chunks into xs.
func (b *binnedSide) binningInto(tab []float64, off, stride int, xs []float64) *binnedSide {
	c := *b
	c.tab, c.off, c.stride, c.xs = tab, off, stride, xs
	c.out, c.zs, c.ones, c.idx, c.pair = nil, nil, nil, nil, nil
	return &c
}

// forWorker is a copy of each side, for one worker. A pair of sides
// (SW2PerDirectionShared: an SNIS point and its proposals unweighted,
// as bench scores every SNIS point) puts each atom in the same bin of
// each, so the two share one table, bin k's entry holding the first
// side's mass and Σ mass·x, then the second's, and binPair reaches an
// atom's entry once for both. Each side's sums are the same additions
// in the same order either way, so its bins are the same bits.
func forWorker(sides []*binnedSide) []*binnedSide {
	out := make([]*binnedSide, len(sides))
	if len(sides) == 2 {
		tab, xs := make([]float64, 4*sw2Bins), make([]float64, fillChunk)
		out[0], out[1] = sides[0].binningInto(tab, 0, 4, xs), sides[1].binningInto(tab, 2, 4, xs)
		out[0].pair = out[1]
		return out
	}
	for i, b := range sides {
		out[i] = b.withBins()
	}
	return out
}

// binMass is the mass in bin k, and binMoment its Σ mass·x.
func (b *binnedSide) binMass(k int) float64   { return b.tab[k*b.stride+b.off] }
func (b *binnedSide) binMoment(k int) float64 { return b.tab[k*b.stride+b.off+1] }

// n is the number of positive-weight atoms.
func (b *binnedSide) n() int {
	if b.mass == nil {
		return b.d.Len()
	}
	return len(b.mass)
}

// sw2Group is how many directions a worker bins at once at dimension d:
// each chunk's rows are read from memory once for the group, and
// projected on each of its directions while in cache. The rows' stream
// is what projecting costs (at d = 16, 128 bytes an atom and direction);
// each direction of the group bins into its own table, which the
// prefetch keeps from costing what the stream saves. Four directions a
// pass (projectRowsQuad) took the paper snis suite's afin-snis unit at
// d = 16, N = 1 from 26.6 and 27.9 CPU-s to 22.4 and 22.6 (two rounds,
// alternated); at d = 4, where a row is 32 bytes, it was no faster (four
// rounds: 18.9, 20.5, 20.8, 20.1 with two, 18.8, 21.9, 20.6, 23.4 with
// four), so rows shorter than a cache line keep two.
func sw2Group(d int) int {
	if d >= 8 {
		return 4
	}
	return 2
}

// binDir is one direction of a group: the worker's sides to bin on u
// (with tables of their own), the small set projected on u, where the
// results go, and, once prepared, the centre c and the bins' range.
type binDir struct {
	sides              []*binnedSide
	u                  []float64
	small              *projector
	w2                 []float64
	ok                 []bool
	c, lo, hi, h, invH float64
	ea2                []float64 // each side's E[x²], after fill
	live               []bool    // each side's bins within their limits, after fill
}

// w2sqGroup sets each direction's w2[i] to W2² between its sides[i]
// projected on its u and its small set (projected and sorted on u), with
// ok[i] false when the binned value is not within sw2RelTol (the caller
// then sorts). Several sides are the same atoms with other masses
// (SW2PerDirectionShared), and the directions bin the same sides: each
// chunk's rows are read once for them all, and projected once for each
// direction (fill). A direction's values do not depend on which others
// share its pass, to the bit.
func w2sqGroup(dirs []*binDir) {
	var binning []*binDir
	for _, dir := range dirs {
		if dir.prepare() {
			binning = append(binning, dir)
		}
	}
	if len(binning) == 0 {
		return
	}
	fill(binning)
	for _, dir := range binning {
		dir.finish()
	}
}

// prepare centres and sizes the bins of one direction and clears them;
// false when there is nothing to bin (w2 and ok then say why).
func (dir *binDir) prepare() bool {
	small, sides := dir.small, dir.sides
	clear(dir.ok)
	ns := small.n()
	if ns == 0 || sides[0].n() == 0 {
		for i := range sides {
			dir.w2[i], dir.ok[i] = math.NaN(), true
		}
		return false
	}
	// Centre on B's mean so the exact terms do not cancel in the sum.
	var c float64
	for j := range ns {
		c += small.mass(j) * small.value(j)
	}
	lo, hi := small.value(0)-c, small.value(ns-1)-c
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return false
	}
	dir.c, dir.lo, dir.hi = c, lo, hi
	dir.h = (hi - lo) / sw2Bins
	dir.invH = 1 / dir.h
	for _, b := range sides {
		if b.off == 0 {
			clear(b.tab)
		}
		b.out = b.out[:0]
	}
	return true
}

// finish is W2² for each live side of a filled direction.
func (dir *binDir) finish() {
	small := dir.small
	var eb2 float64
	for j := range small.n() {
		v := small.value(j) - dir.c
		eb2 += small.mass(j) * v * v
	}
	for i, b := range dir.sides {
		if !dir.live[i] {
			continue
		}
		cross, bound := b.cross(small, dir.c, dir.lo, dir.h)
		est := dir.ea2[i] + eb2 - 2*cross
		if bound <= sw2RelTol*(est-2*bound) {
			dir.w2[i], dir.ok[i] = est-bound, true
		}
	}
}

// fillChunk is how many atoms fill projects before binning them; a
// multiple of the 4096 that E[x²]'s blocks sum.
const fillChunk = 4096

// fill bins each direction's sides' centred projections x = z·u − c and
// sets each side's E[x²], summed in blocks of 4096 so its rounding stays
// near that of the terms, and its liveness: false when more than a
// sixteenth of the atoms fall outside [lo, hi) or one is NaN. Each chunk
// is projected in one loop, once for every side (they share their
// atoms) and every direction, and binned in another: the binning loop's
// scattered updates then overlap instead of waiting behind the dot
// products (half the time of one fused loop).
func fill(dirs []*binDir) {
	first := dirs[0].sides[0]
	n := first.n()
	limit := n / 16
	for _, dir := range dirs {
		dir.ea2, dir.live = make([]float64, len(dir.sides)), make([]bool, len(dir.sides))
		for i := range dir.live {
			dir.live[i] = true
		}
	}
	quad := quadOf(dirs)
	for j0 := 0; j0 < n; j0 += fillChunk {
		m := min(fillChunk, n-j0)
		first.projectGroup(dirs, quad, j0, m)
		for _, dir := range dirs {
			dir.binChunk(j0, m, limit)
		}
	}
}

// binChunk bins atoms j0 … j0+m−1 of each live side of dir, their
// projections in dir's first side's xs.
func (dir *binDir) binChunk(j0, m, limit int) {
	sides, ea2, live := dir.sides, dir.ea2, dir.live
	first := sides[0]
	xs := first.xs[:m]
	if first.pair != nil { // forWorker's pair: sides are first and first.pair
		if !live[0] {
			return
		}
		b0, b1, ok := first.binPair(xs, first.masses(j0, m), first.pair.masses(j0, m), dir.lo, dir.hi, dir.invH, limit)
		ea2[0] += b0
		ea2[1] += b1
		live[0], live[1] = ok, ok
		return
	}
	for i, b := range sides {
		if !live[i] {
			continue
		}
		block, ok := b.bin(xs, b.masses(j0, m), dir.lo, dir.hi, dir.invH, limit)
		ea2[i] += block
		live[i] = ok
	}
}

// masses is the masses of atoms j0 … j0+m−1, nil when uniform.
func (b *binnedSide) masses(j0, m int) []float64 {
	if b.mass == nil {
		return nil
	}
	return b.mass[j0 : j0+m]
}

// bin adds a chunk's projections xs, of masses ws (nil: uniform), to the
// bins, or to the atoms outside them, and returns their Σ mass·x²; ok is
// false on a NaN or when more than limit atoms lie outside. The loops
// that add run up to the next atom outside, so that they make no calls.
func (b *binnedSide) bin(xs, ws []float64, lo, hi, invH float64, limit int) (block float64, ok bool) {
	if ws != nil {
		ws = ws[:len(xs)]
	}
	idx := b.indexes(xs, lo, hi, invH)
	for j := 0; j < len(xs); j++ {
		if ws == nil {
			j, block = b.binUniform(xs, idx, j, block, lo, hi, invH)
		} else {
			j, block = b.binWeighted(xs, ws, idx, j, block, lo, hi, invH)
		}
		if j == len(xs) {
			break
		}
		x, w := xs[j], b.uniform
		if ws != nil {
			w = ws[j]
		}
		block += w * x * x
		if x != x { // NaN
			return 0, false
		}
		b.out = append(b.out, atom{x, w})
		if len(b.out) > limit {
			return 0, false
		}
	}
	return block, true
}

// binPair is bin for the pair of sides sharing b's table (forWorker),
// of masses ws and vs (nil: uniform), each atom's bin found and reached
// once for both: the same sums as bin makes for each, and both live or
// die together, as they share their atoms.
func (b *binnedSide) binPair(xs, ws, vs []float64, lo, hi, invH float64, limit int) (block, other float64, ok bool) {
	q := b.pair
	ws, vs = b.uniformOr(ws, len(xs)), q.uniformOr(vs, len(xs))
	pf := prefetcher{tab: b.tab, xs: xs, lo: lo, invH: invH}
	idx := b.indexes(xs, lo, hi, invH)
	for j := 0; j < len(xs); j++ {
		j, block, other = b.binBoth(xs, ws, vs, idx, j, block, other, lo, hi, invH, &pf)
		if j == len(xs) {
			break
		}
		x, w, v := xs[j], ws[j], vs[j]
		block += w * x * x
		other += v * x * x
		if x != x { // NaN
			return 0, 0, false
		}
		b.out, q.out = append(b.out, atom{x, w}), append(q.out, atom{x, v})
		if len(b.out) > limit {
			return 0, 0, false
		}
	}
	return block, other, true
}

// uniformOr is ws, or n masses b.uniform when ws is nil.
func (b *binnedSide) uniformOr(ws []float64, n int) []float64 {
	if ws != nil {
		return ws[:n]
	}
	if b.ones == nil {
		b.ones = make([]float64, fillChunk)
		for i := range b.ones {
			b.ones[i] = b.uniform
		}
	}
	return b.ones[:n]
}

// indexes is xs's bins (binIndexesFast) in b's scratch, nil where the
// CPU has no vector loops for them.
func (b *binnedSide) indexes(xs []float64, lo, hi, invH float64) []int32 {
	if b.idx == nil {
		b.idx = make([]int32, fillChunk+prefetchAhead)
	}
	return binIndexesFast(b.idx, xs, lo, hi, invH)
}

// binBoth is binWeighted for both sides of a pair, of masses ws and vs,
// their bins in idx (nil: found here).
func (b *binnedSide) binBoth(xs, ws, vs []float64, idx []int32, j int, block, other, lo, hi, invH float64, pf *prefetcher) (int, float64, float64) {
	tab := b.tab
	ws, vs = ws[:len(xs)], vs[:len(xs)]
	if idx != nil {
		return binBothFast(tab, xs, ws, vs, idx, j, block, other)
	}
	for ; j < len(xs); j++ {
		pf.ahead(j)
		x, w, v := xs[j], ws[j], vs[j]
		if !(x >= lo && x < hi) {
			break
		}
		block += w * x * x
		other += v * x * x
		k := int(binIndex(x, lo, invH)) * 4
		e := tab[k : k+4 : k+4]
		e[0] += w
		e[1] += w * x
		e[2] += v
		e[3] += v * x
	}
	return j, block, other
}

// prefetcher asks the cache, a batch at a time, for the bins of the
// atoms a little ahead of binBoth's Go loop (where binPairAVX does not
// run): the loop's own loads retire in order, so each waited on its
// miss in the pair's table of 4 MB.
// BenchmarkSW2Fill, 2²² atoms at d = 4, four rounds alternating builds
// with and without it on the AMD EPYC we measure on (whose memory's
// speed swings by half from minute to minute, so each is a ratio to the
// one-side case of the same run): a pair in one table took 1.32–1.60
// times one side's time without it, 1.01–1.21 with. One side's loops go
// without: for them it was no faster (BenchmarkSW2Binned, d = 4: 10.2–
// 10.8 CPU-s without, 10.9–12.4 with, alternated).
type prefetcher struct {
	tab, xs  []float64
	lo, invH float64
	next     int // the first atom whose bin is not asked for
}

// prefetchAhead is how many atoms ahead of the loop the prefetcher asks,
// in batches of as many; 64 to 128 were best on the AMD EPYC we measure
// on (16 and 32 were hardly better than none).
const prefetchAhead = 64

// ahead asks for the next batch when the loop at atom j is within a
// batch of the last asked for; small enough to inline, so the loops
// still make no call but once a batch.
func (p *prefetcher) ahead(j int) {
	if j+prefetchAhead >= p.next {
		p.batch()
	}
}

// batch asks for the next prefetchAhead atoms' bins. Past the last
// atom, next is set past any j.
func (p *prefetcher) batch() {
	if p.next >= len(p.xs) {
		p.next = math.MaxInt - prefetchAhead
		return
	}
	m := min(prefetchAhead, len(p.xs)-p.next)
	prefetchBins(p.tab, p.xs[p.next:p.next+m], p.lo, p.invH, 32)
	p.next += m
}

// binIndex is the bin of x in [lo, hi): x ≥ lo, so the index is not
// negative (and int's conversion is uint's, in one instruction instead
// of a branch and two), and the top edge can round up.
func binIndex(x, lo, invH float64) uint {
	return min(uint(int((x-lo)*invH)), sw2Bins-1)
}

// binUniform adds atoms j, j+1, … of mass b.uniform to the bins and to
// block, up to the first outside [lo, hi), whose index it returns.
func (b *binnedSide) binUniform(xs []float64, idx []int32, j int, block, lo, hi, invH float64) (int, float64) {
	tab, stride, w := b.tab[b.off:], b.stride, b.uniform
	if idx != nil {
		return binOneFast(tab, xs, b.uniformOr(nil, len(xs)), idx, stride, j, block)
	}
	for ; j < len(xs); j++ {
		x := xs[j]
		if !(x >= lo && x < hi) {
			return j, block
		}
		block += w * x * x
		k := int(binIndex(x, lo, invH)) * stride
		bin := tab[k : k+2 : k+2]
		bin[0] += w
		bin[1] += w * x
	}
	return j, block
}

// binWeighted is binUniform with the masses ws.
func (b *binnedSide) binWeighted(xs, ws []float64, idx []int32, j int, block, lo, hi, invH float64) (int, float64) {
	tab, stride := b.tab[b.off:], b.stride
	ws = ws[:len(xs)]
	if idx != nil {
		return binOneFast(tab, xs, ws, idx, stride, j, block)
	}
	for ; j < len(xs); j++ {
		x, w := xs[j], ws[j]
		if !(x >= lo && x < hi) {
			return j, block
		}
		block += w * x * x
		k := int(binIndex(x, lo, invH)) * stride
		bin := tab[k : k+2 : k+2]
		bin[0] += w
		bin[1] += w * x
	}
	return j, block
}

// chunkRows is the rows of atoms j0 … j0+m−1: a slice of the draws, or,
// when some atoms have zero weight (rare), the rows gathered into b.zs.
func (b *binnedSide) chunkRows(j0, m int) []float64 {
	d := b.d.D
	if b.rows == nil {
		return b.d.Z[j0*d : (j0+m)*d]
	}
	b.zs = b.zs[:0]
	for _, r := range b.rows[j0 : j0+m] {
		b.zs = append(b.zs, b.d.Z[r*d:(r+1)*d]...)
	}
	return b.zs
}

// projectGroup writes the centred projections z·u − c of atoms j0 …
// j0+m−1 on each direction of dirs into that direction's first side's
// xs, two directions at a time from one read of the rows
// (projectRowsPair), the dot product unrolled for the small d of the SNIS
// suites: the same sums in the same order as dot, so the same bits.
func (b *binnedSide) projectGroup(dirs []*binDir, quad *quadDirs, j0, m int) {
	d, z := b.d.D, b.chunkRows(j0, m)
	g := 0
	if quad != nil {
		var xss [4][]float64
		for k, dir := range dirs[:4] {
			xss[k] = dir.sides[0].xs[:m]
		}
		projectRowsQuad(z, d, quad, xss)
		g = 4
	}
	for ; g+2 <= len(dirs); g += 2 {
		p, q := dirs[g], dirs[g+1]
		projectRowsPair(z, d, p.u, q.u, p.c, q.c, p.sides[0].xs[:m], q.sides[0].xs[:m])
	}
	if g < len(dirs) {
		projectRows(z, d, dirs[g].u, dirs[g].c, dirs[g].sides[0].xs[:m])
	}
}

// quadDirs is four directions packed for projectRowsQuad: their u one
// after another, and their centres.
type quadDirs struct {
	u []float64
	c [4]float64
}

// quadOf packs dirs' first four directions; nil for fewer.
func quadOf(dirs []*binDir) *quadDirs {
	if len(dirs) < 4 {
		return nil
	}
	q := &quadDirs{}
	for k, dir := range dirs[:4] {
		q.u = append(q.u, dir.u...)
		q.c[k] = dir.c
	}
	return q
}

// projectRowsQuad is projectRowsPair for q's four directions: where
// projectQuadFast runs, each block of rows is read once for all four
// (at d = 16 the rows' stream was a quarter of an afin-snis unit), and
// the rows it leaves are projected in pairs. The same bits either way.
func projectRowsQuad(z []float64, d int, q *quadDirs, xss [4][]float64) {
	j := projectQuadFast(z, d, q, xss)
	if j == len(xss[0]) {
		return
	}
	u := func(k int) []float64 { return q.u[k*d : (k+1)*d] }
	projectRowsPair(z[j*d:], d, u(0), u(1), q.c[0], q.c[1], xss[0][j:], xss[1][j:])
	projectRowsPair(z[j*d:], d, u(2), u(3), q.c[2], q.c[3], xss[2][j:], xss[3][j:])
}

// projectRowsPair is projectRows on two directions, u centred on c into
// xs and v on e into ys, each row read once for both: the same sums in
// the same order, so the same bits.
func projectRowsPair(z []float64, d int, u, v []float64, c, e float64, xs, ys []float64) {
	ys = ys[:len(xs)]
	j0 := projectPairFast(z, d, u, v, c, e, xs, ys)
	if d == 4 {
		u0, u1, u2, u3 := u[0], u[1], u[2], u[3]
		v0, v1, v2, v3 := v[0], v[1], v[2], v[3]
		for j := j0; j < len(xs); j++ {
			r := z[4*j : 4*j+4 : 4*j+4]
			xs[j] = (0 + r[0]*u0 + r[1]*u1 + r[2]*u2 + r[3]*u3) - c
			ys[j] = (0 + r[0]*v0 + r[1]*v1 + r[2]*v2 + r[3]*v3) - e
		}
		return
	}
	// Four atoms at a time, as projectRows: eight chains in flight.
	u, v = u[:d], v[:d]
	j := j0
	for ; j+4 <= len(xs); j += 4 {
		r := z[j*d : (j+4)*d]
		r0, r1, r2, r3 := r[:d], r[d:2*d], r[2*d:3*d], r[3*d:4*d]
		r0, r1, r2, r3 = r0[:len(u)], r1[:len(u)], r2[:len(u)], r3[:len(u)]
		var a0, a1, a2, a3, b0, b1, b2, b3 float64
		for i, ui := range u {
			vi := v[i]
			a0 += r0[i] * ui
			a1 += r1[i] * ui
			a2 += r2[i] * ui
			a3 += r3[i] * ui
			b0 += r0[i] * vi
			b1 += r1[i] * vi
			b2 += r2[i] * vi
			b3 += r3[i] * vi
		}
		xs[j], xs[j+1], xs[j+2], xs[j+3] = a0-c, a1-c, a2-c, a3-c
		ys[j], ys[j+1], ys[j+2], ys[j+3] = b0-e, b1-e, b2-e, b3-e
	}
	for ; j < len(xs); j++ {
		row := z[j*d : (j+1)*d]
		xs[j], ys[j] = dot(row, u)-c, dot(row, v)-e
	}
}

// projectRows is project on consecutive rows z (row-major, len(xs) rows
// of d), the same sums in the same order.
func projectRows(z []float64, d int, u []float64, c float64, xs []float64) {
	switch d {
	case 2:
		u0, u1 := u[0], u[1]
		for j := range xs {
			r := z[2*j : 2*j+2 : 2*j+2]
			xs[j] = (0 + r[0]*u0 + r[1]*u1) - c
		}
	case 4:
		u0, u1, u2, u3 := u[0], u[1], u[2], u[3]
		for j := range xs {
			r := z[4*j : 4*j+4 : 4*j+4]
			xs[j] = (0 + r[0]*u0 + r[1]*u1 + r[2]*u2 + r[3]*u3) - c
		}
	default:
		// Four atoms at a time: each dot product is a chain of d
		// dependent additions, and four chains in flight hide their
		// latency (one SW2 of 10⁷ draws at d = 16 against 5·10⁴: 25–27 s
		// before, 23–24 s after, on one core; the same bits).
		u = u[:d]
		j := 0
		for ; j+4 <= len(xs); j += 4 {
			r := z[j*d : (j+4)*d]
			r0, r1, r2, r3 := r[:d], r[d:2*d], r[2*d:3*d], r[3*d:4*d]
			r0, r1, r2, r3 = r0[:len(u)], r1[:len(u)], r2[:len(u)], r3[:len(u)]
			var a0, a1, a2, a3 float64
			for i, ui := range u {
				a0 += r0[i] * ui
				a1 += r1[i] * ui
				a2 += r2[i] * ui
				a3 += r3[i] * ui
			}
			xs[j], xs[j+1], xs[j+2], xs[j+3] = a0-c, a1-c, a2-c, a3-c
		}
		for ; j < len(xs); j++ {
			xs[j] = dot(z[j*d:(j+1)*d], u) - c
		}
	}
}

// cross is ∫ F_A⁻¹ F_B⁻¹ du with F_A⁻¹ replaced by its mean on each bin,
// and the bound on the error that makes (see the top of this file).
func (b *binnedSide) cross(small *projector, c, lo, h float64) (cross, bound float64) {
	slices.SortFunc(b.out, func(p, q atom) int { return cmpFloat(p.x, q.x) })
	split := 0
	for split < len(b.out) && b.out[split].x < lo {
		split++
	}
	pieces := b.pieces(split)
	ns := small.n()
	j := 0
	vb := small.value(0) - c
	eb := small.mass(0)
	if ns == 1 {
		eb = 1
	}
	var t, ea float64
	for p := pieces.next(); p.w > 0; p = pieces.next() {
		ea += p.w
		if pieces.done() {
			ea = 1
		}
		first := vb
		for {
			end := math.Min(ea, eb)
			if end > t {
				cross += (end - t) * p.x * vb
				t = end
			}
			if eb > ea || j == ns-1 {
				break
			}
			j++
			vb = small.value(j) - c
			eb += small.mass(j)
			if j == ns-1 {
				eb = 1
			}
		}
		if p.binned {
			bound += p.w * h * (vb - first) / 4
		}
	}
	return cross, bound
}

// piece is a part of the large set in value order: a bin (mean x of mass
// w) or an atom outside the bins.
type piece struct {
	x, w   float64
	binned bool
}

// pieceIter walks the atoms below the bins, the non-empty bins, then the
// atoms above.
type pieceIter struct {
	b        *binnedSide
	split, i int // i: position over below ++ bins ++ above
	left     int // pieces not yet returned
}

func (b *binnedSide) pieces(split int) *pieceIter {
	left := len(b.out)
	for k := range sw2Bins {
		if b.binMass(k) > 0 {
			left++
		}
	}
	return &pieceIter{b: b, split: split, left: left}
}

func (it *pieceIter) done() bool { return it.left == 0 }

func (it *pieceIter) next() piece {
	b := it.b
	for it.left > 0 {
		i := it.i
		it.i++
		switch {
		case i < it.split:
			it.left--
			return piece{x: b.out[i].x, w: b.out[i].w}
		case i < it.split+sw2Bins:
			k := i - it.split
			if m := b.binMass(k); m > 0 {
				it.left--
				return piece{x: b.binMoment(k) / m, w: m, binned: true}
			}
		default:
			o := b.out[i-sw2Bins]
			it.left--
			return piece{x: o.x, w: o.w}
		}
	}
	return piece{}
}
