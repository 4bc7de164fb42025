package methods

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// IMHOptions configure afin-imh, independence Metropolis–Hastings with
// the AFIN posterior as its proposal.
type IMHOptions struct {
	// Chains run on independent proposal streams; the draws budget is
	// split evenly over them. Split-R̂ compares their halves.
	Chains int
	// BurnIn is the share of each chain's kept length run first and
	// discarded (a chain starts at a proposal draw, not at the target).
	BurnIn float64
}

// DefaultIMHOptions: 4 chains, 10% burn-in.
func DefaultIMHOptions() IMHOptions { return IMHOptions{Chains: 4, BurnIn: 0.1} }

func (o IMHOptions) check(ladder []int) error {
	switch {
	case o.Chains < 1:
		return badInput("--chains must be ≥ 1, got %d", o.Chains)
	case !(o.BurnIn >= 0 && o.BurnIn <= 10):
		return badInput("--burn-in must be in [0, 10] (a share of the kept draws), got %g", o.BurnIn)
	}
	return checkChainLadder(ladder, o.Chains)
}

// IMHDiagnostics describe an independence Metropolis–Hastings run. Names
// carry an imh_ prefix so they never collide with NUTS's or SNIS's in the
// flattened diagnostics object.
type IMHDiagnostics struct {
	AcceptRate records.Num `json:"imh_accept_rate"`
	ESSBulk    records.Num `json:"imh_ess_bulk"` // min over coordinates
	ESSTail    records.Num `json:"imh_ess_tail"` // min over coordinates
	Rhat       records.Num `json:"imh_rhat"`     // split-R̂, max over coordinates
	Chains     int         `json:"imh_chains"`
	Proposals  int         `json:"imh_proposals"`
	// ParetoK is PSIS k̂ of the proposal's importance ratios p̃/q: above
	// 0.7 the proposal's tails are too light for IMH to mix reliably.
	ParetoK records.Num `json:"imh_pareto_k"`
	// MCMCSeconds is the target evaluations and the accept/reject loop.
	MCMCSeconds records.Num `json:"imh_seconds"`
}

// imhResult is the output of the sampler core.
type imhResult struct {
	chains  [][]float64 // kept draws per chain, row-major
	accept  float64     // acceptance rate over all post-burn-in steps
	paretoK float64
}

// independenceMH runs one independence Metropolis–Hastings chain per
// block of proposals (Tierney 1994): from state x, proposal y ~ q is
// accepted with probability min(1, w(y)/w(x)), w = p̃/q, so the chain's
// stationary law is the target whatever q is, provided q covers it. Chain c
// uses the proposals c·per … (c+1)·per−1 of props: the first is the start
// (a draw from q), the next burn are discarded, the rest are kept. Draws
// where p̃ or q is not finite are never accepted.
func independenceMH(ctx context.Context, target posterior.Density, props *posterior.Draws, logQ []float64,
	chains, burn int, rng *rand.Rand) (*imhResult, error) {
	d, total := props.D, props.Len()
	per := total / chains
	keep := per - 1 - burn
	if keep < 1 {
		return nil, fmt.Errorf("imh: %d proposals for %d chains with burn-in %d", total, chains, burn)
	}
	lw := make([]float64, total)
	for s := range lw {
		if s%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("imh: %w", err)
			}
		}
		lw[s] = target.LogDensity(props.Row(s)) - logQ[s]
		if math.IsNaN(lw[s]) || math.IsInf(lw[s], 1) {
			lw[s] = math.Inf(-1)
		}
	}
	res := &imhResult{chains: make([][]float64, chains), paretoK: posterior.ParetoK(lw)}
	accepted := 0
	for c := range chains {
		base := c * per
		x := base
		out := make([]float64, 0, keep*d)
		for t := 1; t < per; t++ {
			y := base + t
			// A start outside the support is left at the first chance.
			if math.IsInf(lw[x], -1) || math.Log(rng.Float64()) < lw[y]-lw[x] {
				if !math.IsInf(lw[y], -1) {
					x = y
					if t > burn {
						accepted++
					}
				}
			}
			if t > burn {
				out = append(out, props.Row(x)...)
			}
		}
		if math.IsInf(lw[x], -1) {
			return nil, fmt.Errorf("imh: chain %d never reached the target's support", c+1)
		}
		res.chains[c] = out
	}
	res.accept = float64(accepted) / float64(chains*keep)
	return res, nil
}

