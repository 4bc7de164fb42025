package main

import (
	"flag"
	"fmt"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/baselines/flows"
	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/reference"
)

// budgetHelp is the budget vocabulary every method and subcommand shares;
// `afin infer --help` and `afin reference --help` print it.
const budgetHelp = `Budgets mean the same for every method and subcommand:
  --draws N      draws returned, in total over all chains
  --proposals N  SNIS proposal draws (afin-snis, frvi-snis; at least 21, the fewest whose
                 Pareto k̂ can be computed); the output is N weighted draws
  --steps N      optimisation steps per learning rate (frvi, frvi-snis, iaf, maf, nsf)
  --warmup W     NUTS warm-up iterations per chain
  --chains C     NUTS chains
A bench profile sets these per method (bench/profiles.go); seconds is the
method's own cost (see 'go doc github.com/afin-bench/afin/methods').`

// withBudgetHelp adds the budget vocabulary to a subcommand's usage.
func withBudgetHelp(fs *flag.FlagSet) {
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintln(fs.Output(), "\n"+budgetHelp)
	}
}

// inferSpec is what the flags of one method resolve to: a one-entry
// budget ladder and the method's options, as a bench unit gets them.
type inferSpec struct {
	budget     *int
	opts       methods.Options
	lr         *float64 // 0: sweep opts.VI.LRs
	lrSelect   *string
	protocol   *string
	refProfile *string
	cacheDir   *string
	checkpoint *string
	exec       *execFlags // external methods only
	fs         *flag.FlagSet
}

// bindMethodFlags registers the flags of method name on fs, with the
// defaults of methods.DefaultOptions.
func bindMethodFlags(fs *flag.FlagSet, name string) *inferSpec {
	sp := &inferSpec{opts: methods.DefaultOptions(), fs: fs}
	if isExec(name) {
		sp.bindExec(fs)
	}
	o := &sp.opts
	switch name {
	case "exact":
		sp.budget = fs.Int("draws", 2000, "draws from the exact posterior (0: moments only)")
	case "nuts":
		sp.budget = fs.Int("draws", 4000, "draws in total over all chains (a multiple of --chains)")
		fs.IntVar(&o.NUTS.Warmup, "warmup", o.NUTS.Warmup, "warm-up iterations per chain")
		fs.IntVar(&o.NUTS.Chains, "chains", o.NUTS.Chains, "chains, run concurrently")
		fs.BoolVar(&o.NUTS.Dense, "dense-mass", false, "adapt a dense mass matrix (default diagonal)")
		fs.Float64Var(&o.NUTS.InitJitter, "init-jitter", 0, "start chains at prior location + U(-j, j) per coordinate (0: at the location)")
		fs.IntVar(&o.NUTS.MaxDepth, "max-depth", o.NUTS.MaxDepth, "maximum tree depth")
	case "frvi", "iaf", "maf", "nsf":
		sp.budget = fs.Int("steps", 10000, "Adam steps per learning rate")
		fs.IntVar(&o.VI.Draws, "draws", o.VI.Draws, "draws from the fitted approximation")
		sp.bindVI(fs)
	case "frvi-snis":
		sp.budget = fs.Int("proposals", 10000, fmt.Sprintf("proposal draws from the fitted Gaussian (≥ %d, the fewest a Pareto k̂ fit needs)", posterior.MinParetoKDraws))
		fs.IntVar(&o.FRVISteps, "steps", o.FRVISteps, "Adam steps per learning rate behind the proposal")
		sp.bindVI(fs)
	case "afin":
		sp.budget = fs.Int("draws", 2000, "draws from the posterior (0: moments only; a flow checkpoint needs ≥ 2)")
		sp.checkpoint = fs.String("checkpoint", "", "checkpoint directory (default $AFIN_CHECKPOINT or the shipped checkpoints/"+afin.DefaultCheckpointName+")")
	case "afin-snis":
		sp.budget = fs.Int("proposals", 10000, fmt.Sprintf("proposal draws from the AFIN posterior (≥ %d, the fewest a Pareto k̂ fit needs)", posterior.MinParetoKDraws))
		sp.checkpoint = fs.String("checkpoint", "", "checkpoint directory (default $AFIN_CHECKPOINT or the shipped one)")
	case "afin-imh", "auto":
		sp.bindWorkflow(fs, name)
	}
	if name == "iaf" || name == "maf" || name == "nsf" {
		a := &o.Flow
		fs.IntVar(&a.Layers, "layers", a.Layers, "autoregressive transforms")
		fs.IntVar(&a.Hidden, "hidden", a.Hidden, "MADE hidden width")
		fs.IntVar(&a.Depth, "depth", a.Depth, "MADE hidden layers")
		if name == string(flows.NSF) {
			fs.IntVar(&a.Bins, "bins", a.Bins, "spline bins")
			fs.Float64Var(&a.Bound, "bound", a.Bound, "spline window [-bound, bound]")
		}
	}
	return sp
}

// bindVI registers the learning-rate protocol flags of the VI methods.
func (sp *inferSpec) bindVI(fs *flag.FlagSet) {
	sp.protocol = fs.String("protocol", string(vi.ProtocolPractitioner), "VI protocol: practitioner (Laplace start, whitened coordinates; rates are fractions of a posterior sd per step) or paper (the paper's prior start in z's units and fixed rate ladder)")
	sp.lr = fs.Float64("lr", 0, "single learning rate (0: sweep the protocol's rates: practitioner 5 rates 1e-3..1e-1, paper 7 rates 1e-6..1e-2)")
	sp.lrSelect = fs.String("lr-select", "elbo", "pick the swept rate per budget by ELBO (elbo) or by SW2 to a reference posterior (oracle, the bench's rule)")
	fs.IntVar(&sp.opts.VI.MCSamples, "mc", sp.opts.VI.MCSamples, "Monte Carlo draws per gradient step (antithetic pairs)")
	sp.refProfile = fs.String("ref-profile", reference.ProfileQuick, "reference profile for --lr-select oracle (smoke|quick|paper)")
	sp.cacheDir = fs.String("cache-dir", "", "reference cache directory for --lr-select oracle")
}
