package arch

import (
	"math"
	"sort"
)

// FlowMaxLogScale bounds every flow log-scale by s·tanh(·/s).
const FlowMaxLogScale = 1.2

// FlowMask is the keep mask (1 = conditioning, left unchanged) of coupling
// t for dimension d: the authors' hashed pseudo-random half-split. Each
// coordinate i gets the score frac(sin((i+1)·12.9898 + φ_t)·43758.5453),
// φ_t = 1729 + 104729·(t+1), evaluated in float32 as their code does; the
// max(1, min(d−1, ⌊d/2⌋)) highest-scoring coordinates are kept, and the
// mask is inverted on odd t. For d = 1 nothing can condition: the
// coordinate is transformed from the context alone in every coupling.
func FlowMask(d, t int) []float32 {
	m := make([]float32, d)
	if d == 1 {
		return m
	}
	phi := float32(1729 + 104729*(t+1))
	score := make([]float32, d)
	for i := range d {
		arg := float32(float32(i+1)*float32(12.9898)) + phi
		s := float32(math.Sin(float64(arg))) * float32(43758.5453)
		score[i] = s - float32(math.Trunc(float64(s)))
	}
	idx := make([]int, d)
	for i := range idx {
		idx[i] = i
	}
	// Highest score first; ties (not met for d ≤ 64) by lower index.
	sort.SliceStable(idx, func(a, b int) bool { return score[idx[a]] > score[idx[b]] })
	keep := max(1, min(d-1, d/2))
	for _, i := range idx[:keep] {
		m[i] = 1
	}
	if t%2 == 1 {
		for i := range m {
			m[i] = 1 - m[i]
		}
	}
	return m
}
