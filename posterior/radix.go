package posterior

import (
	"math"
	"slices"
)

// SW2 sorts 2R projections of every draw set, which dominates its cost;
// an LSD radix sort on order-preserving integer keys is several times
// faster than a comparison sort for the 10⁴–10⁶ values involved.

// orderedKey maps a float64 to a uint64 whose unsigned order is the
// float's numeric order (−Inf < … < −0 < +0 < … < +Inf): negative floats
// have all bits flipped, non-negative ones only the sign bit.
func orderedKey(x float64) uint64 {
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// keyValue inverts orderedKey.
func keyValue(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// radixSort sorts keys ascending, permuting payload (if not nil) along with
// them. tmpK and tmpP are scratch of the same lengths. The sort is stable.
//
// It sorts on the keys' upper 32 bits first (four byte passes instead of
// eight), which orders them exactly except within runs of keys that share
// those bits, and finishes each run on the whole key: by insertion when it
// is short, by the lower four byte passes otherwise. For projections of
// draws the runs are a few keys long (32 bits keep 20 bits of mantissa), so
// the second stage is one cheap sweep. Both stages are stable, so the
// permutation is the one a full stable sort on the whole key gives.
func radixSort(keys, tmpK []uint64, payload, tmpP []float64) {
	if len(keys) < 2 {
		return
	}
	lsdBytes(keys, tmpK, payload, tmpP, 4, 8)
	for i := 0; i < len(keys); {
		hi := keys[i] >> 32
		j := i + 1
		for j < len(keys) && keys[j]>>32 == hi {
			j++
		}
		var p, tp []float64
		if payload != nil {
			p, tp = payload[i:j], tmpP[i:j]
		}
		switch {
		case j-i <= shortRun:
			insertionSort(keys[i:j], p)
		case !slices.IsSorted(keys[i:j]): // long runs of ties need nothing
			lsdBytes(keys[i:j], tmpK[i:j], p, tp, 0, 4)
		}
		i = j
	}
}

// shortRun is the longest run of equal upper halves radixSort finishes
// by insertion.
const shortRun = 32

// insertionSort sorts keys (stably) with payload.
func insertionSort(keys []uint64, payload []float64) {
	for k := 1; k < len(keys); k++ {
		x := keys[k]
		if keys[k-1] <= x {
			continue
		}
		var px float64
		if payload != nil {
			px = payload[k]
		}
		m := k - 1
		for m >= 0 && keys[m] > x {
			keys[m+1] = keys[m]
			if payload != nil {
				payload[m+1] = payload[m]
			}
			m--
		}
		keys[m+1] = x
		if payload != nil {
			payload[m+1] = px
		}
	}
}

// lsdBytes is a stable LSD radix sort of keys (with payload) on their
// bytes from..to−1 (at most four), which must order them: bytes above
// to−1 are equal or already sorted on. Bytes on which all keys agree are
// skipped.
func lsdBytes(keys, tmpK []uint64, payload, tmpP []float64, from, to int) {
	n := len(keys)
	if n < 2 {
		return
	}
	var count [4][256]int
	for _, k := range keys {
		for b := from; b < to; b++ {
			count[b-from][byte(k>>(8*b))]++
		}
	}
	src, dst := keys, tmpK
	psrc, pdst := payload, tmpP
	for b := from; b < to; b++ {
		c := &count[b-from]
		if c[byte(src[0]>>(8*b))] == n {
			continue // every key has the same byte here
		}
		pos := 0
		for i := range c {
			pos, c[i] = pos+c[i], pos
		}
		shift := 8 * b
		if psrc == nil {
			for _, k := range src {
				d := byte(k >> shift)
				dst[c[d]] = k
				c[d]++
			}
		} else {
			for i, k := range src {
				d := byte(k >> shift)
				dst[c[d]] = k
				pdst[c[d]] = psrc[i]
				c[d]++
			}
		}
		src, dst = dst, src
		psrc, pdst = pdst, psrc
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
		if payload != nil {
			copy(payload, psrc)
		}
	}
}
