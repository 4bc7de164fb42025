package methods

import (
	"context"
	"flag"
	"fmt"
	"math"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/internal/cputime"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/records"
)

// nutsMethod is short-run NUTS: each ladder point an independent run of
// Options.NUTS.Chains chains returning that many draws in total (the
// paper's "independent short-run NUTS chains with increasing post-warmup
// sample budgets").
// NUTS is short-run NUTS, the paper's MCMC baseline.
const NUTS = "nuts"

func init() {
	mustRegister(Descriptor{
		Entry: catalog.Entry{
			Name: NUTS, Summary: "the No-U-Turn sampler, chains from the prior location",
			Kind: KindDraws, Family: catalog.MCMC, Reference: true, Baseline: true,
			Rank: 2, Label: "NUTS", Legend: 3, Colour: "#0072B2", Marker: "triangle",
		},
		New:   func(string, *Env) (Method, error) { return nutsMethod{}, nil },
		Slots: nutsMethod{}.Slots,
		Flags: func(fs *flag.FlagSet, f *InferFlags) {
			o := f.Options
			f.Budget = fs.Int("draws", 4000, "draws in total over all chains (a multiple of --chains)")
			fs.IntVar(&o.NUTS.Warmup, "warmup", o.NUTS.Warmup, "warm-up iterations per chain")
			fs.IntVar(&o.NUTS.Chains, "chains", o.NUTS.Chains, "chains, run concurrently")
			fs.BoolVar(&o.NUTS.Dense, "dense-mass", false, "adapt a dense mass matrix (default diagonal)")
			fs.Float64Var(&o.NUTS.InitJitter, "init-jitter", 0, "start chains at prior location + U(-j, j) per coordinate (0: at the location)")
			fs.IntVar(&o.NUTS.MaxDepth, "max-depth", o.NUTS.MaxDepth, "maximum tree depth")
		},
	})
}

type nutsMethod struct{}

func (nutsMethod) Name() string              { return NUTS }
func (nutsMethod) Kind() string              { return KindDraws }
func (nutsMethod) Slots(ladder []int) []Slot { return ladderSlots(KindDraws, ladder) }

func (o NUTSOptions) check(ladder []int) error {
	switch {
	case o.Warmup < 0:
		return badInput("--warmup must be ≥ 0, got %d", o.Warmup)
	case o.Chains < 1:
		return badInput("--chains must be ≥ 1, got %d", o.Chains)
	case o.MaxDepth < 1 || o.MaxDepth > 30:
		return badInput("--max-depth must be in [1, 30], got %d", o.MaxDepth)
	case !(o.InitJitter >= 0) || math.IsInf(o.InitJitter, 0):
		return badInput("--init-jitter must be finite and ≥ 0, got %g", o.InitJitter)
	}
	return checkChainLadder(ladder, o.Chains)
}

// checkChainLadder checks a draws ladder shared out over chains: R̂ and
// ESS need the same number of draws, and a few, in every chain.
func checkChainLadder(ladder []int, chains int) error {
	if err := checkLadder(KindDraws, ladder, 1); err != nil {
		return err
	}
	for _, n := range ladder {
		if n%chains != 0 || n/chains < 4 {
			return badInput("--draws must be a multiple of --chains (%d) with at least 4 per chain (for R̂ and ESS), got %d", chains, n)
		}
	}
	return nil
}

func (nutsMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	o := job.Options.NUTS
	if err := o.check(job.Ladder); err != nil {
		return err
	}
	d := job.Task.D
	for i, n := range job.Ladder {
		perChain := n / o.Chains
		// Draws leave through OnDraw (Discard keeps the random streams) so
		// that R̂ and ESS are computed after the clock stops.
		kept := make([][]float64, o.Chains)
		for c := range kept {
			kept[c] = make([]float64, 0, perChain*d)
		}
		cpu0 := processCPUSeconds()
		res, err := nuts.Sample(ctx, job.Task, d, nuts.Config{
			Warmup: o.Warmup, Draws: perChain, Chains: o.Chains, Seed: streams.NUTSLadderSeed(job.Seed, i),
			Dense: o.Dense, MaxDepth: o.MaxDepth, Init: job.Task.Prior.Location(), Jitter: o.InitJitter,
			Progress: job.Progress, Discard: true,
			OnDraw: func(c int, z []float64) { kept[c] = append(kept[c], z...) },
		})
		cpu := processCPUSeconds() - cpu0
		if err != nil {
			return fmt.Errorf("nuts with %d draws: %w", n, err)
		}
		res.Chains = kept
		conv := nuts.Diagnose(kept, d)
		err = emit(Point{
			Slot:    Slot{Kind: KindDraws, Budget: n},
			Draws:   res.Draws(),
			Seconds: res.Seconds,
			Diagnostics: Diagnostics{NUTSDiagnostics: &NUTSDiagnostics{
				Divergences: res.Divergences, AcceptRate: records.Num(res.AcceptRate), StepSize: records.Num(res.StepSize),
				ESSBulk: records.Num(conv.MinESSBulk), ESSTail: records.Num(conv.MinESSTail), Rhat: records.Num(conv.MaxRhat),
				GradEvals: res.GradEvals, TreeDepthMean: records.Num(res.MeanDepth), TreeDepthHist: res.DepthHist,
				Chains: o.Chains, CPUSeconds: records.Num(cpu),
			}},
			Settings: Settings{Warmup: o.Warmup, Chains: o.Chains},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// processCPUSeconds is the CPU time of this process so far, NaN when the
// system does not say (reported as null).
func processCPUSeconds() float64 {
	c, err := cputime.Process()
	if err != nil {
		return math.NaN()
	}
	return c
}
