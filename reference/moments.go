package reference

// moments is a streaming mean and covariance accumulator (Welford's
// update, merged across chains with Chan et al.'s pairwise formula), so
// long runs never hold their draws.
type moments struct {
	d    int
	n    float64
	mean []float64
	m2   []float64 // Σ (z−mean)(z−mean)ᵀ, row-major d×d (lower triangle kept)
	dlt  []float64
}

func newMoments(d int) *moments {
	return &moments{d: d, mean: make([]float64, d), m2: make([]float64, d*d), dlt: make([]float64, d)}
}

func (m *moments) add(z []float64) {
	m.n++
	d := m.d
	for i := 0; i < d; i++ {
		m.dlt[i] = z[i] - m.mean[i]
		m.mean[i] += m.dlt[i] / m.n
	}
	for i := 0; i < d; i++ {
		ri := z[i] - m.mean[i]
		row := m.m2[i*d : i*d+i+1]
		for j := range row {
			row[j] += ri * m.dlt[j]
		}
	}
}

// merge folds o into m.
func (m *moments) merge(o *moments) {
	if o.n == 0 {
		return
	}
	n := m.n + o.n
	d := m.d
	for i := 0; i < d; i++ {
		m.dlt[i] = o.mean[i] - m.mean[i]
	}
	f := m.n * o.n / n
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			m.m2[i*d+j] += o.m2[i*d+j] + f*m.dlt[i]*m.dlt[j]
		}
	}
	for i := 0; i < d; i++ {
		m.mean[i] += m.dlt[i] * o.n / n
	}
	m.n = n
}

// cov is the unbiased (n−1) sample covariance, full row-major.
func (m *moments) cov() []float64 {
	d := m.d
	c := make([]float64, d*d)
	if m.n < 2 {
		return c
	}
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			v := m.m2[i*d+j] / (m.n - 1)
			c[i*d+j], c[j*d+i] = v, v
		}
	}
	return c
}
