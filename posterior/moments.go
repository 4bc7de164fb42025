package posterior

// Mean is the (weighted, for weighted draws) sample mean. Zero-weight draws
// are skipped, so a dead SNIS draw holding NaN cannot poison the result.
func (d *Draws) Mean() []float64 {
	m := make([]float64, d.D)
	s := d.Len()
	if s == 0 {
		return m
	}
	for k := 0; k < s; k++ {
		w := 1 / float64(s)
		if d.W != nil {
			w = d.W[k]
			if w == 0 {
				continue
			}
		}
		for i, v := range d.Row(k) {
			m[i] += w * v
		}
	}
	return m
}

// Cov is the sample covariance, row-major D×D: unweighted draws use the
// unbiased n−1 divisor; weighted draws use Σ w̄ (z−μ)(z−μ)ᵀ with no Bessel
// correction (the paper's App. D.3), skipping zero-weight draws.
func (d *Draws) Cov() []float64 {
	dim := d.D
	c := make([]float64, dim*dim)
	s := d.Len()
	if s < 2 && d.W == nil {
		return c
	}
	m := d.Mean()
	r := make([]float64, dim)
	for k := 0; k < s; k++ {
		w := 1 / float64(s-1)
		if d.W != nil {
			w = d.W[k]
			if w == 0 {
				continue
			}
		}
		for i, v := range d.Row(k) {
			r[i] = v - m[i]
		}
		for i := 0; i < dim; i++ {
			wi := w * r[i]
			row := c[i*dim : (i+1)*dim]
			for j := 0; j <= i; j++ {
				row[j] += wi * r[j]
			}
		}
	}
	for i := 0; i < dim; i++ {
		for j := 0; j < i; j++ {
			c[j*dim+i] = c[i*dim+j]
		}
	}
	return c
}
