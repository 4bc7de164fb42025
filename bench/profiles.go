package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/afin-bench/afin/baselines/flows"
	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/reference"
)

// This file holds the budgets the suites share: every ladder of every
// profile is written out below, so a reader can see what `smoke`, `quick`
// and `paper` mean without chasing constants through the adapters. A
// suite with budgets of its own keeps them in its file, by profile name
// (extrapolation, calibration, openml).

// Profile fixes the protocol of a benchmark run: seeds, reference
// settings and each method's budget ladder.
type Profile struct {
	Name  string
	Seeds []uint64

	// Reference posterior (long NUTS run; exact where conjugate): a
	// preset of package reference, which owns that vocabulary, with the
	// profile's overrides.
	Reference reference.Settings

	// Short-run NUTS: independent runs of NUTSChains chains with
	// increasing post-warm-up draw counts in total (one point per entry of
	// NUTSDraws).
	NUTSWarmup int
	NUTSChains int
	NUTSDraws  []int

	// FRVI (and the flows): one optimisation trajectory per learning
	// rate, scored at each step count of FRVISteps; the best learning rate
	// per budget is kept (oracle selection by SW2, the paper's best result
	// per budget; methods package doc). FRVIDraws draws from q are scored
	// per point. VIProtocol is the VI protocol ("": the practitioner's;
	// `afin bench --protocol paper` runs the paper's); a rate means a
	// fraction of a posterior sd per step under the practitioner protocol
	// and a step in z's units under the paper's, so each has its own
	// sweep: FRVILRs and PaperFRVILRs.
	FRVISteps    []int
	VIProtocol   vi.Protocol
	FRVILRs      []float64
	PaperFRVILRs []float64
	FRVIDraws    int

	// AFIN single shot: draws from the network's posterior.
	AFINDraws int

	// SNIS proposal budgets (AFIN+SNIS and FRVI+SNIS curves).
	SNISProposals []int
	// DecoderSNISProposals is the decoders suite's AFIN+SNIS ladder. The
	// paper's decoder comparison (Table 2) reports each decoder's single
	// shot only; the suite adds each decoder's proposal under SNIS, for
	// its Pareto k̂ and curve, but not at the paper's 10⁷ proposals: the
	// flow decoder draws at 35–40 µs a draw on one core (d = 4), and its
	// AFIN+SNIS up to 10⁷ was estimated at 40 of the paper profile's 66
	// CPU-hours.
	DecoderSNISProposals []int
	// FRVI optimisation steps behind the FRVI+SNIS proposals (snis suite;
	// the paper's 1k/5k/10k), learning rate chosen among FRVILRs.
	FRVISNISSteps []int
}

var profiles = map[string]*Profile{
	// smoke: seconds per suite; used by tests and the CI accuracy gate.
	"smoke": {
		Name:  "smoke",
		Seeds: []uint64{0},

		Reference: reference.Settings{Profile: reference.ProfileSmoke},

		NUTSWarmup: 100, NUTSChains: 1,
		NUTSDraws: []int{100, 400},

		FRVISteps:    []int{100, 400},
		FRVILRs:      []float64{3e-2},
		PaperFRVILRs: []float64{1e-2},
		FRVIDraws:    500,

		AFINDraws: 500,

		SNISProposals:        []int{100, 1000},
		DecoderSNISProposals: []int{100, 1000},
		FRVISNISSteps:        []int{100, 400},
	},
	// quick: the default; one seed and short budgets, minutes on a
	// 2-core laptop.
	"quick": {
		Name:  "quick",
		Seeds: []uint64{0},

		// SW2's cost grows with the reference subsample: 10⁴ is plenty
		// for one seed.
		Reference: reference.Settings{Profile: reference.ProfileQuick, Subsample: 10000},

		NUTSWarmup: 300, NUTSChains: 1,
		NUTSDraws: []int{100, 300, 1000, 3000},

		FRVISteps:    []int{100, 300, 1000, 3000},
		FRVILRs:      []float64{1e-2, 3e-2, 1e-1},
		PaperFRVILRs: []float64{1e-3, 3e-3, 1e-2},
		FRVIDraws:    2000,

		AFINDraws: 2000,

		SNISProposals:        []int{100, 300, 1000, 3000, 10000, 30000},
		DecoderSNISProposals: []int{100, 300, 1000, 3000, 10000, 30000},
		FRVISNISSteps:        []int{1000, 5000, 10000},
	},
	// paper: the paper's protocol (3 seeds, 10^6-draw references after
	// 10^4 warm-up, SNIS up to 10^7 proposals, 7 learning rates from
	// 10^-6 to 10^-2, FRVI up to 10^4 steps).
	"paper": {
		Name:  "paper",
		Seeds: []uint64{0, 1, 2},

		Reference: reference.Settings{Profile: reference.ProfilePaper},

		NUTSWarmup: 1000, NUTSChains: 1,
		NUTSDraws: []int{100, 1000, 10_000, 50_000},

		FRVISteps:    []int{100, 300, 1000, 3000, 10_000},
		FRVILRs:      vi.PractitionerLRs(),
		PaperFRVILRs: vi.PaperLRs(),
		FRVIDraws:    50_000,

		AFINDraws: 50_000,

		SNISProposals:        []int{100, 1000, 10_000, 100_000, 1_000_000, 10_000_000},
		DecoderSNISProposals: []int{100, 1000, 10_000, 100_000},
		FRVISNISSteps:        []int{1000, 5000, 10_000},
	},
}

