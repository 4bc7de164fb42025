package methods

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
)

// AFINSNIS is AFIN+SNIS: the AFIN posterior reweighted towards the task's
// posterior by self-normalised importance sampling.
const AFINSNIS = "afin-snis"

func init() {
	registerNetwork(catalog.Entry{
		Name: AFINSNIS, Summary: "AFIN's posterior as the proposal of self-normalised importance sampling",
		Kind: KindProposals, Family: catalog.Amortised, Weighted: true, Proposal: AFIN, QualifiedBy: AFINSNIS,
		Rank: 6, Label: "AFIN+SNIS", Legend: 2, Colour: "#CC79A7", Marker: "diamond",
	}, func(n onNetwork) Method { return afinSNISMethod{n} }, afinSNISMethod{}.Slots,
		func(fs *flag.FlagSet, f *InferFlags) {
			f.Budget = fs.Int("proposals", 10000, fmt.Sprintf("proposal draws from the AFIN posterior (≥ %d, the fewest a Pareto k̂ fit needs)", posterior.MinParetoKDraws))
		})
}

// afinSNISMethod uses the AFIN posterior as an SNIS proposal along a
// ladder of proposal counts, and emits the proposal itself (the star):
// the largest budget's proposals unweighted, so the star and that point
// differ by the weights alone. Every point pays its own forward pass; the
// star shares the largest point's, because drawing 10⁷ proposals a
// second time would double the unit's cost for the flow decoder (its
// sampling is about 33 µs a draw on one core at d = 4).
type afinSNISMethod struct{ onNetwork }

func (afinSNISMethod) Name() string              { return AFINSNIS }
func (afinSNISMethod) Kind() string              { return KindProposals }
func (afinSNISMethod) Slots(ladder []int) []Slot { return snisSlots(ladder) }

func (m afinSNISMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	if err := checkLadder(KindProposals, job.Ladder, posterior.MinParetoKDraws); err != nil {
		return err
	}
	settings := Settings{CheckpointStep: m.net.model.Step}
	// The packed evaluator gives log p̃ at every proposal several times
	// faster than the task's factor walk, equal to rounding.
	target := job.Task.Packed()
	for i, n := range job.Ladder {
		p, err := m.net.run(ctx, job.Task, n, streams.New(job.Seed, streams.AFINLadder.At(i)))
		if err != nil {
			return err
		}
		start := time.Now()
		draws, info, err := posterior.SNISDraws(ctx, target, p.draws, p.logQ)
		if err != nil {
			return fmt.Errorf("%s with %d proposals: %w", AFINSNIS, n, err)
		}
		secs := time.Since(start).Seconds()
		if i == len(job.Ladder)-1 && !job.SkipProposal {
			if err := m.emitStar(ctx, job, p, draws, settings, emit); err != nil {
				return err
			}
		}
		err = emit(Point{
			Slot: Slot{Kind: KindProposals, Budget: n}, Draws: draws, Seconds: p.fwd + p.sampling + secs,
			Diagnostics: Diagnostics{AFINDiagnostics: m.net.diagnostics(p), SNISDiagnostics: newSNISDiagnostics(n, info, secs),
				Flags: m.net.flags(job.Task)},
			Settings: settings,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// emitStar emits the proposal p of the largest budget, unweighted, with
// its fit measured against the task; twin is the SNIS point made of it.
func (m afinSNISMethod) emitStar(ctx context.Context, job *Job, p *proposal, twin *posterior.Draws, settings Settings, emit func(Point) error) error {
	fit, err := p.measure(ctx, job.Task, p.fitRNG(job.Task))
	if err != nil {
		return fmt.Errorf("%s proposal: measuring the fit: %w", AFINSNIS, err)
	}
	return emit(Point{Slot: Slot{Stage: StageProposal, Kind: KindProposals, Budget: p.draws.Len()}, Draws: p.draws, Twin: twin, Seconds: p.fwd + p.sampling,
		Diagnostics: Diagnostics{AFINDiagnostics: m.net.diagnostics(p), FitDiagnostics: fit, Flags: m.net.flags(job.Task)}, Settings: settings})
}
