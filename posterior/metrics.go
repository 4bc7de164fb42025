package posterior

import (
	"math"
	"runtime"
	"sync"

	"github.com/afin-bench/afin/internal/streams"
	"gonum.org/v1/gonum/floats"
)

// The metrics of the paper's App. D.3. Each takes two draw sets of the same
// dimension, either of which may be weighted, and returns NaN when the
// dimensions differ or a set is empty (callers that read user files check
// this first and report it).

// M1 is ‖μ̂_a − μ̂_b‖₂, the distance between the (weighted) means.
func M1(a, b *Draws) float64 {
	if !comparable(a, b) {
		return math.NaN()
	}
	return euclidean(a.Mean(), b.Mean())
}

// M2 is ‖Σ̂_a − Σ̂_b‖_F, the Frobenius distance between the covariances
// (n−1 divisor for unweighted draws, none for weighted ones; see Cov).
func M2(a, b *Draws) float64 {
	if !comparable(a, b) {
		return math.NaN()
	}
	// The Frobenius norm of a row-major matrix is the Euclidean norm of
	// its entries.
	return euclidean(a.Cov(), b.Cov())
}

// MeanError is M1 against a known mean (a conjugate task's exact
// posterior mean, or any point estimate): ‖mean − ref‖₂, NaN when the
// lengths differ. It is gonum's scaled distance (floats.Distance), as the
// exact-moment M1s in results have always been computed.
func MeanError(mean, ref []float64) float64 {
	if len(mean) != len(ref) || len(mean) == 0 {
		return math.NaN()
	}
	return floats.Distance(mean, ref, 2)
}

// CovError is M2 against a known covariance (row-major d×d):
// ‖cov − ref‖_F, NaN when the sizes differ.
func CovError(cov, ref []float64) float64 { return MeanError(cov, ref) }

