package main

import (
	"flag"
)

// bindWorkflow registers the flags of afin-imh and auto, the two methods
// built on the AFIN proposal with an exact correction (issue 18).
func (sp *inferSpec) bindWorkflow(fs *flag.FlagSet, name string) {
	o := &sp.opts
	sp.checkpoint = fs.String("checkpoint", "", "checkpoint directory (default $AFIN_CHECKPOINT or the shipped one)")
	if name == "afin-imh" {
		sp.budget = fs.Int("draws", 4000, "kept draws over all chains (a multiple of --chains)")
		fs.IntVar(&o.IMH.Chains, "chains", o.IMH.Chains, "independence Metropolis-Hastings chains, each on its own AFIN proposals")
		fs.Float64Var(&o.IMH.BurnIn, "burn-in", o.IMH.BurnIn, "share of each chain's kept length run first and discarded")
		return
	}
	sp.budget = fs.Int("draws", 4000, "SNIS proposals, or NUTS draws over all chains when NUTS answers (a multiple of --chains)")
	a := &o.Auto
	fs.Float64Var(&a.MaxParetoK, "max-k", a.MaxParetoK, "largest PSIS k-hat at which SNIS answers (at most 0.7: auto never answers with a flag raised)")
	fs.IntVar(&a.Warmup, "warmup", a.Warmup, "warm-up of the AFIN-initialised NUTS fallback (step size only; AFIN's covariance is the metric)")
	fs.IntVar(&a.Chains, "chains", a.Chains, "NUTS fallback chains")
	fs.IntVar(&a.MaxDepth, "max-depth", a.MaxDepth, "NUTS fallback maximum tree depth")
	fs.Float64Var(&a.MaxRhat, "max-rhat", a.MaxRhat, "largest R-hat at which the NUTS fallback answers")
	fs.Float64Var(&a.MinESSBulk, "min-ess", a.MinESSBulk, "least bulk ESS at which the NUTS fallback answers")
	fs.IntVar(&a.Retries, "retries", a.Retries, "reruns of a NUTS fallback that failed its checks, each with twice the draws per chain")
}
