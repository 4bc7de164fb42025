package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/posterior"
)

// frviMethod is full-rank Gaussian VI at a ladder of optimisation steps
// with the paper's learning-rate protocol: every rate of the profile is
// fitted, and at each budget the rate whose q is closest to the reference
// (SW2, the paper's "best result at each optimization budget") is kept.
// Each (rate, budget) is its own timed fit, so a point's seconds are
// exactly the optimisation to that budget plus drawing from q; the rates
// that lost the selection are not charged.
type frviMethod struct{}

func newFRVIMethod(MethodEnv) (Method, error) { return frviMethod{}, nil }

func (frviMethod) Name() string { return "frvi" }

func (frviMethod) Slots(p Plan) []Slot { return ladderSlots("steps", p.Ladder) }

func (frviMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	lrs := optFloats(job.Plan.Options, "lrs", []float64{1e-2})
	nDraws := optInt(job.Plan.Options, "draws", 2000)
	for _, steps := range job.Plan.Ladder {
		var best *frviFit
		for _, lr := range lrs {
			fit, err := fitFRVI(ctx, job, lr, steps, nDraws)
			if err != nil {
				return err
			}
			if fit == nil {
				continue // diverged at this rate
			}
			if best == nil || fit.score < best.score {
				best = fit
			}
		}
		if best == nil {
			return fmt.Errorf("frvi: every learning rate %v diverged within %d steps", lrs, steps)
		}
		err := emit(Point{
			Slot:        Slot{Kind: "steps", Budget: steps},
			Draws:       best.draws,
			Seconds:     best.seconds,
			Diagnostics: map[string]float64{"lr": best.lr},
			Settings:    map[string]any{"lrs": lrs, "selection": "oracle_sw2", "draws": nDraws},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// frviFit is one timed FRVI fit at one learning rate and step count.
type frviFit struct {
	q       *vi.Gaussian
	draws   *posterior.Draws
	seconds float64 // fit plus draws
	fitSecs float64 // fit only
	lr      float64
	score   float64
}

// fitFRVI fits q with steps Adam steps at lr and draws n samples from it,
// timing both. A diverged fit returns nil and no error.
func fitFRVI(ctx context.Context, job *Job, lr float64, steps, n int) (*frviFit, error) {
	start := time.Now()
	qs, err := vi.FitFRVI(ctx, job.Task, vi.FRVIConfig{LR: lr, Budgets: []int{steps}, Seed: job.Seed})
	if err != nil {
		if errors.Is(err, vi.ErrDiverged) {
			return nil, nil
		}
		return nil, fmt.Errorf("frvi at lr %g: %w", lr, err)
	}
	if len(qs) == 0 || qs[0] == nil {
		return nil, nil
	}
	fitSecs := time.Since(start).Seconds()
	rng := rand.New(rand.NewPCG(job.Seed, 0xd4a5))
	draws, _ := vi.Draw(qs[0], rng, n)
	secs := time.Since(start).Seconds()
	score := job.Score(draws)
	if math.IsNaN(score) {
		score = math.Inf(1)
	}
	return &frviFit{q: qs[0], draws: draws, seconds: secs, fitSecs: fitSecs, lr: lr, score: score}, nil
}