// euclidean is ‖x − y‖₂.
func euclidean(x, y []float64) float64 {
	var s float64
	for i := range x {
		d := x[i] - y[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// DefaultDirections is the paper's number R of random projections for SW2.
const DefaultDirections = 128

// SW2Options configures SW2With.
type SW2Options struct {
	// Directions is the number R of random unit directions; 0 means 128.
	Directions int
	// Seed seeds the directions (and the resampling, if any).
	Seed uint64
	// Resample, when > 0, replaces each weighted set by this many draws
	// resampled with replacement before slicing — what the authors' public
	// code does. The default (0) is the paper's definition: the exact
	// distance between the weighted empirical quantile functions.
	Resample int
}

// SW2 is the sliced 2-Wasserstein distance with R = 128 random unit
// directions drawn from a generator seeded by seed:
//
//	SW2 = [ (1/R) Σ_r ∫₀¹ (F⁻¹_{a,r}(u) − F⁻¹_{b,r}(u))² du ]^{1/2},
//
// where F⁻¹_{·,r} is the empirical quantile function of the projections on
// direction r, weighted by the draws' normalised weights when they carry
// them. Both quantile functions are step functions, so the integral is
// exact: a merge of their breakpoints. For two unweighted sets of equal size
// this is the paper's mean of squared differences of sorted projections;
// unequal sizes need no truncation. When one set has at least 2¹⁸
// positive-weight draws and four times the other's (an SNIS point of 10⁶–10⁷
// proposals against a reference), it is binned rather than sorted on each
// direction, within a relative 10⁻⁴ of the exact W2² per direction
// (sw2binned.go derives the bound and falls back to sorting where it does
// not hold), so SW2 is within 5·10⁻⁵ of the exact value.
func SW2(a, b *Draws, seed uint64) float64 {
	return SW2With(a, b, SW2Options{Seed: seed})
}

// SW2With is SW2 with options (number of directions, resampling).
func SW2With(a, b *Draws, o SW2Options) float64 {
	return rootMean(SW2PerDirection(a, b, o))
}

// rootMean is SW2 from its per-direction W2² (NaN for nil: sets not
// comparable).
func rootMean(per []float64) float64 {
	if per == nil {
		return math.NaN()
	}
	var s float64
	for _, v := range per {
		s += v
	}
	return math.Sqrt(s / float64(len(per)))
}

// SW2PerDirection returns the squared 1-D W2 distance on each of the R
// directions (their mean is SW2²); their spread gives the Monte Carlo error
// due to the choice of directions. It returns nil when the sets are not
// comparable.
func SW2PerDirection(a, b *Draws, o SW2Options) []float64 {
	if !comparable(a, b) {
		return nil
	}
	r := o.Directions
	if r <= 0 {
		r = DefaultDirections
	}
	dim := a.D
	if o.Resample > 0 {
		if a.Weighted() {
			a = a.Resample(streams.New(o.Seed, streams.SW2ResampleA), o.Resample)
		}
		if b.Weighted() {
			b = b.Resample(streams.New(o.Seed, streams.SW2ResampleB), o.Resample)
		}
	}
	return perDirectionOf(a, b, sw2Directions(o.Seed, r, dim), r, nil)
}

// perDirectionOf is SW2PerDirection of two comparable sets on the r
// directions dirs, b's projections from ref when it is not nil. The
// larger set is binned when it dwarfs the other (see sw2binned.go).
func perDirectionOf(a, b *Draws, dirs []float64, r int, ref *SW2Ref) []float64 {
	big, small := a, b
	if positive(b) > positive(a) {
		big, small = b, a
	}
	var sides []*binnedSide
	if binnable(big, small) {
		sides = []*binnedSide{newBinnedSide(big)}
	}
	return perDirection([]*Draws{a}, b, small, sides, dirs, r, ref)[0]
}

// SW2PerDirectionShared is SW2PerDirection(a, b, o) for each a of as, when
// they are the same draws with other weights (one Z, as an SNIS point and
// its proposals unweighted): if every a is binned, each chunk of draws
// is projected once for all of them. Each result is the one
// SW2PerDirection gives, to the bit.
func SW2PerDirectionShared(as []*Draws, b *Draws, o SW2Options) [][]float64 {
	var sides []*binnedSide
	if o.Resample == 0 {
		sides = sharedSides(as, b)
	}
	if sides == nil {
		out := make([][]float64, len(as))
		for i, a := range as {
			out[i] = SW2PerDirection(a, b, o)
		}
		return out
	}
	r := o.Directions
	if r <= 0 {
		r = DefaultDirections
	}
	return perDirection(as, b, b, sides, sw2Directions(o.Seed, r, b.D), r, nil)
}

// sharedSides are the binned sides of as against b when every a is
// binned and they are the same atoms with positive weights; else nil.
func sharedSides(as []*Draws, b *Draws) []*binnedSide {
	var sides []*binnedSide
	for _, a := range as {
		if !comparable(a, b) || !binnable(a, b) || !sameAtoms(a, as[0]) {
			return nil
		}
		side := newBinnedSide(a)
		if side.rows != nil { // zero weights: the sides' atoms differ
			return nil
		}
		sides = append(sides, side)
	}
	return sides
}

// SW2Shared is SW2 of each of as against b, through
// SW2PerDirectionShared: as SW2(a, b, seed) for each a, to the bit.
func SW2Shared(as []*Draws, b *Draws, seed uint64) []float64 {
	out := make([]float64, len(as))
	for i, per := range SW2PerDirectionShared(as, b, SW2Options{Seed: seed}) {
		out[i] = rootMean(per)
	}
	return out
}

// SW2Ref is a draw set b prepared as the fixed side of SW2 against many
// sets with one seed, as a task's reference posterior is against every
// point of every method on the task: b's projections on each of the 128
// directions are sorted once, on first use, and shared read-only by every
// later call and worker (at 5·10⁴ reference draws, 51 MB). Sorting them
// again for each point had been most of the cost of scoring small points.
// Every value is the one SW2 and SW2Shared give, to the bit.
type SW2Ref struct {
	b    *Draws
	dirs []float64
	proj []sw2RefDir
}

// sw2RefDir is b's sorted projections on one direction, made once.
type sw2RefDir struct {
	once sync.Once
	p    *projector
}

// NewSW2Ref prepares b for SW2 with seed; it projects nothing yet.
func NewSW2Ref(b *Draws, seed uint64) *SW2Ref {
	return &SW2Ref{b: b, dirs: sw2Directions(seed, DefaultDirections, b.D), proj: make([]sw2RefDir, DefaultDirections)}
}

// projected is b's sorted projections on direction k.
func (s *SW2Ref) projected(k int) *projector {
	d := &s.proj[k]
	d.once.Do(func() {
		p := newProjector(s.b)
		p.project(s.dirs[k*s.b.D : (k+1)*s.b.D])
		p.tmpK, p.tmpW = nil, nil // sorting scratch, not needed again
		d.p = p
	})
	return d.p
}

// SW2 is SW2(a, b, seed).
func (s *SW2Ref) SW2(a *Draws) float64 { return s.Shared([]*Draws{a})[0] }

// Shared is SW2Shared(as, b, seed).
func (s *SW2Ref) Shared(as []*Draws) []float64 {
	out := make([]float64, len(as))
	if sides := sharedSides(as, s.b); sides != nil {
		for i, per := range perDirection(as, s.b, s.b, sides, s.dirs, DefaultDirections, s) {
			out[i] = rootMean(per)
		}
		return out
	}
	for i, a := range as {
		out[i] = math.NaN()
		if comparable(a, s.b) {
			out[i] = rootMean(perDirectionOf(a, s.b, s.dirs, DefaultDirections, s))
		}
	}
	return out
}

// binnable: SW2 bins big against small (see sw2binned.go).
func binnable(big, small *Draws) bool {
	return positive(big) >= sw2BinMin && positive(big) >= sw2BinRatio*positive(small)
}

// sameAtoms: a and b are the same draws (the same Z), whatever their
// weights.
func sameAtoms(a, b *Draws) bool {
	return a.D == b.D && len(a.Z) == len(b.Z) && (len(a.Z) == 0 || &a.Z[0] == &b.Z[0])
}

// perDirection is W2² on each of the r directions dirs between each of
// as and b. sides, when not nil, are the binned sides (of the as or of
// b, see SW2PerDirection) and small the other set; a direction the bins
// cannot give within their bound is sorted. b's sorted projections come
// from ref when it is not nil (it holds b on these directions). Workers
// take sw2Group directions at a time (see sw2binned.go); each direction
// is one worker's, and its value does not depend on which others share
// its group, so the result does not depend on the number of workers.
func perDirection(as []*Draws, b, small *Draws, sides []*binnedSide, dirs []float64, r int, ref *SW2Ref) [][]float64 {
	out := make([][]float64, len(as))
	for i := range out {
		out[i] = make([]float64, r)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	group := sw2Group(b.D)
	for range min(runtime.GOMAXPROCS(0), (r+group-1)/group) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newDirWorker(as, b, small, sides, ref, group)
			for k0 := range next {
				w.group(out, dirs, k0, min(k0+group, r))
			}
		}()
	}
	for k0 := 0; k0 < r; k0 += group {
		next <- k0
	}
	close(next)
	wg.Wait()
	return out
}

// dirWorker is one worker of perDirection: its projectors of the sets,
// and, when a side is binned, its copies of the sides for each direction
// of a group (tables of their own) and the small set's projectors.
type dirWorker struct {
	as       []*Draws
	b, small *Draws
	ref      *SW2Ref
	pas      []*projector
	pb       *projector
	bins     []*binDir // one per direction of a group; nil: nothing binned
}

func newDirWorker(as []*Draws, b, small *Draws, sides []*binnedSide, ref *SW2Ref, group int) *dirWorker {
	w := &dirWorker{as: as, b: b, small: small, ref: ref, pas: make([]*projector, len(as))}
	if sides == nil {
		return w
	}
	for range group {
		dir := &binDir{sides: forWorker(sides), w2: make([]float64, len(sides)), ok: make([]bool, len(sides))}
		if ref == nil || small != b {
			dir.small = newProjector(small)
		}
		w.bins = append(w.bins, dir)
	}
	return w
}

// group is W2² on directions k0 … k1−1 into out: binned together where
// the sides are binned, sorted where they are not or the bins' bound
// does not hold.
func (w *dirWorker) group(out [][]float64, dirs []float64, k0, k1 int) {
	dim := w.b.D
	var bins []*binDir
	if w.bins != nil {
		bins = w.bins[:k1-k0]
		for g, dir := range bins {
			k := k0 + g
			dir.u = dirs[k*dim : (k+1)*dim]
			if w.ref != nil && w.small == w.b {
				dir.small = w.ref.projected(k)
			} else {
				dir.small.project(dir.u)
			}
		}
		w2sqGroup(bins)
	}
	for k := k0; k < k1; k++ {
		u := dirs[k*dim : (k+1)*dim]
		var pbk *projector // b on u, projected once for all the as
		for i, a := range w.as {
			if bins != nil && bins[k-k0].ok[i] {
				out[i][k] = bins[k-k0].w2[i]
				continue
			}
			if w.pas[i] == nil {
				w.pas[i] = newProjector(a)
			}
			w.pas[i].project(u)
			switch {
			case pbk != nil:
			case w.ref != nil:
				pbk = w.ref.projected(k)
			default:
				if w.pb == nil {
					w.pb = newProjector(w.b)
				}
				w.pb.project(u)
				pbk = w.pb
			}
			out[i][k] = w2sq1D(w.pas[i], pbk)
		}
	}
}

// positive is the number of draws with positive weight (all of them when
// unweighted).
func positive(d *Draws) int {
	if d.W == nil {
		return d.Len()
	}
	n := 0
	for _, w := range d.W {
		if w > 0 {
			n++
		}
	}
	return n
}

// sw2Directions draws r unit directions in R^dim, row-major: normalised
// standard normal vectors, i.e. uniform on the sphere.
func sw2Directions(seed uint64, r, dim int) []float64 {
	rng := streams.New(seed, streams.SW2Directions)
	dirs := make([]float64, r*dim)
	for k := range r {
		u := dirs[k*dim : (k+1)*dim]
		for {
			var n2 float64
			for i := range u {
				u[i] = rng.NormFloat64()
				n2 += u[i] * u[i]
			}
			if n2 > 0 {
				inv := 1 / math.Sqrt(n2)
				for i := range u {
					u[i] *= inv
				}
				break
			}
		}
	}
	return dirs
}

// projector holds one draw set's sorted projections on a direction, as
// order-preserving integer keys (see radixSort), and for weighted sets
// their normalised weights in the same order. Zero-weight draws are left
// out (they carry no mass and may hold NaN).
type projector struct {
	d          *Draws
	rows       []int   // rows with positive weight (weighted sets only)
	inv        float64 // 1 / total weight, so unnormalised W still works
	keys, tmpK []uint64
	w, tmpW    []float64
}

func newProjector(d *Draws) *projector {
	p := &projector{d: d}
	n := d.Len()
	if d.W != nil {
		var total float64
		for s, w := range d.W {
			if w > 0 {
				p.rows = append(p.rows, s)
				total += w
			}
		}
		p.inv = 1 / total
		n = len(p.rows)
		p.w, p.tmpW = make([]float64, n), make([]float64, n)
	}
	p.keys, p.tmpK = make([]uint64, n), make([]uint64, n)
	return p
}

func (p *projector) project(u []float64) {
	d := p.d
	if d.W == nil {
		for s := range p.keys {
			p.keys[s] = orderedKey(dot(d.Row(s), u))
		}
		radixSort(p.keys, p.tmpK, nil, nil)
		return
	}
	for j, s := range p.rows {
		p.keys[j] = orderedKey(dot(d.Row(s), u))
		p.w[j] = d.W[s] * p.inv
	}
	radixSort(p.keys, p.tmpK, p.w, p.tmpW)
}

// n is the number of atoms.
func (p *projector) n() int { return len(p.keys) }

// value is atom j's position.
func (p *projector) value(j int) float64 { return keyValue(p.keys[j]) }

// mass is atom j's normalised weight.
func (p *projector) mass(j int) float64 {
	if p.d.W == nil {
		return 1 / float64(len(p.keys))
	}
	return p.w[j]
}

// w2sq1D integrates (F⁻¹_a(u) − F⁻¹_b(u))² over u ∈ [0,1] for two sorted
// atomic distributions by walking the union of their breakpoints.
func w2sq1D(a, b *projector) float64 {
	na, nb := a.n(), b.n()
	if na == 0 || nb == 0 {
		return math.NaN()
	}
	ua, ub := a.d.W == nil, b.d.W == nil
	var sum, t float64
	i, j := 0, 0
	// ca, cb: cumulative mass at the right end of atoms i and j.
	ca, cb := atomEnd(a, ua, 0, 0, na), atomEnd(b, ub, 0, 0, nb)
	for {
		diff := a.value(i) - b.value(j)
		end := math.Min(ca, cb)
		if end > t {
			sum += (end - t) * diff * diff
			t = end
		}
		if i == na-1 && j == nb-1 {
			break
		}
		// Advance the side(s) whose atom ends here (both on a tie). A side
		// on its last atom (end 1) never advances; rounding in a weighted
		// running sum can only shift a breakpoint by an ulp.
		switch {
		case i == na-1:
			j++
			cb = atomEnd(b, ub, j, cb, nb)
		case j == nb-1:
			i++
			ca = atomEnd(a, ua, i, ca, na)
		default:
			advA, advB := ca <= cb, cb <= ca
			if advA {
				i++
				ca = atomEnd(a, ua, i, ca, na)
			}
			if advB {
				j++
				cb = atomEnd(b, ub, j, cb, nb)
			}
		}
	}
	return sum
}

// atomEnd is the cumulative mass at the right end of atom j, given prev,
// the cumulative mass at the right end of atom j−1. Unweighted sets use
// (j+1)/n directly, which is exact at integer multiples and does not
// accumulate rounding.
func atomEnd(p *projector, uniform bool, j int, prev float64, n int) float64 {
	if j == n-1 {
		return 1
	}
	if uniform {
		return float64(j+1) / float64(n)
	}
	return prev + p.w[j]
}

func dot(x, u []float64) float64 {
	var s float64
	for i, v := range x {
		s += v * u[i]
	}
	return s
}

// EnergyGap is the paper's target energy gap ΔE = E_q[−log p̃] − E_ref[−log
// p̃], each expectation weighted when its draws carry weights (zero-weight
// draws are skipped, so a dead SNIS draw with log p̃ = −Inf does not make
// the result NaN). It returns NaN for incomparable sets.
func EnergyGap(t interface{ LogDensity([]float64) float64 }, q, ref *Draws) float64 {
	if !comparable(q, ref) {
		return math.NaN()
	}
	return meanEnergy(t, q) - meanEnergy(t, ref)
}

// MeanEnergy is E_d[−log p̃], one side of EnergyGap, weighted when d
// carries weights: a scorer that compares many sets with one reference
// computes the reference's side once (EnergyGap(t, q, ref) is
// MeanEnergy(t, q) − MeanEnergy(t, ref), to the bit). NaN for an empty
// set.
func MeanEnergy(t interface{ LogDensity([]float64) float64 }, d *Draws) float64 {
	if d == nil || d.D < 1 || d.Len() == 0 || (d.W != nil && len(d.W) != d.Len()) {
		return math.NaN()
	}
	return meanEnergy(t, d)
}

func meanEnergy(t interface{ LogDensity([]float64) float64 }, d *Draws) float64 {
	logP := knownLogP(t, d)
	n := d.Len()
	var s float64
	for k := range n {
		w := 1 / float64(n)
		if d.W != nil {
			w = d.W[k]
			if w == 0 {
				continue
			}
		}
		if logP != nil {
			s -= w * logP[k]
		} else {
			s -= w * t.LogDensity(d.Row(k))
		}
	}
	return s
}

// logPChecks is how many of a set's stored log p̃ values knownLogP checks
// against the target before trusting the rest.
const logPChecks = 16

// knownLogP returns d.LogP when it is t's log p̃: the right length, and
// equal to t's own value, up to rounding, at logPChecks rows spread over
// the set. The values may come from an evaluator of the same density that
// sums its terms in another order (factor.Packed), so agreement is to
// 1e-9 of the magnitude; a LogP that belongs to another target differs by
// far more somewhere among the rows checked, and then every row is
// evaluated again. Rows SNIS killed (non-finite values) are skipped.
func knownLogP(t interface{ LogDensity([]float64) float64 }, d *Draws) []float64 {
	n := d.Len()
	if d.LogP == nil || len(d.LogP) != n {
		return nil
	}
	for c := range logPChecks {
		k := c * (n - 1) / max(1, logPChecks-1)
		if d.W != nil && d.W[k] == 0 {
			continue
		}
		got, want := d.LogP[k], t.LogDensity(d.Row(k))
		if !finite(got) || !finite(want) || math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			return nil
		}
	}
	return d.LogP
}

func comparable(a, b *Draws) bool {
	return a != nil && b != nil && a.D >= 1 && a.D == b.D && a.Len() > 0 && b.Len() > 0 &&
		(a.W == nil || len(a.W) == a.Len()) && (b.W == nil || len(b.W) == b.Len())
}
