package factor

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Reparam is the change of variables θ = Shift + Scale⊙θ′ of a task with
// a location–scale prior. The task in θ′ (Apply) has the same posterior
// up to this map: draws map back with Draw, densities with
// log q(θ) = log q′(θ′) − Σ log Scale.
type Reparam struct {
	Shift []float64 `json:"shift"`
	Scale []float64 `json:"scale"`
}

// Apply returns the task in θ′: prior location (μ−a)/s and scale σ/s
// (fullrank: precision sᵢΛᵢⱼsⱼ); design rows x⊙s; the offset x·a moved
// into the response of lin_gaussian and lin_student_t sites; a vector
// gaussian observation (y−a)/s with σ/s, which needs one common s. The
// logistic families cannot carry an offset in the task format, so with
// them x·a must be 0 (a = 0).
func (r Reparam) Apply(t *Task) (*Task, error) {
	d := t.D
	if len(r.Shift) != d || len(r.Scale) != d {
		return nil, fmt.Errorf("reparametrisation has %d shifts and %d scales, want d=%d", len(r.Shift), len(r.Scale), d)
	}
	for _, s := range r.Scale {
		if !(s > 0) || math.IsInf(s, 1) {
			return nil, fmt.Errorf("reparametrisation scale %g is not a finite number > 0", s)
		}
	}
	prior, err := r.prior(t.Prior)
	if err != nil {
		return nil, err
	}
	out := &Task{Name: t.Name, D: d, Prior: prior, Factors: make([]Likelihood, len(t.Factors))}
	for n, f := range t.Factors {
		if out.Factors[n], err = r.site(f); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// prior is the prior in θ′.
func (r Reparam) prior(p Prior) (Prior, error) {
	a, s := r.Shift, r.Scale
	d := len(s)
	loc := make([]float64, d)
	for i, m := range p.Location() {
		loc[i] = (m - a[i]) / s[i]
	}
	div := func(v []float64) []float64 {
		out := make([]float64, d)
		for i := range v {
			out[i] = v[i] / s[i]
		}
		return out
	}
	switch p := p.(type) {
	case *DiagGaussian:
		return &DiagGaussian{Loc: loc, Scale: div(p.Scale)}, nil
	case *DiagStudentT:
		return &DiagStudentT{Loc: loc, Scale: div(p.Scale), DF: p.DF}, nil
	case *DiagLaplace:
		return &DiagLaplace{Loc: loc, Scale: div(p.Scale)}, nil
	case *FullRankGaussian:
		prec := make([]float64, d*d)
		for i := range d {
			for j := range d {
				prec[i*d+j] = s[i] * p.Precision[i*d+j] * s[j]
			}
		}
		fr, err := NewFullRankGaussian(loc, prec)
		if err != nil {
			return nil, fmt.Errorf("reparametrised prior: %w", err)
		}
		return fr, nil
	}
	return nil, fmt.Errorf("prior %s is not a location–scale family", p.Family())
}

// site is one likelihood in θ′.
func (r Reparam) site(f Likelihood) (Likelihood, error) {
	a, s := r.Shift, r.Scale
	d := len(s)
	var x []float64
	var off float64
	if c := f.Covariate(); c != nil {
		x = make([]float64, d)
		for i, v := range c {
			x[i] = v * s[i]
			off += v * a[i]
		}
	}
	switch f := f.(type) {
	case *LinGaussian:
		return &LinGaussian{X: x, Y: f.Y - off, Sigma: f.Sigma}, nil
	case *LinStudentT:
		return &LinStudentT{X: x, Y: f.Y - off, Sigma: f.Sigma, DF: f.DF}, nil
	case *BernoulliLogit:
		if off != 0 {
			return nil, errors.New("a bernoulli_logit site cannot carry the offset x·a: shift must be 0")
		}
		return &BernoulliLogit{X: x, Y: f.Y}, nil
	case *BinomialLogit:
		if off != 0 {
			return nil, errors.New("a binomial_logit site cannot carry the offset x·a: shift must be 0")
		}
		return &BinomialLogit{X: x, Y: f.Y, Trials: f.Trials}, nil
	case *Gaussian:
		for _, v := range s {
			if v != s[0] {
				return nil, errors.New("a gaussian (vector) site has one σ: the scales must all be equal")
			}
		}
		y := make([]float64, d)
		for i, v := range f.Y {
			y[i] = (v - a[i]) / s[i]
		}
		return &Gaussian{Y: y, Sigma: f.Sigma / s[0]}, nil
	}
	return nil, fmt.Errorf("likelihood %s cannot be reparametrised", f.Family())
}

// Draw maps a point θ′ (in place) to θ = a + s⊙θ′.
func (r Reparam) Draw(z []float64) {
	for i := range z {
		z[i] = r.Shift[i] + r.Scale[i]*z[i]
	}
}

// Undraw maps a point θ (in place) to θ′ = (θ − a)/s, Draw's inverse.
func (r Reparam) Undraw(z []float64) {
	for i := range z {
		z[i] = (z[i] - r.Shift[i]) / r.Scale[i]
	}
}

// LogDet is Σ log sᵢ, the log Jacobian of θ′ ↦ θ: log q(θ) = log q′(θ′) − LogDet.
func (r Reparam) LogDet() float64 {
	var l float64
	for _, s := range r.Scale {
		l += math.Log(s)
	}
	return l
}

// Gaussian maps the moments of a Gaussian in θ′ to θ: mean a + s⊙m′,
// covariance sᵢC′ᵢⱼsⱼ, precision Λ′ᵢⱼ/(sᵢsⱼ) (either of cov and prec may
// be nil).
func (r Reparam) Gaussian(mean, cov, prec []float64) (m, c, p []float64) {
	d := len(r.Scale)
	m = slices.Clone(mean)
	r.Draw(m)
	scale := func(a []float64, inv bool) []float64 {
		if a == nil {
			return nil
		}
		out := make([]float64, d*d)
		for i := range d {
			for j := range d {
				if inv {
					out[i*d+j] = a[i*d+j] / (r.Scale[i] * r.Scale[j])
				} else {
					out[i*d+j] = a[i*d+j] * r.Scale[i] * r.Scale[j]
				}
			}
		}
		return out
	}
	return m, scale(cov, false), scale(prec, true)
}

// String describes the map for a person.
func (r Reparam) String() string {
	f := func(v []float64) string {
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprintf("%.4g", x)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("θ = %s + %s ⊙ θ′", f(r.Shift), f(r.Scale))
}

// offsetFree reports whether every site of t can carry the offset x·a of
// a shift (lin_gaussian and lin_student_t responses; a vector gaussian
// observation shifts too).
func offsetFree(t *Task) bool {
	for _, f := range t.Factors {
		switch f.(type) {
		case *LinGaussian, *LinStudentT, *Gaussian:
		default:
			return false
		}
	}
	return true
}

// rescaleMargin is the fraction of a covariate bound Rescaling aims at.
const rescaleMargin = 0.9

// Rescaling looks for a change of variables that brings t inside the
// ranges: per coordinate the prior scale σⱼ moves to the value in the
// trained range nearest to the one that gives the rescaled covariates
// x⊙s the typical simulated column rms, and that keeps them within their
// bounds (without covariates: the nearest to σⱼ); the prior
// location moves to 0 when every site can carry the offset, else stays
// μ/s. It returns the map and the rescaled task, or why none was found
// (the rescaled task's own check, or what cannot move).
func (r *Ranges) Rescaling(t *Task) (Reparam, *Task, error) {
	pr := r.Prior(t.Prior.Family())
	if pr == nil {
		return Reparam{}, nil, fmt.Errorf("prior %s has no training ranges", t.Prior.Family())
	}
	sigma := priorScales(t.Prior)
	if sigma == nil {
		return Reparam{}, nil, fmt.Errorf("prior %s is not a location–scale family", t.Prior.Family())
	}
	d := t.D
	st, hasX := covariateStats(t)
	cr := r.Covariate(d)
	vec := false
	for _, f := range t.Factors {
		if _, ok := f.(*Gaussian); ok {
			vec = true
		}
	}
	rp := Reparam{Shift: make([]float64, d), Scale: make([]float64, d)}
	for j := range d {
		lo, hi := pr.Scale.Min, pr.Scale.Max
		// The new prior scale tⱼ: σⱼ itself, or where there are covariates
		// the one that gives column j the typical simulated rms (only the
		// product xⱼσⱼ is fixed, and the network has seen it split that way).
		target := sigma[j]
		if hasX && cr != nil {
			// x′ⱼ = xⱼσⱼ/tⱼ within the bounds needs tⱼ ≥ σⱼ·max(rmsⱼ/R, |x|ⱼ/A);
			// aiming at rescaleMargin of the bounds keeps it off their edge.
			lo = math.Max(lo, sigma[j]*math.Max(st.colRMS[j]/cr.ColumnRMS, st.colAbs[j]/cr.AbsMax)/rescaleMargin)
			if st.colRMS[j] > 0 && cr.ColumnRMSTypical > 0 {
				target = sigma[j] * st.colRMS[j] / cr.ColumnRMSTypical
			}
		}
		if lo > hi {
			return Reparam{}, nil, fmt.Errorf("coordinate %d: covariates of rms %.4g and max |x| %.4g with prior scale %.4g would need a prior scale ≥ %.4g after rescaling, above the trained %.4g",
				j, st.colRMS[j], st.colAbs[j], sigma[j], lo, hi)
		}
		rp.Scale[j] = sigma[j] / math.Min(math.Max(target, lo), hi)
	}
	if vec {
		// One σ per vector observation: the largest shrink serves all.
		m := slices.Max(rp.Scale)
		for j := range rp.Scale {
			rp.Scale[j] = m
		}
	}
	if offsetFree(t) {
		copy(rp.Shift, t.Prior.Location())
	}
	identity := true
	for j := range d {
		identity = identity && rp.Scale[j] == 1 && rp.Shift[j] == 0
	}
	if identity {
		return Reparam{}, nil, errors.New("no change of prior scale or location helps")
	}
	nt, err := rp.Apply(t)
	if err != nil {
		return Reparam{}, nil, err
	}
	if why := r.Check(nt); why != "" {
		return Reparam{}, nil, fmt.Errorf("rescaled by %v, still outside: %s", rp, why)
	}
	return rp, nt, nil
}
