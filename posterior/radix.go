package posterior

import "math"

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
// them. tmpK and tmpP are scratch of the same lengths. Bytes on which all
// keys agree are skipped, so projections with a shared exponent cost fewer
// passes. The sort is stable.
func radixSort(keys, tmpK []uint64, payload, tmpP []float64) {
	n := len(keys)
	if n < 2 {
		return
	}
	var count [8][256]int
	for _, k := range keys {
		for b := range 8 {
			count[b][byte(k>>(8*b))]++
		}
	}
	src, dst := keys, tmpK
	psrc, pdst := payload, tmpP
	for b := range 8 {
		c := &count[b]
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
