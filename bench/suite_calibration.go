package bench

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/afin-bench/afin/calibration"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/suite"
)

// The calibration suite (issue 18) runs simulation-based calibration over
// the 16 prior–likelihood pairs at the three difficulty tiers of the
// synthetic suite: each (setting, replicate) is a simulated task whose true
// z is known, each method's draws give the ranks of package calibration,
// and one record per (setting, replicate, method) keeps them in its
// diagnostics (m1, m2 and sw2 are null: there is no reference). The
// report pools the records of a tier into rank-ECDF bands, coverage and
// z-scores. A record's seed is the task replicate; --seeds does not apply.

// CalibrationSuite is the suite's name.
const CalibrationSuite = suite.Calibration

// calibrationSuite scores its points by the ranks of the task's true z:
// no reference posterior, one record of ranks per (setting, replicate,
// method).
type calibrationSuite struct {
	BaseSuite
	info suite.Info
}

func init() { Register(calibrationSuite{info: builtinInfo(CalibrationSuite)}) }

func (s calibrationSuite) Info() suite.Info { return s.info }

func (calibrationSuite) Settings(*Profile) ([]Setting, error) { return CalibrationSettings(), nil }

// Seeds are the task replicates 0, 1, … up to the most tasks a method
// runs on; --seeds does not apply.
func (calibrationSuite) Seeds(p *Profile, want []uint64) ([]uint64, string) {
	many, _ := calibrationTasksOf(p)
	seeds := make([]uint64, many)
	for i := range seeds {
		seeds[i] = uint64(i)
	}
	note := ""
	if len(want) > 0 {
		note = "--seeds is ignored by the calibration suite: its seeds are task replicates"
	}
	return seeds, note
}

// Plans are the suite's methods under p, each on its number of task
// replicates (Plan.Tasks). The opt-in afin-imh and auto run when
// --methods names them.
func (calibrationSuite) Plans(p *Profile) []Plan {
	many, few := calibrationTasksOf(p)
	o := p.options(CalibrationDraws)
	// ELBO selection: SBC must not look at the truth to pick a rate.
	o.VI.Selection = methods.DefaultOptions().VI.Selection
	o.NUTS.Chains = 1
	plan := func(m string, budget, tasks int, optIn bool) Plan {
		return Plan{Method: m, Ladder: []int{budget}, Options: o, OptIn: optIn, Tasks: tasks}
	}
	return []Plan{
		plan(methods.AFIN, CalibrationDraws, many, false),
		plan(methods.AFINSNIS, 10*CalibrationDraws, many, false),
		plan(methods.FRVI, slices.Max(p.FRVISteps), many, false),
		plan(methods.NUTS, 4*CalibrationDraws, few, false),
		plan(methods.AFINIMH, 4*CalibrationDraws, many, true),
		plan(methods.Auto, 10*CalibrationDraws, few, true),
	}
}

func (calibrationSuite) scoring() scoring { return byRanks{} }

// CalibrationDraws is L, the posterior draws each rank is taken among.
const CalibrationDraws = 100

// calibrationTasks is tasks per setting per profile: AFIN, AFIN+SNIS and
// FRVI on many, NUTS (the calibrated control) on fewer.
var calibrationTasks = map[string][2]int{"smoke": {2, 2}, "quick": {8, 4}, "paper": {100, 25}}

// calibrationTasksOf is p's (many, few) task counts (16 and 8 for a
// profile without its own).
func calibrationTasksOf(p *Profile) (many, few int) {
	if t, ok := calibrationTasks[p.Name]; ok {
		return t[0], t[1]
	}
	return 16, 8
}

// CalibrationSettings are the synthetic suite's 48 settings under the
// calibration suite's name (the same tasks for the same replicate).
func CalibrationSettings() []Setting { return syntheticGrid(CalibrationSuite) }

// byRanks scores a method's one point by the ranks of the task's true z
// among its draws (package calibration); m1, m2 and sw2 are null.
type byRanks struct{}

func (byRanks) skipsProposals() bool { return true }

func (byRanks) target(_ context.Context, r *session, s Setting, seed uint64) (*factor.Task, target, error) {
	task, err := r.buildTask(s, seed)
	if err != nil {
		return nil, nil, fmt.Errorf("building task: %w", err)
	}
	return task, ranksTarget{}, nil
}

// ranksTarget is a task's true z.
type ranksTarget struct{}

func (ranksTarget) ref() records.RefInfo { return records.RefInfo{Kind: "true_z"} }

func (ranksTarget) job(*methods.Job, *unit) {}

// score: the ranks of each test quantity, and the method's diagnostics.
func (ranksTarget) score(rec *records.Record, task *factor.Task, u *unit, p methods.Point) error {
	ranks, err := calibration.Rank(task, p.Draws, CalibrationDraws, projection(task.D),
		streams.New(u.jobSeed(), streams.CalibrationRanks))
	if err != nil {
		return err
	}
	diag, err := p.Diagnostics.Numbers()
	if err != nil {
		return err
	}
	nan := records.Num(math.NaN())
	rec.M1, rec.M2, rec.SW2 = nan, nan, nan
	rec.Diagnostics = map[string]records.Num{}
	for k, v := range diag {
		rec.Diagnostics[k] = records.Num(v)
	}
	for k, v := range ranks.Numbers() {
		rec.Diagnostics[k] = records.Num(v)
	}
	return nil
}

// projection is the fixed random unit direction of the projection test
// quantity in dimension d (seeded by d alone, so every task and method of
// a tier shares it).
func projection(d int) []float64 {
	rng := streams.New(uint64(d), streams.CalibrationRanks)
	v := make([]float64, d)
	norm := 0.0
	for i := range v {
		v[i] = rng.NormFloat64()
		norm += v[i] * v[i]
	}
	for i := range v {
		v[i] /= math.Sqrt(norm)
	}
	return v
}
