package bench

import (
	"context"
	"fmt"

	"github.com/afin-bench/afin/baselines/nuts"
)

// nutsMethod is short-run NUTS: for each ladder entry an independent
// single chain with the profile's warm-up and that many post-warm-up
// draws (the paper's "independent short-run NUTS chains with increasing
// post-warmup sample budgets"). Seconds are warm-up plus sampling.
type nutsMethod struct{}

func newNUTSMethod(MethodEnv) (Method, error) { return nutsMethod{}, nil }

func (nutsMethod) Name() string { return "nuts" }

func (nutsMethod) Slots(p Plan) []Slot { return ladderSlots("draws", p.Ladder) }

func (nutsMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	warmup := optInt(job.Plan.Options, "warmup", 500)
	d := job.Task.D
	for i, draws := range job.Plan.Ladder {
		cfg := nuts.Config{
			Warmup: warmup,
			Draws:  draws,
			Chains: 1,
			Seed:   job.Seed + uint64(i)*0x9e3779b97f4a7c15,
			Init:   make([]float64, d),
			Jitter: 1,
		}
		res, err := nuts.Sample(ctx, job.Task, d, cfg)
		if err != nil {
			return fmt.Errorf("nuts with %d draws: %w", draws, err)
		}
		err = emit(Point{
			Slot:    Slot{Kind: "draws", Budget: draws},
			Draws:   res.Draws(),
			Seconds: res.Seconds,
			Diagnostics: map[string]float64{
				"divergences": float64(res.Divergences),
				"accept_rate": res.AcceptRate,
				"step_size":   res.StepSize,
				"grad_evals":  float64(res.GradEvals),
			},
			Settings: map[string]any{"warmup": warmup, "chains": 1},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// optInt reads an integer option written by profiles.go.
func optInt(opts map[string]any, key string, def int) int {
	if v, ok := opts[key].(int); ok {
		return v
	}
	return def
}

func optFloat(opts map[string]any, key string, def float64) float64 {
	if v, ok := opts[key].(float64); ok {
		return v
	}
	return def
}

func optFloats(opts map[string]any, key string, def []float64) []float64 {
	if v, ok := opts[key].([]float64); ok {
		return v
	}
	return def
}
