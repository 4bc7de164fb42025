package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/afin-bench/afin/baselines/flows"
	"github.com/afin-bench/afin/baselines/vi"
)

// flowMethod is normalising-flow VI (IAF, MAF or NSF) along the step
// ladder, with the same learning-rate protocol as FRVI: the profile's
// rates, the one closest to the reference (SW2) kept per budget. One run
// per rate snapshots every budget; a point's seconds are that rate's
// optimisation up to the budget (measured by the flows package) plus
// drawing from the flow.
type flowMethod struct{ kind flows.Kind }

func newFlowMethod(kind flows.Kind) methodFactory {
	return func(MethodEnv) (Method, error) { return flowMethod{kind: kind}, nil }
}

func (m flowMethod) Name() string { return string(m.kind) }

func (flowMethod) Slots(p Plan) []Slot { return ladderSlots("steps", p.Ladder) }

func (m flowMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	lrs := optFloats(job.Plan.Options, "lrs", []float64{1e-2})
	nDraws := optInt(job.Plan.Options, "draws", 2000)
	score := func(budget int, q vi.Approx) (float64, error) {
		d, _ := vi.Draw(q, rand.New(rand.NewPCG(job.Seed, 0x5c0)), min(nDraws, 2000))
		return job.Score(d), nil
	}
	res, err := flows.Fit(ctx, job.Task, m.kind, flows.Options{
		Budgets: job.Plan.Ladder, LRs: lrs, Selection: vi.SelectOracle, Score: score, Seed: job.Seed,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", m.kind, err)
	}
	for i, snap := range res.Best {
		start := time.Now()
		draws, _ := vi.Draw(snap, rand.New(rand.NewPCG(job.Seed, 0xd4a5)), nDraws)
		secs := snap.Seconds + time.Since(start).Seconds()
		if err := emit(Point{
			Slot:        Slot{Kind: "steps", Budget: job.Plan.Ladder[i]},
			Draws:       draws,
			Seconds:     secs,
			Diagnostics: map[string]float64{"lr": snap.LR},
			Settings:    map[string]any{"lrs": lrs, "selection": "oracle_sw2", "draws": nDraws},
		}); err != nil {
			return err
		}
	}
	return nil
}
