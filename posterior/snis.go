package posterior

import (
	"fmt"
	"math"
)

// SNISInfo holds the importance-weight diagnostics of one SNIS run.
type SNISInfo struct {
	// NonFinite counts the draws that got weight zero because their
	// coordinates, log q or log p̃ were not finite (or log p̃ − log q
	// overflowed).
	NonFinite int
	// ParetoK is the PSIS k̂ of the raw ratios (see ParetoK; +Inf when no
	// fit is possible, e.g. S < 21).
	ParetoK float64
	// MaxWeight is the largest normalised weight.
	MaxWeight float64
	// EntropyRatio is H(w̄)/log S (see EntropyRatio).
	EntropyRatio float64
	// ESS is Kish's effective sample size 1/Σ w̄².
	ESS float64
}

// SNIS turns S proposal draws z (row-major S×d), their proposal log
// densities logQ and the target's unnormalised log densities logP into
// self-normalised importance-weighted draws, w̄ ∝ exp(logP − logQ),
// normalised by log-sum-exp in float64.
//
// A draw whose coordinates, log q or log p̃ are not finite gets weight zero
// and is counted in SNISInfo.NonFinite; it stays in the returned set (so S
// and the entropy ratio keep their meaning), and every consumer in this
// package ignores zero-weight rows. If no draw has a positive weight, SNIS
// returns an error. The returned Draws alias z (no copy: SNIS budgets reach
// 10⁷ draws).
func SNIS(d int, z, logQ, logP []float64) (*Draws, SNISInfo, error) {
	var info SNISInfo
	if d < 1 {
		return nil, info, fmt.Errorf("snis: dimension %d, want >= 1", d)
	}
	s := len(logQ)
	if s == 0 {
		return nil, info, fmt.Errorf("snis: no draws")
	}
	if len(logP) != s || len(z) != s*d {
		return nil, info, fmt.Errorf("snis: %d log q values, %d log p values and %d coordinates for d=%d (want %d, %d, %d)",
			s, len(logP), len(z), d, s, s, s*d)
	}
	logW := make([]float64, s)
	for i := range s {
		lw := logP[i] - logQ[i]
		if !finite(logP[i]) || !finite(logQ[i]) || !finite(lw) || !allFinite(z[i*d:(i+1)*d]) {
			logW[i] = math.Inf(-1)
			info.NonFinite++
			continue
		}
		logW[i] = lw
	}
	w, ok := normalizeLogWeights(logW)
	if !ok {
		return nil, info, fmt.Errorf("snis: all %d importance weights are zero: every draw has a non-finite log q, log p̃ or coordinate", s)
	}
	info.ParetoK = ParetoK(logW)
	info.MaxWeight = MaxWeight(w)
	info.EntropyRatio = EntropyRatio(w)
	info.ESS = KishESS(w)
	return &Draws{D: d, Z: z, W: w}, info, nil
}

// normalizeLogWeights turns log weights (-Inf for a zero weight, never
// NaN or +Inf) into weights that sum to 1: shifted by their largest, so
// very negative ones do not all underflow, then exponentiated and divided
// by their sum in float64. ok is false when every log weight is -Inf.
func normalizeLogWeights(logW []float64) (w []float64, ok bool) {
	top := math.Inf(-1)
	for _, v := range logW {
		top = math.Max(top, v)
	}
	if math.IsInf(top, -1) {
		return nil, false
	}
	w = make([]float64, len(logW))
	var sum float64
	for k, v := range logW {
		w[k] = math.Exp(v - top)
		sum += w[k]
	}
	for k := range w {
		w[k] /= sum
	}
	return w, true
}

// MaxWeight is the largest of the normalised weights w.
func MaxWeight(w []float64) float64 {
	m := 0.0
	for _, v := range w {
		m = math.Max(m, v)
	}
	return m
}

// EntropyRatio is the paper's H_ratio = −Σ w̄ log w̄ / log S (App. D.3) of
// normalised weights w: 1 for uniform weights, 0 when one draw holds all the
// mass. S counts zero weights too, so dead draws lower the ratio. By
// convention a single draw has ratio 1.
func EntropyRatio(w []float64) float64 {
	if len(w) <= 1 {
		return 1
	}
	var h float64
	for _, v := range w {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h / math.Log(float64(len(w)))
}

// KishESS is Kish's effective sample size (Σw)²/Σw² of weights w (which
// need not be normalised).
func KishESS(w []float64) float64 {
	var s, s2 float64
	for _, v := range w {
		s += v
		s2 += v * v
	}
	if s2 == 0 {
		return 0
	}
	return s * s / s2
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func allFinite(v []float64) bool {
	for _, x := range v {
		if !finite(x) {
			return false
		}
	}
	return true
}
