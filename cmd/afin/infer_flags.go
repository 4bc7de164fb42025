package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/reference"
)

// budgetHelp is the budget vocabulary every method and subcommand shares;
// `afin infer --help` and `afin reference --help` print it. The methods
// of each budget kind come from the catalog.
func budgetHelp() string {
	return fmt.Sprintf(`Budgets mean the same for every method and subcommand:
  --draws N      draws returned, in total over all chains
  --proposals N  SNIS proposal draws (%s; at least %d, the fewest whose
                 Pareto k̂ can be computed); the output is N weighted draws
  --steps N      optimisation steps per learning rate (the VI methods: %s)
  --warmup W     NUTS warm-up iterations per chain
  --chains C     NUTS chains
A bench profile sets these per method (bench/profiles.go); seconds is the
method's own cost (see 'go doc github.com/afin-bench/afin/methods').`,
		strings.Join(catalog.OfKind(methods.KindProposals), ", "), posterior.MinParetoKDraws,
		strings.Join(catalog.InFamily(catalog.VI), ", "))
}

// withBudgetHelp adds the budget vocabulary to a subcommand's usage.
func withBudgetHelp(fs *flag.FlagSet) {
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintln(fs.Output(), "\n"+budgetHelp())
	}
}

// inferSpec is what the flags of one method resolve to: a one-entry
// budget ladder and the method's options, as a bench unit gets them.
type inferSpec struct {
	budget     *int
	kept       *int // draws that come back when not the budget (VI methods)
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
// defaults of methods.DefaultOptions: the method's own (its descriptor
// binds them), the VI protocol's when the method says they apply, and an
// external method's budgets.
func bindMethodFlags(fs *flag.FlagSet, name string) *inferSpec {
	sp := &inferSpec{opts: methods.DefaultOptions(), fs: fs}
	if isExec(name) {
		sp.bindExec(fs)
	}
	d, ok := methods.Lookup(name)
	if !ok || d.Flags == nil {
		return sp
	}
	f := methods.InferFlags{Options: &sp.opts}
	d.Flags(fs, &f)
	sp.budget, sp.kept, sp.checkpoint = f.Budget, f.Kept, f.Checkpoint
	if f.VI {
		sp.bindVI(fs)
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
