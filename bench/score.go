package bench

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// scoring is how a suite turns a (setting, seed) into a task and the
// task's points into records: against a reference posterior (byReference,
// most suites), by the ranks of a known truth (calibration) or by
// held-out predictions (openml). The session does everything else.
type scoring interface {
	// skipsProposals: the SNIS proposal stars are neither run nor
	// scored, so a unit's slots are its method's own points.
	skipsProposals() bool
	// target builds the task of (s, seed) and what its points are scored
	// against. An error with a task is one of the target: the units fail
	// with it and their failed records carry the task's size.
	target(ctx context.Context, r *session, s Setting, seed uint64) (*factor.Task, target, error)
}

// target scores the points of one task.
type target interface {
	// ref is what the task's records say they were scored against.
	ref() records.RefInfo
	// job adds to a unit's job what the target gives it (the reference
	// draws that score VI's learning rates).
	job(j *methods.Job, u *unit)
	// score fills rec, whose key, families, size, timing, reference and
	// provenance are set, from point p of unit u.
	score(rec *records.Record, task *factor.Task, u *unit, p methods.Point) error
}

// byReference scores every point, SNIS proposal stars included, against
// the task's reference posterior (Suite.Reference).
type byReference struct{}

func (byReference) skipsProposals() bool { return false }

func (byReference) target(ctx context.Context, r *session, s Setting, seed uint64) (*factor.Task, target, error) {
	task, err := r.buildTask(s, seed)
	if err != nil {
		return nil, nil, fmt.Errorf("building task: %w", err)
	}
	ref, err := r.reference(ctx, task, r.cfg.Profile)
	if err != nil {
		return task, nil, fmt.Errorf("reference: %w", err)
	}
	sw2Seed := hashString("sw2", s.Key, strconv.FormatUint(seed, 10))
	return task, &referenceTarget{post: ref, sw2Seed: sw2Seed, sw2Ref: posterior.NewSW2Ref(ref.Draws, sw2Seed),
		refEnergy: sync.OnceValue(func() float64 { return posterior.MeanEnergy(task, ref.Draws) })}, nil
}

// referenceTarget is a task's reference posterior.
type referenceTarget struct {
	post    *Reference
	sw2Seed uint64
	// sw2Ref holds the reference's sorted projections on the SW2
	// directions, made once for every point of every unit of the task.
	sw2Ref *posterior.SW2Ref
	// refEnergy is E_ref[−log p̃], the reference's side of every energy
	// gap of the task: 5·10⁴ evaluations of p̃, once rather than per point.
	refEnergy func() float64
	// twins holds the SW2 of a star's twin (methods.Point.Twin), scored
	// with the star, until the twin's own point comes.
	twins sync.Map // *posterior.Draws → float64
}

// sw2 is p's SW2 against the reference: the method's own score when it
// has one, the one computed with the star that p is the twin of, or
// computed now (with p's twin, when p is a star that has one).
func (t *referenceTarget) sw2(p methods.Point) float64 {
	if p.Scored != nil {
		return *p.Scored // job.Score of these draws
	}
	if v, ok := t.twins.LoadAndDelete(p.Draws); ok {
		return v.(float64)
	}
	if p.Twin == nil {
		return t.sw2Ref.SW2(p.Draws)
	}
	v := t.sw2Ref.Shared([]*posterior.Draws{p.Draws, p.Twin})
	t.twins.Store(p.Twin, v[1])
	return v[0]
}

func (t *referenceTarget) ref() records.RefInfo { return t.post.Info }

func (t *referenceTarget) job(j *methods.Job, _ *unit) {
	j.Score = t.sw2Ref.SW2
	j.ScoreBound = func(mean, cov []float64) float64 { return posterior.SW2LowerBound(mean, cov, t.post.Draws, t.sw2Seed) }
}

// score: M1, M2, SW2 and the marginal errors against the reference, the
// method's diagnostics, the SNIS energy gap and the point's flags.
func (t *referenceTarget) score(rec *records.Record, task *factor.Task, _ *unit, p methods.Point) error {
	ref := t.post
	mean, cov := p.Draws.MeanCov()
	m1, m2 := momentErrors(p.Draws, mean, cov, ref)
	rec.M1, rec.M2 = records.Metric(m1), records.Metric(m2)
	rec.Marginals = marginalErrors(mean, cov, ref)
	rec.SW2 = records.Metric(t.sw2(p))
	diag, err := p.Diagnostics.Numbers()
	if err != nil {
		return err
	}
	if p.Draws.Weighted() {
		// Table 9's energy gap: expected −log p̃ under the SNIS
		// approximation minus that under the reference.
		gap := math.NaN()
		if p.Draws.D == ref.Draws.D {
			gap = posterior.MeanEnergy(task, p.Draws) - t.refEnergy() // EnergyGap, to the bit
		}
		diag["energy_gap"] = gap
	}
	if len(diag) > 0 {
		rec.Diagnostics = map[string]records.Num{}
		for k, v := range diag {
			rec.Diagnostics[k] = records.Num(v)
		}
	}
	setFlags(rec, p.Diagnostics.Flags)
	return nil
}

// setFlags copies a point's flags into its record: every raised flag by
// name and in words, and the two fields older records carry.
func setFlags(rec *records.Record, f *methods.Flags) {
	if f == nil {
		return
	}
	rec.Flags, rec.Warnings = f.Raised(), f.Warnings
	rec.OutsideSupport = f.OutsideSupport
	if f.Converged != nil && !*f.Converged {
		rec.NotConverged = f.ConvergenceReason
		if rec.NotConverged == "" {
			rec.NotConverged = "not converged"
		}
	}
}