// ProfileNames lists the profiles in order of cost.
func ProfileNames() []string { return []string{"smoke", "quick", "paper"} }

// GetProfile returns a copy of the named profile.
func GetProfile(name string) (*Profile, error) {
	p, ok := profiles[name]
	if !ok {
		return nil, fmt.Errorf("unknown profile %q (valid: %s)", name, strings.Join(ProfileNames(), ", "))
	}
	c := *p
	c.Seeds = slices.Clone(p.Seeds)
	c.FRVILRs, c.PaperFRVILRs = slices.Clone(p.FRVILRs), slices.Clone(p.PaperFRVILRs)
	return &c, nil
}

// Plan is one method's part of a suite under a profile: the method, an
// optional variant (e.g. the FRVI steps behind an FRVI+SNIS proposal),
// the budget ladder it is scored at and its typed options.
type Plan struct {
	Method  string
	Variant string
	Ladder  []int
	Options methods.Options
	// OptIn plans run only when --methods names them (the flow VI
	// baselines on the synthetic suite, which the paper does not show).
	OptIn bool
	// Tasks > 0 runs the plan on the run's first Tasks seeds only (the
	// calibration suite's NUTS control on fewer replicates); 0: on all.
	Tasks int
}

// options are the method options a profile implies: the paper's NUTS and
// VI settings with the profile's warm-up, chains, rates and draws, and
// oracle learning-rate selection (the paper's best result per budget).
func (p *Profile) options(vidraws int) methods.Options {
	o := methods.DefaultOptions()
	o.NUTS.Warmup, o.NUTS.Chains = p.NUTSWarmup, p.NUTSChains
	lrs := p.FRVILRs
	if p.VIProtocol == vi.ProtocolPaper {
		lrs = p.PaperFRVILRs
	}
	o.VI = methods.VIOptions{Protocol: p.VIProtocol, LRs: lrs, Selection: vi.SelectOracle, MCSamples: 4, Draws: vidraws}
	return o
}

// Plans returns the method plans of a suite under p, in a fixed order.
// Methods a suite does not use are absent. Under the paper's VI protocol
// the VI plans' variants say so ("paper", "paper-1k"), so their records
// never pass for the practitioner protocol's in a shared results
// directory or a report.
func (p *Profile) Plans(suite string) []Plan {
	s, err := lookupSuite(suite)
	if err != nil {
		return nil
	}
	return p.plansOf(s)
}

// plansOf is Plans of a suite already looked up.
func (p *Profile) plansOf(s Suite) []Plan {
	plans := s.Plans(p)
	if p.VIProtocol != vi.ProtocolPaper {
		return plans
	}
	for i, pl := range plans {
		if e, _ := catalog.Lookup(pl.Method); e.Family == catalog.VI {
			plans[i].Variant = strings.TrimSuffix("paper-"+pl.Variant, "-")
		}
	}
	return plans
}

// mainPlans are the plans most suites run: AFIN single shot, AFIN+SNIS,
// NUTS and FRVI along the profile's ladders.
func (p *Profile) mainPlans() (afin, afinSNIS, nuts, frvi Plan) {
	opts := p.options(p.FRVIDraws)
	nuts = Plan{Method: methods.NUTS, Ladder: p.NUTSDraws, Options: opts}
	frvi = Plan{Method: methods.FRVI, Ladder: p.FRVISteps, Options: opts}
	afin = Plan{Method: methods.AFIN, Ladder: []int{p.AFINDraws}, Options: opts}
	afinSNIS = Plan{Method: methods.AFINSNIS, Ladder: p.SNISProposals, Options: opts}
	return afin, afinSNIS, nuts, frvi
}

// flowPlans are the flow VI baselines along FRVI's step ladder; optIn
// makes them run only when --methods names them.
func (p *Profile) flowPlans(optIn bool) []Plan {
	opts := p.options(p.FRVIDraws)
	var out []Plan
	for _, kind := range []flows.Kind{flows.IAF, flows.MAF, flows.NSF} {
		out = append(out, Plan{Method: string(kind), Ladder: p.FRVISteps, Options: opts, OptIn: optIn})
	}
	return out
}

// workflowPlans are the opt-in afin-imh and auto plans of the synthetic
// and uci suites (issue 18's workflow table): both at the largest NUTS
// budget, so auto's NUTS stage and NUTS alone return as many draws.
func (p *Profile) workflowPlans() []Plan {
	o := p.options(p.FRVIDraws)
	n := slices.Max(p.NUTSDraws)
	n -= n % max(o.Auto.Chains, o.IMH.Chains, 1)
	return []Plan{
		{Method: methods.AFINIMH, Ladder: []int{n}, Options: o, OptIn: true},
		{Method: methods.Auto, Ladder: []int{n}, Options: o, OptIn: true},
	}
}

// kindLadder is the profile's ladder of the built-in methods that count
// a budget kind: FRVI's steps, the SNIS proposals or NUTS's draws.
func (p *Profile) kindLadder(kind string) []int {
	switch kind {
	case methods.KindSteps:
		return p.FRVISteps
	case methods.KindProposals:
		return p.SNISProposals
	}
	return p.NUTSDraws
}

// stepsLabel writes a step count the way the paper labels FRVI+SNIS
// proposals: 1000 → "1k".
func stepsLabel(steps int) string {
	if steps >= 1000 && steps%1000 == 0 {
		return fmt.Sprintf("%dk", steps/1000)
	}
	return fmt.Sprintf("%d", steps)
}