// AFINIMH is independence Metropolis–Hastings on AFIN's proposals.
const AFINIMH = "afin-imh"

func init() {
	registerNetwork(catalog.Entry{
		Name: AFINIMH, Summary: "independence Metropolis-Hastings with AFIN's posterior as the proposal",
		Kind: KindDraws, Family: catalog.MCMC,
		Rank: 7,
	}, func(n onNetwork) Method { return afinIMHMethod{n} }, afinIMHMethod{}.Slots,
		func(fs *flag.FlagSet, f *InferFlags) {
			o := f.Options
			f.Budget = fs.Int("draws", 4000, "kept draws over all chains (a multiple of --chains)")
			fs.IntVar(&o.IMH.Chains, "chains", o.IMH.Chains, "independence Metropolis-Hastings chains, each on its own AFIN proposals")
			fs.Float64Var(&o.IMH.BurnIn, "burn-in", o.IMH.BurnIn, "share of each chain's kept length run first and discarded")
		})
}

// afinIMHMethod is independence Metropolis–Hastings with the AFIN
// posterior (either decoder) as the proposal: asymptotically exact, and
// as fast as SNIS per draw when AFIN is close to the target.
type afinIMHMethod struct{ onNetwork }

func (afinIMHMethod) Name() string              { return AFINIMH }
func (afinIMHMethod) Kind() string              { return KindDraws }
func (afinIMHMethod) Slots(ladder []int) []Slot { return ladderSlots(KindDraws, ladder) }

// Run draws, for each ladder budget n (kept draws over all chains), one
// AFIN pass of chains·(1 + burn + n/chains) proposals and runs the chains.
// Seconds: forward, sampling, target evaluations and the chains.
func (m afinIMHMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	o := job.Options.IMH
	if err := o.check(job.Ladder); err != nil {
		return err
	}
	return emitLadder(job.Ladder, emit, func(i, n int) (*Point, error) {
		return m.point(ctx, job.Task, o, n, job.Seed, i)
	})
}

func (m afinIMHMethod) point(ctx context.Context, task *factor.Task, o IMHOptions, n int, seed uint64, i int) (*Point, error) {
	keep := n / o.Chains
	burn := int(math.Ceil(o.BurnIn * float64(keep)))
	per := 1 + burn + keep
	p, err := m.net.run(ctx, task, o.Chains*per, streams.New(seed, streams.AFINLadder.At(i)))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := independenceMH(ctx, task, p.draws, p.logQ, o.Chains, burn, streams.New(seed, streams.IMHAccept.At(i)))
	if err != nil {
		return nil, fmt.Errorf("%s with %d draws: %w", AFINIMH, n, err)
	}
	secs := time.Since(start).Seconds()
	conv := nuts.Diagnose(res.chains, task.D)
	z := make([]float64, 0, n*task.D)
	for _, c := range res.chains {
		z = append(z, c...)
	}
	return &Point{
		Slot: Slot{Kind: KindDraws, Budget: n}, Draws: &posterior.Draws{D: task.D, Z: z},
		Seconds: p.fwd + p.sampling + secs,
		Diagnostics: Diagnostics{AFINDiagnostics: m.net.diagnostics(p), IMHDiagnostics: &IMHDiagnostics{
			AcceptRate: records.Num(res.accept), ESSBulk: records.Num(conv.MinESSBulk), ESSTail: records.Num(conv.MinESSTail),
			Rhat: records.Num(conv.MaxRhat), Chains: o.Chains, Proposals: o.Chains * per,
			ParetoK: records.Num(res.paretoK), MCMCSeconds: records.Num(secs),
		}},
		Settings: Settings{CheckpointStep: m.net.model.Step, Chains: o.Chains, Draws: n},
	}, nil
}
