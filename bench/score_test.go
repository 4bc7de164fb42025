package bench

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// TestReferenceScoreShortcuts: the reference's side of the energy gap
// computed once per task, and a point's SW2 handed on by its method
// (Point.Scored), give the very records that computing every metric of
// every point afresh gives: energy_gap is posterior.EnergyGap to the bit,
// SW2 is posterior.SW2 of the point's draws, also for an SNIS star and
// its twin (methods.Point.Twin) scored in one pass.
func TestReferenceScoreShortcuts(t *testing.T) {
	s := Setting{Suite: "snis", Key: "diag_gaussian/bernoulli_logit/easy", Prior: factor.DiagGaussianFamily,
		Likelihood: factor.BernoulliLogitFamily, D: 4, N: 64, Design: "iid"}
	task, err := SimTask(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	rs := &session{buildTask: SimTask, reference: fakeReference, cfg: &Config{Profile: profiles["smoke"]}}
	_, tg, err := byReference{}.target(context.Background(), rs, s, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref := tg.(*referenceTarget).post
	job := &methods.Job{}
	tg.job(job, nil)
	rng := rand.New(rand.NewPCG(3, 3))
	for i, n := range []int{200, 1000, 5000} {
		z := make([]float64, n*task.D)
		lq := make([]float64, n)
		for k := range z {
			z[k] = 0.5 * rng.NormFloat64()
			lq[k/task.D] -= 2 * z[k] * z[k]
		}
		snis, _, err := posterior.SNISDraws(context.Background(), task.Packed(), &posterior.Draws{D: task.D, Z: z}, lq)
		if err != nil {
			t.Fatal(err)
		}
		p := methods.Point{Slot: methods.Slot{Kind: methods.KindProposals, Budget: n}, Draws: snis}
		if i == 1 {
			v := job.Score(snis)
			p.Scored = &v
		}
		if i == 2 {
			// A star and its twin: the star's record is scored with the
			// twin's SW2, which the twin's record then takes.
			props := &posterior.Draws{D: task.D, Z: z}
			star := methods.Point{Slot: methods.Slot{Stage: methods.StageProposal, Kind: methods.KindProposals, Budget: n}, Draws: props, Twin: snis}
			var rec records.Record
			if err := tg.score(&rec, task, nil, star); err != nil {
				t.Fatal(err)
			}
			if got, want := float64(rec.SW2), posterior.SW2(props, ref.Draws, tg.(*referenceTarget).sw2Seed); got != want {
				t.Errorf("star of %d proposals: SW2 %.17g, of its draws %.17g", n, got, want)
			}
		}
		var rec records.Record
		if err := tg.score(&rec, task, nil, p); err != nil {
			t.Fatal(err)
		}
		if got, want := float64(rec.Diagnostics["energy_gap"]), posterior.EnergyGap(task, snis, ref.Draws); got != want {
			t.Errorf("%d proposals: energy_gap %.17g, EnergyGap %.17g", n, got, want)
		}
		if got, want := float64(rec.SW2), posterior.SW2(snis, ref.Draws, tg.(*referenceTarget).sw2Seed); got != want {
			t.Errorf("%d proposals: SW2 %.17g, of its draws %.17g", n, got, want)
		}
	}
	tg.(*referenceTarget).twins.Range(func(k, _ any) bool {
		t.Errorf("a twin's SW2 left behind after its point was scored")
		return false
	})
}
