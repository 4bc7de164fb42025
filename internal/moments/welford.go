// Package moments holds the streaming and small-sample moment estimators
// that several of afin's packages need (NUTS metric adaptation, reference
// posteriors, R̂/ESS, PSIS, dataset standardisation), written once so the
// conventions (divisors, accumulation order) are the same everywhere.
package moments

// Welford accumulates a running mean and (co)variance of d-vectors without
// storing them (Welford's update), and merges accumulators of separate
// streams with Chan et al.'s pairwise formula. With full set it tracks
// the whole covariance matrix (lower triangle), otherwise the diagonal.
type Welford struct {
	d    int
	full bool
	n    float64
	mean []float64
	m2   []float64 // Σ (z−mean)(z−mean)ᵀ: diagonal len d, or d×d row-major (lower used)
	dlt  []float64
}

// NewWelford returns an empty accumulator of d-vectors; full selects the
// dense covariance (O(d²) per draw) over the diagonal (O(d)).
func NewWelford(d int, full bool) *Welford {
	w := &Welford{d: d, full: full, mean: make([]float64, d), dlt: make([]float64, d)}
	if full {
		w.m2 = make([]float64, d*d)
	} else {
		w.m2 = make([]float64, d)
	}
	return w
}

// Reset empties the accumulator, keeping its buffers.
func (w *Welford) Reset() {
	w.n = 0
	clear(w.mean)
	clear(w.m2)
}

// N is the number of vectors added (or merged in).
func (w *Welford) N() float64 { return w.n }

// Mean is the running mean. The slice is the accumulator's own: copy it
// before adding more draws if the value must be kept.
func (w *Welford) Mean() []float64 { return w.mean }

// Add folds one d-vector into the running moments.
func (w *Welford) Add(z []float64) {
	w.n++
	d := w.d
	for i := 0; i < d; i++ {
		w.dlt[i] = z[i] - w.mean[i]
		w.mean[i] += w.dlt[i] / w.n
	}
	if !w.full {
		for i := 0; i < d; i++ {
			w.m2[i] += w.dlt[i] * (z[i] - w.mean[i])
		}
		return
	}
	for i := 0; i < d; i++ {
		ri := z[i] - w.mean[i]
		row := w.m2[i*d : i*d+i+1]
		for j := range row {
			row[j] += ri * w.dlt[j]
		}
	}
}

// Merge folds the moments of o (same d and mode) into w, as if w had seen
// o's vectors too: Chan et al.'s update M2 += M2ₒ + nnₒ/(n+nₒ)·δδᵀ.
func (w *Welford) Merge(o *Welford) {
	if o.n == 0 {
		return
	}
	n := w.n + o.n
	d := w.d
	for i := 0; i < d; i++ {
		w.dlt[i] = o.mean[i] - w.mean[i]
	}
	f := w.n * o.n / n
	if w.full {
		for i := 0; i < d; i++ {
			for j := 0; j <= i; j++ {
				w.m2[i*d+j] += o.m2[i*d+j] + f*w.dlt[i]*w.dlt[j]
			}
		}
	} else {
		for i := 0; i < d; i++ {
			w.m2[i] += o.m2[i] + f*w.dlt[i]*w.dlt[i]
		}
	}
	for i := 0; i < d; i++ {
		w.mean[i] += w.dlt[i] * o.n / n
	}
	w.n = n
}

// ShrunkCov writes a·S + ridge·I into out, where S is the unbiased (n−1)
// sample (co)variance: len d for a diagonal accumulator, d×d row-major and
// symmetric for a full one. a·m2 is divided by n−1 in that order, which
// NUTS's metric adaptation depends on for bit-reproducible warm-up.
// With fewer than two vectors S is taken as 0.
func (w *Welford) ShrunkCov(out []float64, a, ridge float64) {
	n, d := w.n, w.d
	s := func(v float64) float64 {
		if n < 2 {
			return 0
		}
		return a * v / (n - 1)
	}
	if !w.full {
		for i := 0; i < d; i++ {
			out[i] = s(w.m2[i]) + ridge
		}
		return
	}
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			v := s(w.m2[i*d+j])
			if i == j {
				v += ridge
			}
			out[i*d+j], out[j*d+i] = v, v
		}
	}
}

// Cov returns the unbiased (n−1) sample covariance: d×d row-major for a
// full accumulator, the d variances otherwise; zeros below two vectors.
func (w *Welford) Cov() []float64 {
	out := make([]float64, len(w.m2))
	w.ShrunkCov(out, 1, 0)
	return out
}
