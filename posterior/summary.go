package posterior

import (
	"github.com/afin-bench/afin/internal/moments"
	"math"
	"slices"
	"sort"
)

// CoordSummary is one row of `afin summary`: the measures of R posterior's
// summarise_draws(x, "mean", "sd", ~quantile2(.x, c(.05, .95)),
// "mcse_mean", "ess_bulk", "ess_tail", "rhat"). NaN stands for R's NA.
type CoordSummary struct {
	Name     string
	Mean     float64
	SD       float64
	Q5, Q95  float64
	MCSEMean float64
	ESSBulk  float64
	ESSTail  float64
	Rhat     float64
}

// Summarize summarises every coordinate of c. Unweighted draws get
// posterior's definitions: sd with the n−1 divisor over all draws, type-7
// quantiles, MCSE of the mean sd/√ESS_mean with ESS_mean the split-chain
// ESS of the raw draws (posterior's ess_mean), and the rank-normalised
// bulk/tail ESS and R̂ of mcmc.go. Chains of unequal length are cut to
// the shortest for every measure, so all of them describe the same draws.
//
// Weighted draws (SNIS) are summarised as the weighted distribution they
// stand for — posterior's summarise_draws would silently ignore the
// weights: weighted mean; sd √Σw(x−μ)² (no Bessel correction, as Cov);
// quantiles the inverse of the weighted ECDF; MCSE of the self-normalised
// mean √Σw²(x−μ)² (the delta-method standard error); bulk ESS Kish's
// 1/Σw²; tail ESS and R̂ NaN, since weighted draws are not chains.
func Summarize(c *ChainDraws, names []string) []CoordSummary {
	out := make([]CoordSummary, c.D)
	for i := range out {
		s := &out[i]
		s.Name = names[i]
		if c.W != nil {
			weightedSummary(s, c.Draws, i)
			continue
		}
		chains := c.Chains(i)
		all := flatten(truncate(chains))
		s.Mean, s.SD = moments.SampleMeanSD(all)
		sorted := slices.Clone(all)
		slices.Sort(sorted)
		s.Q5, s.Q95 = quantile7(sorted, 0.05), quantile7(sorted, 0.95)
		s.MCSEMean = s.SD / math.Sqrt(ESS(chains))
		s.ESSBulk, s.ESSTail, s.Rhat = ESSBulk(chains), ESSTail(chains), SplitRhat(chains)
	}
	return out
}

func weightedSummary(s *CoordSummary, d *Draws, i int) {
	type wx struct{ x, w float64 }
	var pts []wx
	var sumW2 float64
	for k := 0; k < d.Len(); k++ {
		if d.W[k] > 0 {
			pts = append(pts, wx{d.Z[k*d.D+i], d.W[k]})
			sumW2 += d.W[k] * d.W[k]
		}
	}
	var mu, ss, ss2 float64
	for _, p := range pts {
		mu += p.w * p.x
	}
	for _, p := range pts {
		ss += p.w * (p.x - mu) * (p.x - mu)
		ss2 += p.w * p.w * (p.x - mu) * (p.x - mu)
	}
	sort.Slice(pts, func(a, b int) bool { return pts[a].x < pts[b].x })
	quant := func(p float64) float64 {
		var cum float64
		for _, q := range pts {
			cum += q.w
			// A little slack: the weights sum to 1 only up to rounding.
			if cum >= p-1e-12 {
				return q.x
			}
		}
		return pts[len(pts)-1].x
	}
	s.Mean, s.SD = mu, math.Sqrt(ss)
	s.Q5, s.Q95 = quant(0.05), quant(0.95)
	s.MCSEMean = math.Sqrt(ss2)
	s.ESSBulk = 1 / sumW2
	s.ESSTail, s.Rhat = math.NaN(), math.NaN()
}
