package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/afin-bench/afin/baselines/vi"
)

// frviSNISMethod refines an FRVI proposal, fitted with a fixed number of
// steps (the variant: 1k, 5k, 10k), by SNIS at a ladder of proposal
// counts. The learning rate is picked as for FRVI (oracle SW2 over the
// profile's rates). It also emits the proposal itself (stage "proposal",
// the paper's star). Seconds include the chosen fit.
type frviSNISMethod struct{}

func newFRVISNISMethod(MethodEnv) (Method, error) { return frviSNISMethod{}, nil }

func (frviSNISMethod) Name() string { return "frvi-snis" }

func (frviSNISMethod) Slots(p Plan) []Slot {
	return append(ladderSlots("proposals", p.Ladder), Slot{Stage: "proposal", Kind: "proposals", Budget: maxInt(p.Ladder)})
}

func (frviSNISMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	steps := optInt(job.Plan.Options, "steps", 1000)
	lrs := optFloats(job.Plan.Options, "lrs", []float64{1e-2})
	top := maxInt(job.Plan.Ladder)
	var best *frviFit
	for _, lr := range lrs {
		fit, err := fitFRVI(ctx, job, lr, steps, top)
		if err != nil {
			return err
		}
		if fit != nil && (best == nil || fit.score < best.score) {
			best = fit
		}
	}
	if best == nil {
		return fmt.Errorf("frvi-snis: every learning rate %v diverged within %d steps", lrs, steps)
	}
	settings := map[string]any{"steps": steps, "lr": best.lr, "lrs": lrs, "selection": "oracle_sw2"}
	if err := emit(Point{
		Slot:        Slot{Stage: "proposal", Kind: "proposals", Budget: top},
		Draws:       best.draws,
		Seconds:     best.seconds,
		Diagnostics: map[string]float64{"lr": best.lr},
		Settings:    settings,
	}); err != nil {
		return err
	}
	fitSecs := best.fitSecs
	for i, n := range job.Plan.Ladder {
		if err := ctx.Err(); err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(job.Seed, 0x5515+uint64(i)))
		start := time.Now()
		draws, info, err := vi.SNIS(job.Task, best.q, rng, n)
		if err != nil {
			return fmt.Errorf("frvi-snis with %d proposals: %w", n, err)
		}
		secs := fitSecs + time.Since(start).Seconds()
		if err := emit(Point{
			Slot:        Slot{Kind: "proposals", Budget: n},
			Draws:       draws,
			Seconds:     secs,
			Diagnostics: snisDiagnostics(info),
			Settings:    settings,
		}); err != nil {
			return err
		}
	}
	return nil
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
